#!/usr/bin/env python3
"""Gives Python's `jsonschema` 4.26.0 verdicts on cases, for grader-core's JSON Schema checks
(`grader_core::json::JsonSchema`) to compare with.

Reads a JSON array of cases `{"schema": ..., "instance": ..., "draft": "draft7" | null}` on
stdin and writes a JSON array of verdicts: `true` or `false` (`is_valid`), `"invalid schema"`
where `check_schema` refuses the schema, or `"error: <exception>"` where validation raises
(an unresolvable reference). Without a draft the validator is
`validator_for(schema, default=Draft202012Validator)`, as the schema's `$schema` says; no
format checker, so `format` is an annotation.
"""

import json
import sys

from jsonschema import exceptions, validators

DRAFTS = {
    "draft4": validators.Draft4Validator,
    "draft6": validators.Draft6Validator,
    "draft7": validators.Draft7Validator,
    "draft2019-09": validators.Draft201909Validator,
    "draft2020-12": validators.Draft202012Validator,
}


def verdict(case):
    schema = case["schema"]
    draft = case.get("draft")
    if draft:
        cls = DRAFTS[draft]
    else:
        cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError:
        return "invalid schema"
    try:
        return cls(schema).is_valid(case["instance"])
    except Exception as error:  # noqa: BLE001 - the verdict says which
        return f"error: {type(error).__name__}"


json.dump([verdict(case) for case in json.load(sys.stdin)], sys.stdout)
