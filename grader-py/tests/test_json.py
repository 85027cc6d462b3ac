"""JSON answers: promptfoo's ``is-json``, ``contains-json`` and JSON equality, and JSON Schema
checks compared with Python's ``jsonschema`` on the JSON-Schema-Test-Suite (the suite
``jsonschema`` itself runs) and on generated documents, alone and inside text."""

from __future__ import annotations

import json
import math
import pickle
import random
from pathlib import Path
from typing import Any

import pytest
from jsonschema import exceptions, validators

import graderkit
from graderkit import JsonSchema, SchemaMatch

SUITE = Path(__file__).resolve().parents[2] / "tests" / "data" / "json-schema-test-suite"
DRAFTS = {"draft7": validators.Draft7Validator, "draft2020-12": validators.Draft202012Validator}


def suite_cases(draft: str) -> list[tuple[str, Any, Any, bool]]:
    cases = []
    for file in sorted((SUITE / draft).glob("*.json")):
        for group in json.loads(file.read_text(encoding="utf-8")):
            for test in group["tests"]:
                where = f"{draft}/{file.name}: {group['description']}: {test['description']}"
                cases.append((where, group["schema"], test["data"], test["valid"]))
    return cases


def python_verdict(cls: Any, schema: Any, instance: Any) -> Any:
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError:
        return "invalid schema"
    return cls(schema).is_valid(instance)


def our_verdict(schema: Any, instance: Any, draft: str | None) -> Any:
    try:
        compiled = JsonSchema(schema, draft=draft)
    except ValueError:
        return "invalid schema"
    result = graderkit.matches_schema(json.dumps(instance), compiled)
    assert result.json
    # Whatever fails is named, and says where in the value.
    assert result.matched == (not result.mismatches), result
    return result.matched


@pytest.mark.parametrize("draft", sorted(DRAFTS))
def test_the_json_schema_test_suite_agrees_with_jsonschema(draft: str) -> None:
    cases = suite_cases(draft)
    assert len(cases) > 500
    passed, differ = 0, []
    for where, schema, instance, valid in cases:
        theirs = python_verdict(DRAFTS[draft], schema, instance)
        if theirs != valid:
            continue  # a case Python's jsonschema does not pass itself
        passed += 1
        ours = our_verdict(schema, instance, draft)
        if ours != theirs:
            differ.append(f"{where}: python {theirs}, ours {ours}")
    assert passed > len(cases) * 9 // 10
    assert not differ, "\n".join(differ[:10])


SCHEMAS: list[Any] = [
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 8},
            "age": {"type": "integer", "minimum": 0, "exclusiveMaximum": 150},
            "tags": {"type": "array", "items": {"enum": ["a", "b", "é"]}, "uniqueItems": True},
        },
        "required": ["name"],
        "additionalProperties": False,
    },
    {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "array",
        "items": [{"type": "number"}, {"type": "string"}],
        "additionalItems": {"type": "boolean"},
        "minItems": 1,
    },
    {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "prefixItems": [{"type": "number"}, {"type": "string"}],
        "items": {"type": "boolean"},
        "contains": {"const": True},
    },
    {"oneOf": [{"type": "number", "multipleOf": 0.5}, {"type": "string", "pattern": "^[a-z]+$"},
               {"type": "null"}]},
    {
        "$defs": {"node": {"type": "object", "properties": {
            "v": {"type": "number"}, "next": {"$ref": "#/$defs/node"}}, "required": ["v"]}},
        "$ref": "#/$defs/node",
    },
    {"anyOf": [{"type": "integer"}, {"not": {"type": ["object", "array"]}}], "format": "email"},
    True,
    False,
]


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(5 if depth > 3 else 7)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice([0.0, -0.5, 1.0, 1.5, 2.5, 149.0, 150.0, 1e21, 0.1])
    if kind == 3:
        return rng.choice([0, 1, -7, 42, 149, 150])
    if kind == 4:
        return rng.choice(["", "a", "Ada", "abc", "ABC", "é😀", "a b", "toolongname"])
    if kind == 5:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = ["name", "age", "tags", "v", "next", "x", "a"]
    return {rng.choice(keys): random_value(rng, depth + 1) for _ in range(rng.randrange(4))}


def test_generated_documents_agree_with_jsonschema() -> None:
    rng = random.Random(0x5C4E3A)
    differ, valid = [], 0
    compiled = [JsonSchema(schema) for schema in SCHEMAS]
    for _ in range(2000):
        i = rng.randrange(len(SCHEMAS))
        instance = random_value(rng)
        if rng.random() < 0.2:
            instance = {"name": rng.choice(["a", "Ada", "é😀"]), "age": rng.choice([0, 36, 150])}
        cls = validators.validator_for(SCHEMAS[i], default=validators.Draft202012Validator)
        theirs = cls(SCHEMAS[i]).is_valid(instance)
        ours = graderkit.matches_schema(json.dumps(instance), compiled[i])
        # A schema given as a Python value is compiled for the call, with the same verdict.
        assert graderkit.matches_schema(json.dumps(instance), SCHEMAS[i]).matched == ours.matched
        valid += theirs
        if ours.matched != theirs:
            differ.append((SCHEMAS[i], instance, theirs, ours))
    assert not differ, differ[:5]
    assert 200 < valid < 1800, valid


def test_the_first_matching_object_in_a_text_is_jsonschema_s_first_valid_one() -> None:
    rng = random.Random(0x7EC7)
    schema = SCHEMAS[0]
    validator = validators.Draft202012Validator(schema)
    compiled = JsonSchema(schema)
    matched = 0
    for _ in range(400):
        text = rng.choice(["", "Voilà : ", "```json\n", "Résultat 😀 "])
        objects: list[tuple[int, int, Any]] = []
        for _ in range(rng.randrange(4)):
            doc = {"name": rng.choice(["Ada", "", "Zoé"]), "age": rng.choice([1, -1])}
            if rng.random() < 0.3:
                doc = {"other": rng.choice([1, "two", None])}
            written = json.dumps(doc, ensure_ascii=rng.random() < 0.5)
            objects.append((len(text), len(text) + len(written), doc))
            text += written + rng.choice([" and ", "\n", " ", ""])
        result = graderkit.contains_schema_match(text, compiled)
        expected = next(((s, e) for s, e, doc in objects if validator.is_valid(doc)), None)
        assert result.span == expected, text
        assert result.matched == (expected is not None)
        assert result.json == bool(objects)
        if result.span is not None:
            start, end = result.span
            assert validator.is_valid(json.loads(text[start:end]))
            matched += 1
        elif objects:
            assert result.mismatches, text
    assert 50 < matched < 350, matched


def strict_json(text: str) -> bool:
    """``JSON.parse``'s validity, by Python's json with NaN and the infinities refused."""
    def refuse(name: str) -> Any:
        raise ValueError(name)

    try:
        json.loads(text, parse_constant=refuse)
    except ValueError:
        return False
    return True


PIECES = ["{", "}", "[", "]", '"', '"a"', ":", ",", "1", "-0", "1e5", "2.", ".5", "true",
          "null", "nul", "NaN", "Infinity", " ", "\n", "\t", "\xa0", "\ufeff", "'x'", "\\",
          "\\u00e9", "\\ud800", "é", "😀", "//", "x"]


def test_is_json_agrees_with_json_parse() -> None:
    rng = random.Random(11)
    texts = ['{"a": [1, 2.5, null]}', "[1, 2,]", "{'a': 1}", " 42 ", "", '"\\ud800"', "NaN",
             "\ufeff{}", "{} {}", '{"a":1}\n', "1e400", "[" * 100 + "]" * 100]
    texts += ["".join(rng.choice(PIECES) for _ in range(rng.randrange(8))) for _ in range(3000)]
    differ = [t for t in texts if graderkit.is_json(t) != strict_json(t)]
    assert not differ, differ[:10]
    assert sum(map(graderkit.is_json, texts)) > 100
    # Any depth, as JSON.parse (Python's json stops at its recursion limit).
    assert graderkit.is_json("[" * 100_000 + "]" * 100_000)


def json_same(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value (``true`` is not ``1``), objects as maps."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def test_json_equals_compares_values() -> None:
    expected = {"name": "Ada", "tags": ["a", "b"], "age": 36}
    assert graderkit.json_equals('{"age": 36.0, "tags": ["a", "b"], "name": "Ada"}', expected)
    assert not graderkit.json_equals('{"age": 36, "tags": ["b", "a"], "name": "Ada"}', expected)
    assert not graderkit.json_equals("not json", expected)
    assert graderkit.json_equals('{"a": 1, "a": 2}', {"a": 2})  # the last duplicate counts
    assert not graderkit.json_equals("true", 1)
    assert graderkit.json_equals("-0", 0)
    assert graderkit.json_equals('"x"', "x")
    rng = random.Random(5)
    for _ in range(2000):
        a, b = random_value(rng), random_value(rng)
        if rng.random() < 0.3:
            b = a
        assert graderkit.json_equals(json.dumps(a), b) == json_same(a, b), (a, b)


def test_contains_json_finds_objects_as_promptfoo_does() -> None:
    assert graderkit.contains_json('Here it is: {"name": "Ada"} as asked.')
    assert graderkit.contains_json('The result:\n```json\n{"ok": true}\n```')
    assert not graderkit.contains_json("[1, 2, 3] is an array, not an object")
    assert not graderkit.contains_json("{oops} {'a': 1}")
    assert graderkit.contains_json("{oops} then {}")


def test_answers_that_cannot_be_judged_do_not_match() -> None:
    schema = JsonSchema(True)
    deep = "[" * 200 + "]" * 200
    for answer in [deep, '{"x": 1e400}', '["\\ud800"]']:
        result = graderkit.matches_schema(answer, schema)
        assert not result and result.json and result.reason, result
        assert not graderkit.json_equals(answer, [])
    surrogate = graderkit.matches_schema('{"a": "\ud800"}', schema)
    assert not surrogate and not surrogate.json and "lone surrogate" in (surrogate.reason or "")
    assert not graderkit.is_json("{}\udfff")
    assert not graderkit.contains_json("{}\udfff")
    # Python's jsonschema matches the deep document: the difference is the bound.
    assert validators.Draft202012Validator(True).is_valid(json.loads(deep))


def test_inputs_built_to_hurt_get_a_bounded_answer() -> None:
    assert not graderkit.contains_json("{" * 1_000_000)
    assert not graderkit.contains_json('{"a":' * 200_000)
    deep = "[" * 1_000_000 + "]" * 1_000_000
    assert graderkit.is_json(deep)
    result = graderkit.matches_schema(deep, {"type": "array"})
    assert not result and "deep" in (result.reason or "")
    assert not graderkit.json_equals(deep, [])


def test_bad_schemas_and_values_are_programming_errors() -> None:
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        JsonSchema({"type": 12})
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        graderkit.matches_schema("{}", {"minimum": "one"})
    with pytest.raises(TypeError, match="schema is not JSON"):
        JsonSchema({"type": object()})
    with pytest.raises(ValueError, match="schema is not JSON"):
        JsonSchema({"minimum": math.nan})
    with pytest.raises(ValueError, match="expected is not JSON"):
        graderkit.json_equals("1", math.inf)
    with pytest.raises(ValueError, match="draft"):
        JsonSchema({}, draft="draft3")
    with pytest.raises(TypeError, match="answer must be a str"):
        graderkit.matches_schema(None, {})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="answer must be a str"):
        graderkit.is_json(b"{}")  # type: ignore[arg-type]


def test_a_draft_is_chosen_as_jsonschema_chooses_it() -> None:
    # `items` as a list is draft 7's tuple validation; 2020-12's meta-schema refuses it.
    tuple_items = {"items": [{"type": "string"}]}
    assert not graderkit.matches_schema("[1]", JsonSchema(tuple_items, draft="draft7"))
    assert not validators.Draft7Validator(tuple_items).is_valid([1])
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        JsonSchema(tuple_items)
    with pytest.raises(exceptions.SchemaError):
        validators.Draft202012Validator.check_schema(tuple_items)
    declared = {"$schema": "http://json-schema.org/draft-07/schema#", **tuple_items}
    assert graderkit.matches_schema('["x"]', declared)


def test_schemas_and_results_pickle_and_show_themselves() -> None:
    schema = JsonSchema({"required": ["city"]}, draft="draft7")
    copy = pickle.loads(pickle.dumps(schema))
    assert repr(copy) == repr(schema) == 'JsonSchema({"required": ["city"]}, draft="draft7")'
    assert copy.schema == {"required": ["city"]} and copy.draft == "draft7"
    result = graderkit.contains_schema_match('First {"name": 1}, then {"city": "Paris"}.', copy)
    assert result.span == (24, 41)
    assert pickle.loads(pickle.dumps(result)) == result
    miss = graderkit.matches_schema('{"name": 1}', schema)
    assert isinstance(miss, SchemaMatch) and not miss
    assert miss.mismatches[0].keyword == "required"
    assert miss.mismatches[0].instance_path == ""
