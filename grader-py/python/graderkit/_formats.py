"""verifiers 0.3.1's legacy parsers: ``Parser``, ``XMLParser``, ``ThinkParser`` and
``MaybeThinkParser``, with the same names, arguments and results (``verifiers.legacy.parsers``;
0.4.0 and later ship none).

The text work (sections, answers, format scores) is grader-core's ``format`` module: linear in
the text where verifiers' lazy regular expression tries every position. What stays here is
verifiers' own reading of chat messages (a dict's ``"role"`` and ``"content"`` or an object's
attributes, content parts joined), so that a completion reaches the parser as it reaches
verifiers'.

Where these differ from verifiers, on purpose:

- a message whose text holds a lone surrogate cannot be judged: it has no section and no
  answer, and its format scores 0 (verifiers' format reward gives any message at least 0.2);
- a tag name must be one (no whitespace, ``<``, ``>``, ``/`` or regular-expression
  metacharacters) and a parser needs a field: ``ValueError`` where verifiers builds a broken
  expression or fails later;
- the parsers log no warning about ``<think>`` tags, and their reward functions pickle.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from types import SimpleNamespace
from typing import Any

from graderkit import _native

#: A completion: a string, or chat messages (dicts or objects with ``role`` and ``content``).
Messages = Any


def _identity(text: str) -> str:
    return text


def _field_value(message: Any, field: str, default: Any = None) -> Any:
    if isinstance(message, dict):
        return message.get(field, default)
    return getattr(message, field, default)


def _content_text(content: Any) -> str:
    """verifiers' ``Parser._content_to_text``: a string, or the text parts of a list joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        chunks: list[str] = []
        for part in content:
            if isinstance(part, dict):
                if part.get("type") == "text":
                    text = part.get("text")
                    if isinstance(text, str):
                        chunks.append(text)
                continue
            text_attr = getattr(part, "text", None)
            if isinstance(text_attr, str):
                chunks.append(text_attr)
        return " ".join(chunks).strip()
    return ""


def _message_text(message: Any) -> str:
    """The text of one message, as verifiers' ``XMLParser`` and format rewards read it."""
    content = message.get("content", "") if isinstance(message, dict) else (message.content or "")
    return _content_text(content)


def _check_answerable(completion: Messages) -> None:
    if completion is None or isinstance(completion, (bytes, bytearray)):
        raise TypeError(
            f"completion must be a str or a list of chat messages, not {type(completion).__name__}"
        )


def _with_role(completion: Messages, role: str) -> list[Any]:
    if completion is None or isinstance(completion, (str, bytes, bytearray)):
        # verifiers would read a string's characters as messages and score it 0.0.
        raise TypeError(
            f"completion must be a list of chat messages, not {type(completion).__name__}"
        )
    return [message for message in completion if _field_value(message, "role") == role]


class Parser:
    """verifiers' ``Parser``: ``parse`` returns ``extract_fn(text)``, ``parse_answer`` parses a
    string or the last assistant message of a conversation."""

    def __init__(self, extract_fn: Callable[[str], str] = _identity) -> None:
        self.logger = logging.getLogger(f"graderkit.{type(self).__name__}")
        self.extract_fn = extract_fn

    def parse(self, text: str) -> Any:
        """``extract_fn(text)``."""
        return self.extract_fn(text)

    def _message_field(self, message: Any, field: str, default: Any = None) -> Any:
        return _field_value(message, field, default)

    def _content_to_text(self, content: Any) -> str:
        return _content_text(content)

    def get_assistant_messages(self, completion: Messages) -> list[Any]:
        """The messages of ``completion`` whose role is ``assistant``."""
        return _with_role(completion, "assistant")

    def get_system_messages(self, completion: Messages) -> list[Any]:
        """The messages of ``completion`` whose role is ``system``."""
        return _with_role(completion, "system")

    def get_user_messages(self, completion: Messages) -> list[Any]:
        """The messages of ``completion`` whose role is ``user``."""
        return _with_role(completion, "user")

    def get_tool_messages(self, completion: Messages) -> list[Any]:
        """The messages of ``completion`` whose role is ``tool``."""
        return _with_role(completion, "tool")

    def parse_answer(self, completion: Messages) -> str | None:
        """``parse`` of a string, or of the last assistant message's text; ``None`` without an
        assistant message."""
        if isinstance(completion, str):
            return self.parse(completion)
        _check_answerable(completion)
        assistant = self.get_assistant_messages(completion)
        if not assistant:
            return None
        content = _field_value(assistant[-1], "content", "") or ""
        return self.parse(_content_text(content))

    def get_format_reward_func(self) -> Callable[..., float]:
        """A reward function that gives every completion 1.0 (verifiers' base parser)."""
        return _AlwaysOne()

    def __repr__(self) -> str:
        if self.extract_fn is _identity:
            return f"{type(self).__name__}()"
        return f"{type(self).__name__}(extract_fn={self.extract_fn!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.extract_fn,))


class XMLParser(Parser):
    """verifiers' ``XMLParser``: an answer made of tagged fields (``<reasoning>…</reasoning>``,
    ``<answer>…</answer>``), each a tag name or a tuple of alternatives whose first names it.

    >>> parser = XMLParser(["reasoning", ("code", "answer")])
    >>> parsed = parser.parse("<reasoning> 6 x 7 </reasoning><answer>42</answer>")
    >>> parsed.reasoning, parsed.code, parsed.answer
    ('6 x 7', None, '42')
    >>> parser.parse_answer([{"role": "assistant", "content": "<answer>42</answer>"}])
    '42'
    """

    def __init__(
        self,
        fields: Sequence[str | tuple[str, ...]],
        answer_field: str = "answer",
        extract_fn: Callable[[str], str] = _identity,
    ) -> None:
        super().__init__(extract_fn=extract_fn)
        if not isinstance(answer_field, str):
            raise TypeError(f"answer_field must be a str, not {type(answer_field).__name__}")
        self._fields: list[tuple[str, list[str]]] = []
        seen: set[str] = set()
        for field in fields:
            if isinstance(field, str):
                canonical, alternatives = field, [field]
            elif isinstance(field, tuple):
                if not field:
                    raise ValueError("Field tuple cannot be empty.")
                if not all(isinstance(alt, str) for alt in field):
                    raise TypeError("All alternatives in a tuple must be strings.")
                canonical, alternatives = field[0], list(field)
            else:
                raise TypeError("Each field must be a string or a tuple of strings.")
            if canonical in seen:
                raise ValueError(f"Duplicate field name: {canonical}")
            seen.add(canonical)
            self._fields.append((canonical, alternatives))
        self._answer_field = answer_field
        self._native = _native.XmlParser([alts for _, alts in self._fields], answer_field)

    @property
    def answer_field(self) -> str:
        """The tag whose section is the answer (``answer`` unless told otherwise)."""
        return self._answer_field

    @answer_field.setter
    def answer_field(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(f"answer_field must be a str, not {type(value).__name__}")
        self._native = _native.XmlParser([alts for _, alts in self._fields], value)
        self._answer_field = value

    def parse(self, text: str, strip: bool = True, last: bool = False) -> Any:
        """A namespace with one attribute per tag (every alternative of every field): the
        first section of that tag (with ``last``, the last one), whitespace around it removed,
        or ``None``. ``strip`` is verifiers' argument; a section never starts or ends with
        whitespace, so it changes nothing."""
        del strip  # verifiers' expression leaves no whitespace to strip
        return SimpleNamespace(**dict(self._native.parse(text, bool(last))))

    def parse_answer(self, completion: Messages) -> str | None:
        """The answer: in a string, the last section of the answer tag; in a conversation, the
        first section in the last assistant message that has one. ``None`` without one."""
        if isinstance(completion, str):
            return self._native.parse_answer(completion)
        _check_answerable(completion)
        texts = [_message_text(message) for message in self.get_assistant_messages(completion)]
        return self._native.parse_answer_messages(texts)

    def get_format_reward_func(self) -> Callable[[Messages], float]:
        """verifiers' format reward: for each assistant message 0.4 times the share of fields
        present (when one has a section), 0.2 for spacing, 0.2 when the message starts with a
        tag of the first field and 0.2 when it ends with one of the last; the mean over the
        assistant messages, 0.0 without any. The function pickles."""
        return _XmlFormatReward(self)

    def get_fields(self) -> list[str]:
        """The fields' names, in order."""
        return [canonical for canonical, _ in self._fields]

    def format(self, **kwargs: Any) -> str:
        """The fields written as tags, each value on its own line, in the parser's order; a
        field's value is taken under its name or, failing that, an alternative's.

        Raises ``ValueError`` for a field with no value.
        """
        parts = []
        for canonical, alternatives in self._fields:
            value = None
            if canonical in kwargs:
                value = kwargs[canonical]
            else:
                for alt in alternatives:
                    if alt in kwargs:
                        value = kwargs[alt]
                        break
            if value is None:
                raise ValueError(
                    f"Missing value for field '{canonical}' (allowed: {alternatives})"
                )
            parts.append(f"<{canonical}>\n{value}\n</{canonical}>")
        return "\n".join(parts)

    def get_format_str(self) -> str:
        """A description of the format, for a prompt: each field's tags around ``...``."""
        format_str = ""
        for canonical, alternatives in self._fields:
            if len(alternatives) > 1:
                options = " | ".join(alternatives)
                format_str += f"<[ {options} ]>\n...\n</[ {options} ]>\n"
            else:
                format_str += f"<{canonical}>\n...\n</{canonical}>\n"
        return format_str.strip()

    def _spec(self) -> list[str | tuple[str, ...]]:
        return [alts[0] if len(alts) == 1 and alts[0] == name else tuple(alts)
                for name, alts in self._fields]

    def __repr__(self) -> str:
        return f"XMLParser({self._spec()!r}, answer_field={self._answer_field!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self._spec(), self._answer_field, self.extract_fn))


class ThinkParser(Parser):
    """verifiers' ``ThinkParser``: the answer is what follows the last ``</think>``, stripped
    (empty without one), passed through ``extract_fn``.

    >>> ThinkParser().parse("<think>6 x 7</think>\\n 42 ")
    '42'
    """

    def parse(self, text: str) -> str:
        """``extract_fn`` of the text after the last ``</think>``, stripped; ``""`` without
        one."""
        return self.extract_fn(_native.think_answer(text))

    def get_format_reward_func(self) -> Callable[..., float]:
        """The share of the assistant messages that start with ``<think>``, hold one
        ``<think>`` and one ``</think>``, and have something after it; 0.0 without any. The
        function pickles."""
        return _ThinkFormatReward()


class MaybeThinkParser(Parser):
    """verifiers' ``MaybeThinkParser``: the text after the last ``</think>``, or all of it,
    stripped, passed through ``extract_fn``.

    >>> MaybeThinkParser().parse(" 42 ")
    '42'
    """

    def parse(self, text: str) -> str:
        """``extract_fn`` of the text after the last ``</think>`` (or the whole text),
        stripped."""
        return self.extract_fn(_native.maybe_think_answer(text))


class _RewardFunc:
    """A reward function that pickles (a closure does not), named as verifiers names it."""

    def __init__(self) -> None:
        self.__name__ = "format_reward_func"
        self.__qualname__ = "format_reward_func"


class _AlwaysOne(_RewardFunc):
    def __call__(self, completion: Messages, **kwargs: Any) -> float:
        return 1.0

    def __repr__(self) -> str:
        return "<format_reward_func of Parser>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_AlwaysOne, ())


class _XmlFormatReward(_RewardFunc):
    def __init__(self, parser: XMLParser) -> None:
        super().__init__()
        self._parser = parser

    def __call__(self, completion: Messages) -> float:
        messages = self._parser.get_assistant_messages(completion)
        return self._parser._native.format_reward([_message_text(m) for m in messages])

    def __repr__(self) -> str:
        return f"<format_reward_func of {self._parser!r}>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_XmlFormatReward, (self._parser,))


class _ThinkFormatReward(_RewardFunc):
    def __call__(self, completion: Messages, **kwargs: Any) -> float:
        messages = _with_role(completion, "assistant")
        return _native.think_format_reward([_message_text(m) for m in messages])

    def __repr__(self) -> str:
        return "<format_reward_func of ThinkParser>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_ThinkFormatReward, ())


def think_format_reward(messages: str | Iterable[Any]) -> float:
    """The share of the assistant messages that follow ``ThinkParser``'s format (verifiers'
    ``ThinkParser().get_format_reward_func()``): each starts with ``<think>``, holds one
    ``<think>`` and one ``</think>``, and has something after it. 0.0 without a message.

    ``messages`` is one message's text, or a list of texts (each an assistant message) and chat
    messages (only the assistant ones count).

    >>> think_format_reward(["<think>a</think>b", "no thinking"])
    0.5
    """
    if isinstance(messages, str):
        return _native.think_format_reward([messages])
    texts = []
    for message in messages:
        if isinstance(message, str):
            texts.append(message)
        elif _field_value(message, "role") == "assistant":
            texts.append(_message_text(message))
    return _native.think_format_reward(texts)
