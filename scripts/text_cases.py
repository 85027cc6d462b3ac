"""Scores text-comparison cases with the reference's own `hud.graders` helpers.

Reads a JSON list of cases on stdin, each `{"f": name, "a": [positional args], "k": {keyword
args}}`, and prints `{"unicode": <unicodedata version>, "results": [...]}` with one result per
case, in order: `{"text": ...}` for `normalize`, `{"score": repr(score)}` for the others.

Floats travel as strings both ways, so that each side reads them with its own correctly
rounded parser (a JSON parser may round differently): `expected` and `tolerance` of
`numeric_match` are Rust's `{:?}` of an f64, which round-trips and spells infinities and NaN
as `float()` reads them; scores are Python's `repr`, which round-trips.

    python scripts/text_cases.py < cases.json
"""

import json
import sys
import unicodedata

from hud import graders

HELPERS = {
    name: getattr(graders, name)
    for name in (
        "normalize",
        "exact_match",
        "contains",
        "contains_any",
        "contains_all",
        "numeric_match",
        "f1_score",
    )
}


def run(case):
    name = case["f"]
    args = list(case.get("a", []))
    kwargs = dict(case.get("k", {}))
    if name == "numeric_match":
        args[1] = float(args[1])
        if "tolerance" in kwargs:
            kwargs["tolerance"] = float(kwargs["tolerance"])
    result = HELPERS[name](*args, **kwargs)
    if isinstance(result, str):
        return {"text": result}
    assert isinstance(result, float), (name, result)
    return {"score": repr(result)}


def main():
    cases = json.load(sys.stdin)
    results = [run(case) for case in cases]
    json.dump(
        {"unicode": unicodedata.unidata_version, "results": results},
        sys.stdout,
        ensure_ascii=False,
        allow_nan=False,
    )


main()
