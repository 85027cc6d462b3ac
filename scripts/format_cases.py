#!/usr/bin/env python3
"""Runs cases through verifiers 0.3.1's own `XMLParser`, `ThinkParser` and `MaybeThinkParser`,
for grader-core's `format` module to compare with.

verifiers is installed without its dependencies (`pip install --no-deps`): its package
`verifiers.legacy` imports model clients (openai, anthropic, pydantic, renderers, ...) that the
parsers never use. The four parser modules are loaded from the installed package, unchanged,
under their own names, with `verifiers.legacy.types` standing in as a module whose `Messages`
is `typing.Any` (the one name the parsers import from it).

Reads a JSON array of cases on stdin and writes a JSON array of results, floats as `repr`
strings (read back exactly); `fields` is a list of tag names and lists of alternatives:

    parse                  -> vars(XMLParser(fields).parse(text, last=last))
    parse_answer           -> XMLParser(fields, answer_field).parse_answer(text)
    parse_answer_messages  -> the same, on [{"role": "assistant", "content": m} for m in messages]
    format_reward          -> repr(XMLParser(fields).get_format_reward_func()(those messages))
    think_parse            -> ThinkParser().parse(text)
    think_format_reward    -> repr(ThinkParser().get_format_reward_func()(those messages))
    think_parse_answer     -> ThinkParser().parse_answer(those messages)
    maybe_think_parse      -> MaybeThinkParser().parse(text)

The first result is `sys.version_info[:2]`, the interpreter's version (its `sum` of floats).
"""

import importlib.util
import json
import logging
import pathlib
import sys
import types
import typing

logging.disable(logging.WARNING)  # the parsers warn about the `think` field on purpose


def load_parsers():
    spec = importlib.util.find_spec("verifiers")
    root = pathlib.Path(spec.origin).parent
    for name, path in [
        ("verifiers", root),
        ("verifiers.legacy", root / "legacy"),
        ("verifiers.legacy.parsers", root / "legacy" / "parsers"),
    ]:
        package = types.ModuleType(name)
        package.__path__ = [str(path)]
        sys.modules[name] = package
    stand_in = types.ModuleType("verifiers.legacy.types")
    stand_in.Messages = typing.Any
    sys.modules["verifiers.legacy.types"] = stand_in
    loaded = {}
    for module in ["parser", "xml_parser", "think_parser", "maybe_think_parser"]:
        name = f"verifiers.legacy.parsers.{module}"
        spec = importlib.util.spec_from_file_location(
            name, root / "legacy" / "parsers" / f"{module}.py"
        )
        loaded[module] = importlib.util.module_from_spec(spec)
        sys.modules[name] = loaded[module]
        spec.loader.exec_module(loaded[module])
    return (
        loaded["xml_parser"].XMLParser,
        loaded["think_parser"].ThinkParser,
        loaded["maybe_think_parser"].MaybeThinkParser,
    )


XMLParser, ThinkParser, MaybeThinkParser = load_parsers()


def xml_parser(case):
    fields = [f if isinstance(f, str) else tuple(f) for f in case["fields"]]
    return XMLParser(fields, answer_field=case.get("answer_field", "answer"))


def assistant(case):
    return [{"role": "assistant", "content": m} for m in case["messages"]]


def run(case):
    f = case["f"]
    if f == "parse":
        return vars(xml_parser(case).parse(case["text"], last=case.get("last", False)))
    if f == "parse_answer":
        return xml_parser(case).parse_answer(case["text"])
    if f == "parse_answer_messages":
        return xml_parser(case).parse_answer(assistant(case))
    if f == "format_reward":
        return repr(float(xml_parser(case).get_format_reward_func()(assistant(case))))
    if f == "think_parse":
        return ThinkParser().parse(case["text"])
    if f == "think_format_reward":
        return repr(float(ThinkParser().get_format_reward_func()(assistant(case))))
    if f == "think_parse_answer":
        return ThinkParser().parse_answer(assistant(case))
    if f == "maybe_think_parse":
        return MaybeThinkParser().parse(case["text"])
    raise ValueError(f"unknown case {f}")


cases = json.load(sys.stdin)
json.dump([list(sys.version_info[:2])] + [run(case) for case in cases], sys.stdout)
