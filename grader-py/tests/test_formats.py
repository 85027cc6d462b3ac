"""verifiers 0.3.1's legacy parsers, compared with verifiers' own classes called the same way:
on the cases of verifiers' tests, on generated texts and conversations (dicts, objects, content
parts), and on inputs built to hurt."""

from __future__ import annotations

import inspect
import pickle
import random
from types import SimpleNamespace
from typing import Any

import pytest

import graderkit
from graderkit import MaybeThinkParser, Parser, ThinkParser, XMLParser

BASIC = ["reasoning", "answer"]
ALTERNATIVES: list[Any] = ["reasoning", ("code", "answer")]

FIELDS: list[list[Any]] = [
    ["reasoning", "answer"],
    ["think", "answer"],
    ["reasoning", ("code", "answer")],
    [("answer", "result")],
    ["think", ("answer", "result")],
    ["answer"],
    ["code", "reasoning", "answer"],
    [("think", "reasoning"), "answer", ("result", "answer")],
    ["think", ("réponse", "answer")],
]

# Tags in several spellings, whitespace of Python's kinds and of neither, unicode.
PIECES = [
    "<answer>", "</answer>", "<answer>", "</answer>", "<reasoning>", "</reasoning>", "<think>",
    "</think>", "<think>", "</think>", "<result>", "</result>", "<code>", "</code>", "<answer >",
    "</ answer>", "<Answer>", "<", ">", "/", "</", " ", "  ", "\n", "\t", "\r\n", "\xa0",
    "\x1c", "\x1f", "\x85", "\u2028", "\u3000", "\u200b", "\ufeff", "42", "x", "é", "日本", "😀",
    "e\u0301", "answer", "think", "\u202e", "\x00", "<réponse>", "</réponse>",
]


def random_text(rng: random.Random) -> str:
    if rng.random() < 1 / 3:
        def space() -> str:
            return rng.choice(["", " ", "\n", "\n\n  ", "\x1c", "\u3000"])

        text = (
            f"{space()}<think>{space()}{rng.choice(['6 × 7', 'hm', '', '<answer>1</answer>'])}"
            f"{space()}</think>{space()}<answer>{space()}{rng.choice(['42', '', 'x y', '😀'])}"
            f"{space()}</answer>{space()}"
        )
        for _ in range(rng.randrange(3)):
            at = rng.randrange(len(text) + 1)
            text = text[:at] + rng.choice(PIECES) + text[at:]
        if rng.random() < 1 / 3:
            text = text[: rng.randrange(len(text) + 1)]
        return text
    return "".join(rng.choice(PIECES) for _ in range(rng.randrange(16)))


def random_conversation(rng: random.Random) -> list[Any]:
    """Messages as trainers and verifiers hand them over: dicts and objects, string contents,
    content parts, a missing or empty content, and other roles between."""
    messages: list[Any] = []
    for _ in range(rng.randrange(5)):
        role = rng.choice(["assistant", "assistant", "user", "system", "tool"])
        kind = rng.randrange(6)
        text = random_text(rng)
        if kind == 0:
            messages.append({"role": role, "content": text})
        elif kind == 1:
            messages.append(SimpleNamespace(role=role, content=text))
        elif kind == 2:
            parts = [{"type": "text", "text": text}, {"type": "image_url", "image_url": "x"},
                     SimpleNamespace(text=random_text(rng)), {"type": "text", "text": 7}]
            messages.append({"role": role, "content": parts})
        elif kind == 3:
            messages.append({"role": role, "content": None})
        elif kind == 4:
            messages.append({"role": role})
        else:
            messages.append(SimpleNamespace(role=role, content=None))
    return messages


def namespace(parsed: Any) -> dict[str, Any]:
    return vars(parsed)


def test_the_anchors_own_cases(verifiers: SimpleNamespace) -> None:
    """The cases of verifiers' tests/test_xml_parser.py and test_think_parser.py, and what
    those tests assert."""
    simple = (
        "\n        <reasoning>\n        Let me think about this problem step by step.\n"
        "        </reasoning>\n        <answer>\n        The final answer is 42.\n"
        "        </answer>\n        "
    )
    with_code = (
        "\n        <reasoning>\n        First, I need to understand the problem.\n"
        "        </reasoning>\n        <code>\n        def solve(): return 42\n        </code>\n"
        "        "
    )
    think = (
        "<think>\n        Let me think about this problem.\n        I need to consider multiple "
        "factors.\n        </think>\n        The final answer is 42."
    )
    ours, theirs = XMLParser(BASIC), verifiers.XMLParser(BASIC)
    assert namespace(ours.parse(simple)) == namespace(theirs.parse(simple)) == {
        "reasoning": "Let me think about this problem step by step.",
        "answer": "The final answer is 42.",
    }
    alt_ours, alt_theirs = XMLParser(ALTERNATIVES), verifiers.XMLParser(ALTERNATIVES)
    assert namespace(alt_ours.parse(with_code)) == namespace(alt_theirs.parse(with_code)) == {
        "reasoning": "First, I need to understand the problem.",
        "code": "def solve(): return 42",
        "answer": None,
    }
    for text, expected in [
        ("<reasoning>Only reasoning here</reasoning>", {"reasoning": "Only reasoning here",
                                                         "answer": None}),
        ("<reasoning></reasoning><answer></answer>", {"reasoning": "", "answer": ""}),
        ("<answer>  spaced content  </answer>", {"reasoning": None, "answer": "spaced content"}),
    ]:
        assert namespace(ours.parse(text)) == namespace(theirs.parse(text)) == expected
    conversation = [
        {"role": "assistant", "content": "<reasoning>Let me think</reasoning><answer>42</answer>"},
        {"role": "user", "content": "Are you sure?"},
        {"role": "assistant",
         "content": "<reasoning>Actually, let me reconsider</reasoning><answer>43</answer>"},
    ]
    assert ours.parse_answer(conversation) == theirs.parse_answer(conversation) == "43"
    two = "<answer>44</answer><reasoning>Not right.</reasoning><answer>45</answer>"
    assert ours.parse_answer(two) == theirs.parse_answer(two) == "45"
    # In a conversation, 0.3.1 reads a message's first answer (a later revision reads its last).
    one = [{"role": "assistant", "content": two}]
    assert ours.parse_answer(one) == theirs.parse_answer(one) == "44"
    none = [{"role": "assistant", "content": "<reasoning>Only reasoning here</reasoning>"}]
    assert ours.parse_answer(none) is theirs.parse_answer(none) is None
    reward, their_reward = ours.get_format_reward_func(), theirs.get_format_reward_func()
    good = [{"role": "assistant", "content": "<reasoning>Good</reasoning><answer>42</answer>"}]
    plain = [{"role": "assistant", "content": "Just plain text without XML"}]
    assert reward(good) == their_reward(good) == 1.0
    assert reward(plain) == their_reward(plain) == 0.2
    assert ours.get_fields() == theirs.get_fields() == ["reasoning", "answer"]
    assert ours.format(reasoning="r", answer="a") == theirs.format(reasoning="r", answer="a")
    assert alt_ours.format(reasoning="r", answer="x") == alt_theirs.format(reasoning="r", answer="x")
    assert alt_ours.get_format_str() == alt_theirs.get_format_str()

    t_ours, t_theirs = ThinkParser(), verifiers.ThinkParser()
    for text, expected in [
        (think, "The final answer is 42."),
        ("Just a simple answer without thinking tags.", ""),
        ("<think>First thought</think>\n        Some intermediate text.\n        "
         "<think>Second thought</think>\n        Final answer here.", "Final answer here."),
        ("<think>Some thinking</think>", ""),
        ("<think>\n        Thinking process here.\n        </think>\n        \n        "
         "Answer with spaces around it.\n        \n        ", "Answer with spaces around it."),
        ("<think>Calculating...</think>Result: 42", "Result: 42"),
    ]:
        assert t_ours.parse(text) == t_theirs.parse(text) == expected
    t_reward, t_their_reward = t_ours.get_format_reward_func(), t_theirs.get_format_reward_func()
    for texts, expected in [
        (["<think>Let me think</think>Final answer"], 1.0),
        (["Just an answer without thinking"], 0.0),
        (["<think>First</think><think>Second</think>Answer"], 0.0),
        (["<think>Only thinking</think>"], 0.0),
        (["<think>Good thinking</think>Good answer", "Bad answer without thinking",
          "<think>More thinking</think>Another good answer"], 2 / 3),
        ([], 0.0),
    ]:
        messages = [{"role": "assistant", "content": t} for t in texts]
        assert t_reward(messages) == t_their_reward(messages) == expected
        assert graderkit.think_format_reward(texts) == expected
    calc = [{"role": "assistant", "content": "<think>Let me calculate</think>The answer is 4"}]
    assert t_ours.parse_answer(calc) == t_theirs.parse_answer(calc) == "The answer is 4"
    m_ours, m_theirs = MaybeThinkParser(), verifiers.MaybeThinkParser()
    for text, expected in [
        ("<think>Let me think</think>Final answer", "Final answer"),
        ("  No thinking, just the answer.  ", "No thinking, just the answer."),
    ]:
        assert m_ours.parse(text) == m_theirs.parse(text) == expected


@pytest.mark.parametrize("seed", range(4))
def test_generated_texts_agree(verifiers: SimpleNamespace, seed: int) -> None:
    rng = random.Random(seed)
    differ = []
    answers = between = 0
    for _ in range(600):
        fields = rng.choice(FIELDS)
        answer_field = rng.choice(["answer", "answer", "result", "code", "missing"])
        ours = XMLParser(fields, answer_field=answer_field)
        theirs = verifiers.XMLParser(fields, answer_field=answer_field)
        text = random_text(rng)
        for strip in (True, False):
            for last in (False, True):
                a, b = namespace(ours.parse(text, strip, last)), namespace(
                    theirs.parse(text, strip=strip, last=last))
                if a != b:
                    differ.append(("parse", fields, text, strip, last, a, b))
        a, b = ours.parse_answer(text), theirs.parse_answer(text)
        answers += a is not None
        if a != b:
            differ.append(("parse_answer", fields, answer_field, text, a, b))
        conversation = random_conversation(rng)
        a, b = ours.parse_answer(conversation), theirs.parse_answer(conversation)
        if a != b:
            differ.append(("parse_answer messages", fields, conversation, a, b))
        for completion in (conversation, [{"role": "assistant", "content": text}]):
            a = ours.get_format_reward_func()(completion)
            b = theirs.get_format_reward_func()(completion)
            between += a not in (0.0, 0.2, 1.0)
            # A mean of several messages is summed compensated (Python 3.12's sum); 3.11's
            # plain sum may differ in the last bits.
            if a != pytest.approx(b, abs=1e-12):
                differ.append(("format_reward", fields, completion, a, b))
            a = ThinkParser().get_format_reward_func()(completion)
            b = verifiers.ThinkParser().get_format_reward_func()(completion)
            if a != pytest.approx(b, abs=1e-12):
                differ.append(("think_format_reward", completion, a, b))
        for ours_cls, theirs_cls in [(ThinkParser, verifiers.ThinkParser),
                                     (MaybeThinkParser, verifiers.MaybeThinkParser),
                                     (Parser, verifiers.Parser)]:
            for completion in (text, conversation):
                a = ours_cls().parse_answer(completion)
                b = theirs_cls().parse_answer(completion)
                if a != b:
                    differ.append((ours_cls.__name__, completion, a, b))
    assert not differ, differ[:5]
    assert answers > 30 and between > 50, (answers, between)


def test_deep_and_repeated_tags_agree(verifiers: SimpleNamespace) -> None:
    deep = "<answer>" * 10_000 + "x" + "</answer>" * 10_000
    deep_think = "<think>" * 10_000 + "x" + "</think>" * 10_000 + "y"
    repeated = "<answer> 1 </answer>\n" * 10_000
    unclosed = "<answer>" * 2_000
    stray = "</answer><answer>" * 10_000
    ours, theirs = XMLParser(["think", "answer"]), verifiers.XMLParser(["think", "answer"])
    for text in (deep, deep_think, repeated, unclosed, stray):
        for last in (False, True):
            assert namespace(ours.parse(text, last=last)) == namespace(
                theirs.parse(text, last=last))
        assert ours.parse_answer(text) == theirs.parse_answer(text)
        messages = [{"role": "assistant", "content": text}] * 2
        assert ours.get_format_reward_func()(messages) == theirs.get_format_reward_func()(messages)
        assert ThinkParser().parse(text) == verifiers.ThinkParser().parse(text)


def test_inputs_built_to_hurt_get_an_answer() -> None:
    parser = XMLParser(["think", ("answer", "result")])
    # Megabytes of opening tags and no closing one: verifiers' lazy expression tries every
    # start against the whole rest.
    unclosed = "<answer>" * 500_000
    assert parser.parse_answer(unclosed) is None
    assert parser.parse(unclosed, last=True).answer is None
    assert parser.get_format_reward_func()([{"role": "assistant", "content": unclosed}]) == 0.2
    many = "<result>7</result>" * 1_000_000
    assert XMLParser([("answer", "result")], answer_field="result").parse_answer(many) == "7"


def test_an_extract_fn_applies_as_in_verifiers(verifiers: SimpleNamespace) -> None:
    def upper(text: str) -> str:
        return text.upper()

    for ours, theirs in [(ThinkParser(upper), verifiers.ThinkParser(upper)),
                         (MaybeThinkParser(upper), verifiers.MaybeThinkParser(upper)),
                         (Parser(upper), verifiers.Parser(upper))]:
        for text in ["<think>a</think> b ", "no think", ""]:
            assert ours.parse(text) == theirs.parse(text)
            assert ours.parse_answer(text) == theirs.parse_answer(text)


def test_bad_fields_raise_as_in_verifiers(verifiers: SimpleNamespace) -> None:
    for fields, error in [
        ([()], ValueError),
        ([("a", 1)], TypeError),
        ([["a", "b"]], TypeError),
        ([1], TypeError),
        (["a", "a"], ValueError),
        (["a", ("a", "b")], ValueError),
    ]:
        with pytest.raises(error) as ours:
            XMLParser(fields)
        with pytest.raises(error) as theirs:
            verifiers.XMLParser(fields)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError) as ours:
        XMLParser(["reasoning"]).format()
    with pytest.raises(ValueError) as theirs:
        verifiers.XMLParser(["reasoning"]).format()
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("fields", [[], ["a.b"], ["ans|wer"], ["x y"], ["<a>"], [""]])
def test_fields_verifiers_accepts_but_cannot_parse_are_value_errors(fields: list[str]) -> None:
    # verifiers writes tag names into a regular expression unescaped, and a parser without a
    # field fails in its format reward.
    with pytest.raises(ValueError, match="xml_parser"):
        XMLParser(fields)


def test_non_strings_are_type_errors() -> None:
    with pytest.raises(TypeError, match="text must be a str"):
        XMLParser(BASIC).parse(None)  # type: ignore[arg-type]
    # verifiers would read bytes or a string given as messages item by item, and find none.
    with pytest.raises(TypeError, match="completion must be a str or a list of chat messages"):
        XMLParser(BASIC).parse_answer(b"<answer>1</answer>")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="completion must be a str or a list of chat messages"):
        ThinkParser().parse_answer(None)  # type: ignore[arg-type]
    for reward in (XMLParser(BASIC).get_format_reward_func(),
                   ThinkParser().get_format_reward_func()):
        with pytest.raises(TypeError, match="completion must be a list of chat messages"):
            reward("<reasoning>r</reasoning><answer>a</answer>")
    with pytest.raises(TypeError, match="text must be a str"):
        ThinkParser().parse(42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="answer_field must be a str"):
        XMLParser(BASIC, answer_field=None)  # type: ignore[arg-type]


def test_a_text_with_a_lone_surrogate_has_no_answer_and_scores_zero() -> None:
    parser = XMLParser(BASIC)
    text = "<reasoning>r</reasoning><answer>42\ud800</answer>"
    assert namespace(parser.parse(text)) == {"reasoning": None, "answer": None}
    assert parser.parse_answer(text) is None
    # The message that cannot be judged scores 0; the one before it still gives its answer.
    conversation = [
        {"role": "assistant", "content": "<reasoning>r</reasoning><answer>41</answer>"},
        {"role": "assistant", "content": text},
    ]
    assert parser.parse_answer(conversation) == "41"
    assert parser.get_format_reward_func()(conversation) == 0.5
    assert ThinkParser().parse("<think>\udfff</think>42") == ""
    assert MaybeThinkParser().parse("42\udfff") == ""
    assert graderkit.think_format_reward(["<think>a</think>b", "<think>a</think>\ud800"]) == 0.5


def test_the_answer_field_can_be_changed_as_in_verifiers(verifiers: SimpleNamespace) -> None:
    ours, theirs = XMLParser(["think", "result"]), verifiers.XMLParser(["think", "result"])
    text = "<think>t</think><result>7</result>"
    assert ours.parse_answer(text) is theirs.parse_answer(text) is None
    ours.answer_field = theirs.answer_field = "result"
    assert ours.parse_answer(text) == theirs.parse_answer(text) == "7"


def test_parsers_and_reward_functions_pickle() -> None:
    parser = XMLParser(ALTERNATIVES, answer_field="code")
    copy = pickle.loads(pickle.dumps(parser))
    assert repr(copy) == repr(parser) == (
        "XMLParser(['reasoning', ('code', 'answer')], answer_field='code')"
    )
    assert copy.parse_answer("<code>x</code>") == "x"
    messages = [{"role": "assistant", "content": "<reasoning>r</reasoning><code>c</code>"}]
    reward = pickle.loads(pickle.dumps(parser.get_format_reward_func()))
    assert reward(messages) == parser.get_format_reward_func()(messages) == 1.0
    think = pickle.loads(pickle.dumps(ThinkParser().get_format_reward_func()))
    assert think([{"role": "assistant", "content": "<think>a</think>b"}]) == 1.0
    for cls in (ThinkParser, MaybeThinkParser, Parser):
        assert pickle.loads(pickle.dumps(cls())).parse("<think>a</think> b") == cls().parse(
            "<think>a</think> b")
    assert pickle.loads(pickle.dumps(Parser().get_format_reward_func()))([]) == 1.0


def test_reward_functions_have_verifiers_names_and_parameters(verifiers: SimpleNamespace) -> None:
    # verifiers' rubrics name a reward by `__name__` and pass it the keywords its signature
    # takes.
    for ours, theirs in [
        (XMLParser(BASIC).get_format_reward_func(),
         verifiers.XMLParser(BASIC).get_format_reward_func()),
        (ThinkParser().get_format_reward_func(), verifiers.ThinkParser().get_format_reward_func()),
        (Parser().get_format_reward_func(), verifiers.Parser().get_format_reward_func()),
    ]:
        assert ours.__name__ == theirs.__name__ == "format_reward_func"
        ours_params = [(p.name, p.kind) for p in inspect.signature(ours).parameters.values()]
        theirs_params = [(p.name, p.kind) for p in inspect.signature(theirs).parameters.values()]
        assert ours_params == theirs_params


def test_classes_have_a_repr() -> None:
    assert repr(ThinkParser()) == "ThinkParser()"
    assert repr(MaybeThinkParser()) == "MaybeThinkParser()"
    assert repr(XMLParser(BASIC)) == "XMLParser(['reasoning', 'answer'], answer_field='answer')"
    assert "format_reward_func" in repr(XMLParser(BASIC).get_format_reward_func())


@pytest.mark.parametrize("fields", FIELDS, ids=str)
def test_fields_formats_and_descriptions_are_verifiers(verifiers: SimpleNamespace,
                                                       fields: list[Any]) -> None:
    ours, theirs = XMLParser(fields), verifiers.XMLParser(fields)
    assert ours.get_fields() == theirs.get_fields()
    assert ours.get_format_str() == theirs.get_format_str()
    names = [f if isinstance(f, str) else f[-1] for f in fields]
    values = {name: f"value of {name}" for name in names}
    assert ours.format(**values) == theirs.format(**values)
    written = ours.format(**values)
    # What format writes, parse reads back (under each field's name).
    parsed = ours.parse(written)
    for field in fields:
        name = field if isinstance(field, str) else field[0]
        assert getattr(parsed, name) is not None
