//! grader-core's JSON Schema checks (`json::JsonSchema`, feature `json-schema`) give Python's
//! `jsonschema` 4.26.0 verdicts: on the JSON-Schema-Test-Suite cases the Python package passes
//! (a subset of the draft 7 and draft 2020-12 files, in `tests/data/json-schema-test-suite`),
//! and on seeded random documents against a set of schemas, alone and inside text; and they
//! answer bounded on inputs built to hurt.
//!
//! One run of `scripts/json_schema_cases.py` gives every verdict.

use std::path::Path;

use grader_core::json::{
    self, Draft, JsonError, JsonSchema, MAX_DEPTH, SchemaCheck, first_schema_match, json_objects,
    matches_schema,
};
use grader_core::json::{ContainsSchemaMatch, MatchesSchema};
use grader_tests::python::{jsonschema_python, run_script};
use grader_tests::rng::Rng;
use serde_json::{Value, json};

const SCRIPT: &str = include_str!("../../scripts/json_schema_cases.py");

fn draft(name: Option<&str>) -> Option<Draft> {
    match name {
        Some("draft7") => Some(Draft::Draft7),
        Some("draft2020-12") => Some(Draft::Draft202012),
        None => None,
        Some(other) => panic!("unknown draft {other}"),
    }
}

/// grader-core's verdict on `case`, in the script's form.
fn verdict(case: &Value) -> Value {
    let schema = &case["schema"];
    let compiled = match draft(case["draft"].as_str()) {
        Some(draft) => JsonSchema::with_draft(schema, draft),
        None => JsonSchema::new(schema),
    };
    match compiled {
        Ok(compiled) => {
            let valid = compiled
                .is_valid(&case["instance"])
                .expect("within the bounds");
            // The mismatches agree with the verdict, and point into the instance.
            let mismatches = compiled
                .mismatches(&case["instance"])
                .expect("within the bounds");
            assert_eq!(valid, mismatches.is_empty(), "{case}\n{mismatches:?}");
            for mismatch in &mismatches {
                assert!(!mismatch.keyword.is_empty(), "{mismatch:?}");
                assert!(
                    case["instance"].pointer(&mismatch.instance_path).is_some(),
                    "{case}: {mismatch:?}"
                );
            }
            valid.into()
        }
        Err(JsonError::InvalidSchema { .. }) => "invalid schema".into(),
        Err(other) => panic!("{case}: {other}"),
    }
}

fn python_verdicts(cases: &[Value]) -> Option<Vec<Value>> {
    let python = jsonschema_python(env!("CARGO_TARGET_TMPDIR"))?;
    let output = run_script(&python, SCRIPT, &Value::from(cases.to_vec()).to_string());
    let theirs: Vec<Value> = serde_json::from_str(&output).expect("the script's JSON");
    assert_eq!(theirs.len(), cases.len());
    Some(theirs)
}

/// Every test of the suite's files for `draft`, as a case with `valid` and `where`.
fn suite(draft: &str) -> Vec<Value> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/json-schema-test-suite")
        .join(draft);
    let mut files: Vec<_> = std::fs::read_dir(&folder)
        .expect("the suite's folder")
        .map(|entry| entry.expect("an entry").path())
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        let groups: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).expect("read")).expect("JSON");
        let name = file.file_name().expect("a name").to_string_lossy();
        for group in groups.as_array().expect("groups") {
            for test in group["tests"].as_array().expect("tests") {
                cases.push(json!({
                    "schema": group["schema"],
                    "instance": test["data"],
                    "draft": draft,
                    "valid": test["valid"],
                    "where": format!("{draft}/{name}: {}: {}", group["description"], test["description"]),
                }));
            }
        }
    }
    cases
}

fn check_suite(draft: &str) {
    let cases = suite(draft);
    // Every schema of the subset compiles: none needs a remote reference.
    let ours: Vec<Value> = cases.iter().map(verdict).collect();
    let passed_ours = cases
        .iter()
        .zip(&ours)
        .filter(|(case, ours)| case["valid"] == **ours)
        .count();
    eprintln!(
        "{draft}: grader-core passes {passed_ours} of {} cases",
        cases.len()
    );
    let Some(theirs) = python_verdicts(&cases) else {
        return;
    };
    let mut passed = 0;
    let mut differ = Vec::new();
    for ((case, ours), theirs) in cases.iter().zip(&ours).zip(&theirs) {
        if case["valid"] != *theirs {
            eprintln!(
                "  Python fails {} (it says {theirs}, grader-core {ours})",
                case["where"]
            );
            continue;
        }
        passed += 1;
        if ours != theirs {
            differ.push(format!("{}: python {theirs}, ours {ours}", case["where"]));
        }
    }
    eprintln!(
        "{draft}: Python passes {passed} of {}; grader-core agrees on {}",
        cases.len(),
        passed - differ.len()
    );
    assert!(passed > cases.len() * 9 / 10, "Python passes only {passed}");
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

#[test]
fn suite_draft7_agrees_with_python() {
    check_suite("draft7");
}

#[test]
fn suite_draft2020_12_agrees_with_python() {
    check_suite("draft2020-12");
}

/// Schemas for the generated documents, with and without `$schema`.
fn schemas() -> Vec<Value> {
    vec![
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 8},
                "age": {"type": "integer", "minimum": 0, "exclusiveMaximum": 150},
                "tags": {"type": "array", "items": {"enum": ["a", "b", "é"]}, "uniqueItems": true},
            },
            "required": ["name"],
            "additionalProperties": false,
        }),
        json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "array",
            "items": [{"type": "number"}, {"type": "string"}],
            "additionalItems": {"type": "boolean"},
            "minItems": 1,
        }),
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "prefixItems": [{"type": "number"}, {"type": "string"}],
            "items": {"type": "boolean"},
            "contains": {"const": true},
        }),
        json!({
            "oneOf": [{"type": "number", "multipleOf": 0.5}, {"type": "string", "pattern": "^[a-z]+$"}, {"type": "null"}],
        }),
        json!({
            "$defs": {"node": {"type": "object", "properties": {"v": {"type": "number"}, "next": {"$ref": "#/$defs/node"}}, "required": ["v"]}},
            "$ref": "#/$defs/node",
        }),
        json!({
            "type": "object",
            "patternProperties": {"^x": {"type": "integer"}},
            "propertyNames": {"maxLength": 3},
            "dependentRequired": {"a": ["b"]},
            "if": {"required": ["c"]}, "then": {"properties": {"c": {"minimum": 1}}}, "else": {"minProperties": 1},
            "unevaluatedProperties": false,
            "properties": {"a": true, "b": true, "c": true},
        }),
        json!({"anyOf": [{"type": "integer"}, {"not": {"type": ["object", "array"]}}], "format": "email"}),
        json!(true),
        json!(false),
    ]
}

/// A random JSON value, drawn to hit the schemas' edges.
fn random_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth > 3 { 5 } else { 7 }) {
        0 => Value::Null,
        1 => (rng.below(2) == 0).into(),
        2 => json!(*rng.pick(&[0.0, -0.5, 1.0, 1.5, 2.5, 149.0, 150.0, 1e21, 0.1])),
        3 => json!(*rng.pick(&[0_i64, 1, -7, 42, 149, 150])),
        4 => (*rng.pick(&["", "a", "é", "abc", "Abc", "a@b.c", "toolongname", "😀"])).into(),
        5 => (0..rng.below(4))
            .map(|_| random_value(rng, depth + 1))
            .collect(),
        _ => {
            let mut map = serde_json::Map::new();
            for _ in 0..rng.below(4) {
                let key = *rng.pick(&[
                    "name", "age", "tags", "a", "b", "c", "x1", "xlong", "v", "next",
                ]);
                map.insert(key.to_owned(), random_value(rng, depth + 1));
            }
            Value::Object(map)
        }
    }
}

#[test]
fn generated_documents_agree_with_python() {
    let mut rng = Rng(0x5C_4E_3A);
    let schemas = schemas();
    let mut cases = Vec::new();
    for _ in 0..3000 {
        let schema = rng.pick(&schemas).clone();
        cases.push(json!({"schema": schema, "instance": random_value(&mut rng, 0), "draft": null}));
    }
    // Documents built to match the first schema, then perhaps broken.
    for _ in 0..500 {
        let mut doc = json!({"name": rng.pick(&["a", "Ada", "é😀"])});
        if rng.chance(2) {
            doc["age"] = json!(*rng.pick(&[0, 36, 149, 150, -1]));
        }
        if rng.chance(2) {
            doc["tags"] = json!(rng.pick(&[json!(["a", "b"]), json!(["a", "a"]), json!(["c"])]));
        }
        cases.push(json!({"schema": schemas[0], "instance": doc, "draft": null}));
    }
    let ours: Vec<Value> = cases.iter().map(verdict).collect();
    let valid = ours.iter().filter(|v| **v == true).count();
    eprintln!("{valid} of {} generated documents match", cases.len());
    assert!(valid > 400 && valid < cases.len() - 400, "{valid} valid");
    let Some(theirs) = python_verdicts(&cases) else {
        return;
    };
    let differ: Vec<String> = cases
        .iter()
        .zip(ours.iter().zip(&theirs))
        .filter(|(_, (ours, theirs))| ours != theirs)
        .map(|(case, (ours, theirs))| format!("{case}\n  python: {theirs}\n  ours:   {ours}"))
        .collect();
    eprintln!(
        "generated: {} of {} agree",
        cases.len() - differ.len(),
        cases.len()
    );
    grader_tests::assert_none_differ(&differ);
}

#[test]
fn documents_inside_text_agree_with_python() {
    let mut rng = Rng(0x7E_C7);
    let schema = schemas()[0].clone();
    let compiled = JsonSchema::new(&schema).expect("valid");
    let mut texts = Vec::new();
    for _ in 0..400 {
        let mut text = String::from(*rng.pick(&["", "Here: ", "```json\n", "{oops} "]));
        for _ in 0..rng.below(4) {
            let doc = if rng.chance(2) {
                json!({"name": rng.pick(&["Ada", ""]), "age": rng.pick(&[1, -1])})
            } else {
                random_value(&mut rng, 1)
            };
            text.push_str(&doc.to_string());
            text.push_str(rng.pick::<&str>(&[" and ", "\n", "} ", ""]));
        }
        texts.push(text);
    }
    // Python's verdict on each object promptfoo's search finds; the first valid one is the match.
    let mut cases = Vec::new();
    let mut objects = Vec::new();
    for text in &texts {
        let found = json_objects(text).expect("bounded");
        for range in &found {
            let value: Value = serde_json::from_str(&text[range.clone()]).expect("JSON");
            cases.push(json!({"schema": schema, "instance": value, "draft": null}));
        }
        objects.push(found);
    }
    let mut matched = 0;
    let theirs = python_verdicts(&cases);
    let mut next = 0;
    for (text, found) in texts.iter().zip(&objects) {
        let ours = first_schema_match(text, &compiled).expect("bounded");
        let whole = matches_schema(text, &compiled).expect("bounded");
        if let Some(theirs) = &theirs {
            let verdicts = &theirs[next..next + found.len()];
            let expected = found
                .iter()
                .zip(verdicts)
                .find(|(_, v)| **v == true)
                .map(|(r, _)| r.clone());
            match (&ours, expected) {
                (SchemaCheck::Match(range), Some(expected)) => {
                    assert_eq!(range, &expected, "{text}")
                }
                (SchemaCheck::Mismatch(_), None) => assert!(!found.is_empty(), "{text}"),
                (SchemaCheck::NoJson, None) => assert!(found.is_empty(), "{text}"),
                (ours, expected) => {
                    panic!("{text}: ours {ours:?}, python's first match {expected:?}")
                }
            }
        }
        next += found.len();
        matched += usize::from(ours.is_match());
        // A whole text that matches is an object that matches.
        if whole.is_match() {
            assert!(ours.is_match(), "{text}");
        }
    }
    eprintln!("{matched} of {} texts hold a matching object", texts.len());
    assert!(matched > 50 && matched < 350, "{matched}");
}

#[test]
fn a_schema_that_is_not_one_is_the_graders_error() {
    let bad = json!({"type": 12});
    for (result, grader) in [
        (
            MatchesSchema {
                answer: "{}",
                schema: &bad,
            }
            .grade(1.0)
            .now(),
            "matches_schema",
        ),
        (
            ContainsSchemaMatch {
                answer: "{}",
                schema: &bad,
            }
            .grade(1.0)
            .now(),
            "contains_schema_match",
        ),
    ] {
        let error = result.expect_err("an invalid schema");
        let message = error.failure.to_string();
        assert!(
            message.starts_with(&format!("{grader}: the schema is not a valid JSON Schema")),
            "{message}"
        );
        assert!(message.contains("12"), "{message}");
    }
    assert!(matches!(
        JsonSchema::new(&json!({"minLength": -1})),
        Err(JsonError::InvalidSchema {
            grader: "json_schema",
            ..
        })
    ));
    // A reference to a document it does not hold is refused, not fetched.
    assert!(matches!(
        JsonSchema::new(&json!({"$ref": "http://localhost:1234/integer.json"})),
        Err(JsonError::InvalidSchema { .. })
    ));
}

#[test]
fn graders_score_and_explain() {
    let schema = schemas()[0].clone();
    let good = MatchesSchema {
        answer: r#"{"name": "Ada", "age": 36}"#,
        schema: &schema,
    }
    .grade(1.0)
    .now()
    .expect("graded");
    assert_eq!(good.value(), 1.0);
    let bad = MatchesSchema {
        answer: r#"{"name": "Ada", "age": -1, "x": 1}"#,
        schema: &schema,
    }
    .grade(1.0)
    .now()
    .expect("graded");
    assert_eq!(bad.value(), 0.0);
    let info = bad.info().expect("info");
    let keywords: Vec<&str> = info["mismatches"]
        .as_array()
        .expect("mismatches")
        .iter()
        .map(|m| m["keyword"].as_str().expect("keyword"))
        .collect();
    assert!(
        keywords.contains(&"minimum") && keywords.contains(&"additionalProperties"),
        "{keywords:?}"
    );
    assert_eq!(info["_parameters"]["schema"], schema);
    let answer = r#"Sure: {"name": 1} and then {"name": "Ada"}."#;
    let found = ContainsSchemaMatch {
        answer,
        schema: &schema,
    }
    .grade(1.0)
    .now()
    .expect("graded");
    assert_eq!(found.value(), 1.0);
    assert_eq!(found.info().expect("info")["at"], json!([27, 42]));
    assert_eq!(&answer[27..42], r#"{"name": "Ada"}"#);
}

#[test]
fn inputs_built_to_hurt_get_a_bounded_typed_answer() {
    let schema = JsonSchema::new(&json!({"type": "array"})).expect("valid");
    // A million levels: too deep to read into a value, a typed error, not a stack overflow.
    let deep = "[".repeat(1_000_000) + &"]".repeat(1_000_000);
    assert!(matches!(
        matches_schema(&deep, &schema),
        Err(JsonError::TooDeep { depth: 1_000_000, limit, .. }) if limit == MAX_DEPTH
    ));
    let deep_object = "x ".to_owned() + &"{\"a\":".repeat(200) + "1" + &"}".repeat(200);
    assert!(matches!(
        first_schema_match(&deep_object, &schema),
        Err(JsonError::TooDeep { .. })
    ));
    // Megabytes: a long array matched, prose with no object, unclosed braces bounded.
    let big = format!("[{}0]", "1, ".repeat(1_000_000));
    assert!(matches_schema(&big, &schema).expect("bounded").is_match());
    let long_items = JsonSchema::new(&json!({"items": {"type": "string"}})).expect("valid");
    let SchemaCheck::Mismatch(why) = matches_schema(&big, &long_items).expect("bounded") else {
        panic!("a million mismatches");
    };
    assert_eq!(why.len(), json::MAX_MISMATCHES);
    let prose = "lorem { ipsum } dolor ".repeat(200_000);
    assert_eq!(first_schema_match(&prose, &schema), Ok(SchemaCheck::NoJson));
    assert!(matches!(
        first_schema_match(&"{\"a\":".repeat(400_000), &schema),
        Err(JsonError::TooMuchWork {
            grader: "first_schema_match",
            ..
        })
    ));
    // A pattern that backtracks: bounded by the engine's limit, a verdict either way.
    let pattern = JsonSchema::new(&json!({"pattern": "^(a+)+$"})).expect("valid");
    let _ = pattern.is_valid(&json!(format!("{}b", "a".repeat(10_000))));
    // Odd unicode in keys and values.
    let odd = JsonSchema::new(&json!({"required": ["\u{0}é😀"], "properties": {"\u{0}é😀": {"const": "\u{202e}\u{fffd}"}}}))
        .expect("valid");
    assert!(
        matches_schema("{\"\\u0000é😀\": \"\\u202e\u{fffd}\"}", &odd)
            .expect("bounded")
            .is_match()
    );
    assert_eq!(matches_schema("\u{feff}{}", &odd), Ok(SchemaCheck::NoJson));
}

/// Where validation differs from Python's `jsonschema` on purpose, as the JSON Schema
/// specification says (docs/graders.md, "JSON Schema"): regular expressions are ECMA-262's
/// (`\\d` and `\\w` are ASCII, `$` does not match before a final line break, where Python's
/// `re` is Unicode-aware and lets `$` match there), and `multipleOf` is exact for decimals
/// (0.07 is a multiple of 0.01, where Python's float division says 7.000000000000001).
#[test]
fn the_dialect_differs_from_python_where_the_specification_says() {
    let cases = [
        (json!({"pattern": "^\\d+$"}), json!("\u{663}\u{664}"), false),
        (json!({"pattern": "^\\w+$"}), json!("caf\u{e9}"), false),
        (json!({"pattern": "^a$"}), json!("a\n"), false),
        (json!({"multipleOf": 0.01}), json!(0.07), true),
        (json!({"multipleOf": 0.1}), json!(0.3), true),
    ];
    let ours: Vec<bool> = cases
        .iter()
        .map(|(schema, instance, _)| {
            JsonSchema::new(schema)
                .expect("a valid schema")
                .is_valid(instance)
                .expect("small")
        })
        .collect();
    for ((schema, instance, expected), got) in cases.iter().zip(&ours) {
        assert_eq!(got, expected, "{schema} on {instance}");
    }
    let as_cases: Vec<Value> = cases
        .iter()
        .map(|(schema, instance, _)| json!({"schema": schema, "instance": instance, "draft": null}))
        .collect();
    let Some(theirs) = python_verdicts(&as_cases) else {
        return;
    };
    for (((schema, instance, _), got), python) in cases.iter().zip(&ours).zip(&theirs) {
        assert_eq!(python, &json!(!got), "Python on {schema} and {instance}");
    }
}
