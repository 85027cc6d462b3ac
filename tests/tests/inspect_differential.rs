//! grader-core's `inspect` module gives Inspect AI 0.3.285's own results: cases taken from
//! Inspect's scorer tests and from its documentation, and thousands of seeded random cases over
//! answer formats, numbers in several scripts, punctuation, whitespace and case mappings.
//!
//! One run of `scripts/inspect_scorer_cases.py` (Inspect's own scorers, and its
//! `multiple_choice` solver's reading for `choice`) scores every case.

use grader_core::inspect::{
    self, AnswerKind, ChoiceOptions, Location, MatchOptions, PatternOptions, Reason, Verdict,
};
use grader_core::text::pychar;
use grader_tests::python::{inspect_python, run_script};
use grader_tests::rng::Rng;
use serde_json::{Value, json};

const SCRIPT: &str = include_str!("../../scripts/inspect_scorer_cases.py");
const GENERATOR: &str = include_str!("../../scripts/gen_fold_tables.py");
const FOLD_TABLES: &str = include_str!("../../grader-core/src/text/fold_tables.rs");

/// Scores `case` (the script's JSON form) with grader-core, in the script's result form.
fn run(case: &Value) -> Value {
    let s = |key: &str| case[key].as_str().expect("a string");
    let b = |key: &str| case[key].as_bool().expect("a bool");
    let completion = s("completion");
    let targets: Vec<&str> = case["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .map(|t| t.as_str().expect("a target"))
        .collect();
    let letter = |verdict: Verdict| {
        json!({
            "value": if verdict.is_correct() { "C" } else { "I" },
            "answer": verdict.answer,
            "reason": verdict.reason.map(Reason::as_str),
        })
    };
    match s("f") {
        "match" => {
            let location: Location =
                serde_json::from_value(case["location"].clone()).expect("a location");
            let options = MatchOptions {
                location,
                ignore_case: b("ignore_case"),
                numeric: b("numeric"),
            };
            letter(inspect::match_targets(completion, &targets, options))
        }
        "includes" => letter(inspect::includes(completion, &targets, b("ignore_case"))),
        "exact" => letter(inspect::exact(completion, &targets)),
        "f1" => {
            let stop: Vec<&str> = case["stop_words"]
                .as_array()
                .map(|words| words.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let verdict = inspect::f1(completion, &targets, &stop);
            json!({
                "value": verdict.value,
                "answer": verdict.answer,
                "reason": verdict.reason.map(Reason::as_str),
            })
        }
        "answer" => {
            let kind: AnswerKind = serde_json::from_value(case["kind"].clone()).expect("a kind");
            letter(inspect::answer(completion, &targets, kind))
        }
        "pattern" => {
            let options = PatternOptions {
                ignore_case: b("ignore_case"),
                match_all: b("match_all"),
            };
            match inspect::pattern(completion, s("pattern"), &targets, options) {
                Ok(verdict) => letter(verdict),
                Err(e) => json!({ "error": e.to_string() }),
            }
        }
        "choice" => {
            let shuffled: Option<Vec<usize>> =
                serde_json::from_value(case["shuffled"].clone()).expect("positions");
            let options = ChoiceOptions {
                choices: usize::try_from(case["choices"].as_u64().expect("a count")).expect("fits"),
                shuffled: shuffled.as_deref(),
                multiple_correct: b("multiple_correct"),
            };
            match inspect::choice(completion, &targets, options) {
                Ok(verdict) => {
                    let no_answer =
                        !verdict.is_correct() && verdict.reason == Some(Reason::NoResponse);
                    let mut out = letter(verdict);
                    if no_answer {
                        out["value"] = "N".into();
                    }
                    out
                }
                Err(e) => json!({ "error": e.to_string() }),
            }
        }
        other => panic!("unknown scorer {other}"),
    }
}

/// Errors compare by their presence only: the messages are each language's own.
fn comparable(result: &Value) -> Value {
    if result.get("error").is_some() {
        json!({ "error": true })
    } else {
        result.clone()
    }
}

fn m(completion: &str, targets: &[&str], location: &str, numeric: bool) -> Value {
    json!({"f": "match", "completion": completion, "targets": targets, "location": location,
           "ignore_case": true, "numeric": numeric})
}

fn with(f: &str, completion: &str, targets: &[&str], extra: Value) -> Value {
    let mut case = json!({"f": f, "completion": completion, "targets": targets});
    if let (Some(case), Value::Object(extra)) = (case.as_object_mut(), extra) {
        case.extend(extra);
    }
    case
}

/// Cases from Inspect's own scorer tests (`tests/scorer/test_match.py`, `test_pattern.py`,
/// `test_answer.py`, `test_choice.py`, `test_classification.py`) and its docs.
fn inspect_cases() -> Vec<Value> {
    let mut cases = vec![
        m(
            "28 + 32 = 60\nThis solves the problem.",
            &["60"],
            "end",
            true,
        ),
        m(
            "**ANSWER: 28 + 32 = 60**\nThis solves the problem.",
            &["60"],
            "end",
            true,
        ),
        m(
            "28 + 32 = 60%\nThis solves the problem.",
            &["60", "60%"],
            "any",
            true,
        ),
        m("28 + 32 = 60%", &["60%"], "end", true),
        m("28 + 32 = 60%", &["32"], "end", true),
        m("The answer is 25", &["5"], "end", true),
        m("the value is 110", &["10"], "end", true),
        m("50 is the answer", &["5"], "begin", true),
        m("got 25 here", &["5"], "any", true),
        m("first 7 then 25 then done", &["25"], "any", true),
        m("5", &["-5"], "end", true),
        m("the result is -5", &["-5"], "end", true),
        m("the result is -5 exactly", &["-5"], "end", true),
        m("pi is approximately 3.14", &["3.14"], "end", true),
        m("pi is approximately 33.14", &["3.14"], "end", true),
        m("the value is 1000", &["1e3"], "end", true),
        m("2.0", &["2"], "end", true),
        m("result: -5.0", &["-5"], "end", true),
        m("5 some text", &["5"], "exact", true),
        m("5abc", &["5"], "exact", true),
        m("5", &["5"], "exact", true),
        m("answer: −5", &["-5"], "end", true),
        m("the answer is １２３", &["123"], "end", true),
        m("The answer is 42!", &["42"], "end", true),
        m("The answer is 42?", &["42"], "end", true),
        m("The answer is 42:", &["42"], "end", true),
        m("The answer is (42).", &["42"], "end", true),
        m("The answer is (42)", &["42"], "end", true),
        m("The answer is [42]", &["42"], "end", true),
        m("first (7) then 25! then done", &["25"], "any", true),
        m("The answer is 42abc", &["42"], "end", true),
        m("got 7 and 11", &["25"], "any", true),
        m("The total is \\$1,234.50.", &["1234.5"], "end", true),
        m("(42)", &["42"], "exact", true),
        m("x = 2³", &["8"], "end", true),
        m("the result is ½", &["0.5"], "end", true),
        m("got -½ as the result", &["-0.5"], "any", true),
        m("answer 2½", &["2.5"], "end", true),
        m("the answer is -½ extra", &["-0.5"], "end", true),
        m("leading text then -½", &["-0.5"], "begin", true),
        m("chapter Ⅻ", &["12"], "end", true),
        m("", &["."], "end", false),
        m("   ", &["a"], "end", false),
        m("The answer is Paris.", &["paris"], "end", false),
        m("Paris is the answer", &["PARIS"], "begin", false),
        m("I think Paris", &["Berlin", "Paris"], "any", false),
        m("Paris", &["paris"], "exact", false),
    ];
    for (completion, targets, kind) in [
        ("ANSWER: A", &["A"][..], "letter"),
        ("ANSWER: a", &["A"], "letter"),
        ("answer: (C) because", &["C"], "letter"),
        ("ANSWER: B\nwait\nANSWER: C", &["C"], "letter"),
        ("ANSWER: B\nwait\nANSWER: C", &["B"], "letter"),
        ("ANSWER: Bob", &["B"], "letter"),
        ("The ANSWER: is D.", &["D"], "letter"),
        ("ANSWER: yes", &["Yes"], "word"),
        ("ANSWER: yes.\n", &["yes"], "word"),
        ("ANSWER: no, definitely", &["no"], "word"),
        ("ANSWER:maybe!  \nmore text", &["maybe"], "word"),
        ("ANSWER: first\nANSWER: second", &["second"], "word"),
        ("ANSWER: 42 apples", &["42 apples"], "line"),
        ("ANSWER: 42 apples\nThat is all.", &["42 apples"], "line"),
        ("ANSWER: one\nANSWER: two\n\n", &["two"], "line"),
        ("ANSWER:    ", &[" "], "line"),
        ("no answer here", &["x"], "line"),
        ("", &["x"], "word"),
        ("ANSWER:ANSWER:x", &["x"], "word"),
        ("ANSWER:ANSWER: x", &["x"], "line"),
        ("answer : \nanswer : \n", &["answer :"], "line"),
        ("ANSWER: \u{17F}", &["s"], "letter"),
    ] {
        cases.push(with("answer", completion, targets, json!({"kind": kind})));
    }
    for (completion, pattern, targets, match_all) in [
        ("The answer is 42", r"answer is (\d+)", &["42"][..], false),
        ("x=4, y=5", r"x=(\d), y=(\d)", &["5"], false),
        ("x=4, y=5", r"x=(\d), y=(\d)", &["5"], true),
        ("x=5, y=5", r"x=(\d), y=(\d)", &["5"], true),
        ("abc", r"(x)?(y)?", &["x"], true),
        ("abc", r"(x)?(y)?", &["x"], false),
        ("FOO bar", r"foo", &["FOO"], false),
        ("", r"(.*)", &[""], false),
        ("\n \n", r"(.*)", &["x"], false),
        ("value: ", r"value: (\w*)", &[""], false),
        (
            "Result: SUCCESS",
            r"Result: (?P<r>\w+)",
            &["success"],
            false,
        ),
        ("no match", r"answer: (\d+)", &["1"], false),
        ("price 12.50 USD", r"(\d+)\.(\d+)", &["50"], false),
        ("a1b2", r"[a-z](\d)", &["1"], false),
    ] {
        cases.push(with(
            "pattern",
            completion,
            targets,
            json!({"pattern": pattern, "ignore_case": true, "match_all": match_all}),
        ));
    }
    for (completion, targets, n, shuffled, multiple) in [
        ("ANSWER: A", &["A"][..], 4, None, false),
        ("ANSWER: B", &["A"], 4, None, false),
        ("ANSWER: A, B", &["A", "B"], 4, None, true),
        ("ANSWER: AB", &["A, B"], 4, None, true),
        ("ANSWER: A and C", &["AC"], 4, None, true),
        ("ANSWER: A,", &["A"], 4, None, false),
        ("ANSWER: $B$", &["B"], 4, None, false),
        ("**ANSWER: C**", &["C"], 4, None, false),
        ("ANSWER: (d)", &["D"], 4, None, false),
        ("ANSWER: E", &["A"], 4, None, false),
        ("", &["A"], 4, None, false),
        ("I am not sure.", &["A"], 4, None, false),
        ("ANSWER: A", &["C"], 4, Some(vec![2, 0, 1, 3]), false),
        ("ANSWER: B", &["A"], 3, Some(vec![1, 0, 2]), false),
        ("ANSWER: A, C", &["B", "C"], 4, Some(vec![1, 3, 2, 0]), true),
        ("ANSWER: 1", &["1"], 27, None, false),
        ("ANSWER: A", &["E"], 4, None, false),
        ("ANSWER: A", &["A"], 0, None, false),
    ] {
        cases.push(with(
            "choice",
            completion,
            targets,
            json!({"choices": n, "shuffled": shuffled, "multiple_correct": multiple}),
        ));
    }
    for (completion, targets) in [
        ("The Eiffel Tower", &["eiffel tower"][..]),
        ("a", &["the"]),
        ("3.50", &["3.5"]),
        ("(3.14)", &["3.14"]),
        ("well-known", &["well known"]),
        ("Answer: -", &["-"]),
        ("1e3", &["1000"]),
        ("Straße", &["STRASSE"]),
    ] {
        cases.push(with("exact", completion, targets, json!({})));
        cases.push(with("f1", completion, targets, json!({"stop_words": null})));
    }
    cases.push(with(
        "f1",
        "the cat sat on the mat",
        &["a cat on a mat"],
        json!({"stop_words": ["on"]}),
    ));
    cases.push(with(
        "f1",
        "cat cat cat",
        &["cat"],
        json!({"stop_words": null}),
    ));
    cases.push(with("f1", "", &["cat"], json!({"stop_words": null})));
    cases.push(with(
        "includes",
        "The capital is PARIS.",
        &["paris"],
        json!({"ignore_case": true}),
    ));
    cases.push(with(
        "includes",
        "The capital is PARIS.",
        &["paris"],
        json!({"ignore_case": false}),
    ));
    cases.push(with(
        "includes",
        "STRASSE",
        &["straße"],
        json!({"ignore_case": true}),
    ));
    cases.push(with("includes", "", &[""], json!({"ignore_case": true})));
    cases
}

/// Pieces random completions are made of. Left out on purpose: what `docs/graders.md` lists
/// as a difference (Chinese numerals).
#[rustfmt::skip]
const PIECES: &[&str] = &[
    "ANSWER:", "ANSWER: ", "answer :", "Answer:\n", "ANSWERS:", "ſ", "A", "B", "c", "d", "E",
    "(A)", "(b)", "**", "$", "\\$", ",", ", ", " and ", " AND ", ".", "!", "?", ";", ":", "'",
    "\"", "(", ")", "[", "]", "-", "−", "+", "*", "_", "€", "£", "%", "/",
    "yes", "no", "Paris", "paris", "the", "The", "a", "an", "cat", "Straße", "STRASSE", "ΟΔΟΣ",
    "ς", "İ", "ı", "\u{212A}", "é", "ﬁ",
    "0", "1", "2", "5", "7", "42", "-5", "3.14", "1,000", "1,234.5", "1e3", "2E-2", "1'000", "٣",
    "١٢", "１２", "５", "²", "³", "⁻²", "0.5", "100", "007", "1_000", ".5", "5.", "nan", "inf",
    "½", "2½", "-½", "⅓", "1 ½", "½²", "Ⅻ", "ⅻ", "①", "⑫", "½½", "2½x", "𐄇",
    " ", "  ", "\n", "\n\n", "\t", "\u{a0}", "\u{3000}", "\x1c", "\r\n",
];

fn random_text(rng: &mut Rng, max_pieces: usize) -> String {
    let mut out = String::new();
    for _ in 0..rng.below(max_pieces + 1) {
        let piece = rng.pick::<&str>(PIECES);
        out.push_str(piece);
        if rng.chance(2) {
            out.push(' ');
        }
    }
    out
}

/// Targets: pieces of the completion, or random ones, or choice letters.
fn random_targets(rng: &mut Rng, completion: &str) -> Vec<String> {
    let words: Vec<&str> = completion.split_whitespace().collect();
    (0..=rng.below(2))
        .map(|_| match rng.below(4) {
            0 if !words.is_empty() => (*rng.pick(&words)).to_owned(),
            1 => random_text(rng, 2),
            _ => (*rng.pick(&[
                "A", "B", "5", "42", "-5", "yes", "Paris", "1000", "3.14", "1e3", "",
            ]))
            .to_owned(),
        })
        .collect()
}

/// Patterns for the generated `pattern` cases: none uses `$` or `\b` (see the pinned
/// differences).
const PATTERNS: &[&str] = &[
    r"ANSWER:\s*(\w+)",
    r"answer\s*:\s*([A-D])",
    r"(\d+)",
    r"(-?\d+(?:\.\d+)?)",
    r"(\w+)\s+(\w+)",
    r"(yes|no)",
    r"(x)?(\d)?",
    r"([^\s]+)\s*\Z",
    r"\S+",
    r"(?s)ANSWER:(.*)",
    r"(.+?)[.!?]",
    r"(?m)^(\w)",
    r"\((\w)\)",
    r"(\W)",
];

/// A completion that gives an answer in one of the forms models write, between random text.
fn answered(rng: &mut Rng) -> (String, String) {
    let given = (*rng.pick(&[
        "A", "b", "C", "D", "A, B", "B,C", "AC", "(b)", "(C)", "A and D", "a,", "$B$", "yes",
        "no.", "Paris", "42", "3.14", "E", "1", "ſ", "\u{212A}",
    ]))
    .to_owned();
    let completion = format!(
        "{}{}{}{}{}",
        random_text(rng, 3),
        rng.pick(&[
            "ANSWER:",
            "ANSWER: ",
            "answer :",
            "ANSWER:\n",
            "**ANSWER: ",
            "Answer:  "
        ]),
        given,
        rng.pick(&[
            "",
            ".",
            "\n",
            " because",
            ")\n",
            "!",
            "**",
            "\nANSWER: B",
            "  \n\n",
            ","
        ]),
        if rng.chance(2) {
            random_text(rng, 2)
        } else {
            String::new()
        },
    );
    (completion, given)
}

fn random_case(rng: &mut Rng) -> Value {
    let (completion, given) = if rng.chance(2) {
        answered(rng)
    } else {
        (random_text(rng, 8), String::new())
    };
    let mut targets = random_targets(rng, &completion);
    if !given.is_empty() && rng.chance(2) {
        let letters: String = given.chars().filter(char::is_ascii_alphanumeric).collect();
        targets[0] = if rng.chance(2) { given } else { letters };
    }
    let targets: Vec<&str> = targets.iter().map(String::as_str).collect();
    match rng.below(7) {
        0 => {
            let location = *rng.pick(&["begin", "end", "any", "exact"]);
            let mut case = m(&completion, &targets, location, rng.chance(2));
            case["ignore_case"] = (!rng.chance(3)).into();
            case
        }
        1 => with(
            "includes",
            &completion,
            &targets,
            json!({"ignore_case": !rng.chance(3)}),
        ),
        2 => with("exact", &completion, &targets, json!({})),
        3 => {
            let stop = rng.chance(3).then(|| vec!["the", "on", "A", "5"]);
            with("f1", &completion, &targets, json!({"stop_words": stop}))
        }
        4 => {
            let kind = *rng.pick(&["letter", "word", "line"]);
            with("answer", &completion, &targets, json!({"kind": kind}))
        }
        5 => with(
            "pattern",
            &completion,
            &targets,
            json!({"pattern": *rng.pick(PATTERNS), "ignore_case": !rng.chance(3),
                   "match_all": rng.chance(2)}),
        ),
        _ => {
            let n = 2 + rng.below(4);
            let shuffled = rng.chance(2).then(|| {
                let mut positions: Vec<usize> = (0..n).collect();
                for i in (1..n).rev() {
                    positions.swap(i, rng.below(i + 1));
                }
                positions
            });
            let letters = ["A", "B", "C", "D", "E", "F", "A, B", "BC", "a"];
            let mut targets: Vec<&str> =
                (0..=rng.below(2)).map(|_| letters[rng.below(n)]).collect();
            if rng.chance(8) {
                targets.push(*rng.pick(&letters));
            }
            with(
                "choice",
                &completion,
                &targets,
                json!({"choices": n, "shuffled": shuffled, "multiple_correct": rng.chance(2)}),
            )
        }
    }
}

/// Scores every case on both sides; returns the cases that differ.
fn disagreements(python: &std::path::Path, cases: &[Value]) -> Vec<String> {
    let output = run_script(python, SCRIPT, &Value::from(cases.to_vec()).to_string());
    let expected: Vec<Value> = serde_json::from_str(&output).expect("the script's JSON");
    assert_eq!(expected.len(), cases.len());
    cases
        .iter()
        .zip(&expected)
        .filter_map(|(case, expected)| {
            let ours = comparable(&run(case));
            let theirs = comparable(expected);
            (ours != theirs).then(|| format!("{case}\n  inspect: {theirs}\n  ours:    {ours}"))
        })
        .collect()
}

#[test]
fn inspects_own_cases_agree() {
    let Some(python) = inspect_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let cases = inspect_cases();
    let differ = disagreements(&python, &cases);
    eprintln!(
        "inspect's cases: {} of {} agree",
        cases.len() - differ.len(),
        cases.len()
    );
    assert!(
        differ.is_empty(),
        "{} differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}

#[test]
fn generated_cases_agree() {
    let Some(python) = inspect_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let mut rng = Rng(0x1A5_9EC7);
    let cases: Vec<Value> = (0..6000).map(|_| random_case(&mut rng)).collect();
    let differ = disagreements(&python, &cases);
    eprintln!(
        "generated cases: {} of {} agree",
        cases.len() - differ.len(),
        cases.len()
    );
    // The generated cases reach both verdicts of every scorer, and Inspect's errors.
    for f in [
        "match", "includes", "exact", "f1", "answer", "pattern", "choice",
    ] {
        let results: Vec<Value> = cases.iter().filter(|c| c["f"] == f).map(run).collect();
        let correct = results
            .iter()
            .filter(|r| r["value"] == "C" || r["value"].as_f64().is_some_and(|v| v > 0.0))
            .count();
        eprintln!("  {f}: {} cases, {correct} correct", results.len());
        assert!(
            correct > 0 && correct < results.len(),
            "{f}: {correct} of {}",
            results.len()
        );
    }
    grader_tests::assert_none_differ(&differ);
}

/// Each difference `docs/graders.md` lists, with what Inspect and grader-core give.
#[test]
fn documented_differences_are_pinned() {
    let Some(python) = inspect_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let pattern = |completion: &str, pattern: &str, target: &str| {
        with(
            "pattern",
            completion,
            &[target],
            json!({"pattern": pattern, "ignore_case": true, "match_all": false}),
        )
    };
    let cases = [
        // Chinese numerals are not numbers here.
        m("result: 三", &["3"], "end", true),
        m("result: 十二", &["12"], "end", true),
        m("result: 负5", &["-5"], "end", true),
        m("result: 三点五", &["3.5"], "end", true),
        // `$` matches only at the very end; Python's also before a final line break.
        pattern("answer 42\n", r"(\d+)$", "42"),
        // `\b` uses the regex crate's word characters: a combining mark is one there, so no
        // boundary follows this `e`.
        pattern("e\u{301}x", r"e\b", "e"),
        // Lookaround and backreferences cannot run on the regex crate.
        pattern("x=1", r"(?<=x=)(\d)", "1"),
        pattern("aa", r"(a)\1", "a"),
    ];
    let output = run_script(&python, SCRIPT, &Value::from(cases.to_vec()).to_string());
    let theirs: Vec<Value> = serde_json::from_str(&output).expect("the script's JSON");
    let ours: Vec<Value> = cases.iter().map(run).collect();
    let values = |results: &[Value]| -> Vec<Value> {
        results
            .iter()
            .map(|r| r.get("value").cloned().unwrap_or_else(|| "error".into()))
            .collect()
    };
    assert_eq!(values(&theirs), ["C", "C", "C", "C", "C", "C", "C", "C"]);
    assert_eq!(
        values(&ours),
        ["I", "I", "I", "I", "I", "I", "error", "error"]
    );
}

/// `str.casefold()`, `unicodedata.digit()` and `unicodedata.numeric()` of every code point
/// agree with Python's, and the committed tables are what their generator writes.
#[test]
fn casefold_and_digits_agree_on_every_code_point() {
    let Some(python) = inspect_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let script = "import json, sys, unicodedata\n\
        cps = [c for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]\n\
        fold = {c: chr(c).casefold() for c in cps if chr(c).casefold() != chr(c)}\n\
        digit = {c: unicodedata.digit(chr(c)) for c in cps\n\
                 if unicodedata.digit(chr(c), None) is not None}\n\
        numeric = {c: repr(unicodedata.numeric(chr(c))) for c in cps\n\
                   if unicodedata.numeric(chr(c), None) is not None}\n\
        print(json.dumps({'fold': fold, 'digit': digit, 'numeric': numeric}))";
    let output = run_script(&python, script, "");
    let tables: Value = serde_json::from_str(&output).expect("the script's JSON");
    let mut checked = 0;
    for c in (0..=0x10_FFFF_u32).filter_map(char::from_u32) {
        let key = u32::from(c).to_string();
        let fold = tables["fold"][&key]
            .as_str()
            .map_or_else(|| c.to_string(), str::to_owned);
        assert_eq!(pychar::casefold(&c.to_string()), fold, "casefold of {c:?}");
        let digit = tables["digit"][&key]
            .as_u64()
            .and_then(|d| u8::try_from(d).ok());
        assert_eq!(pychar::digit_value(c), digit, "digit of {c:?}");
        let numeric = tables["numeric"][&key]
            .as_str()
            .map(|x| x.parse::<f64>().expect("a float"));
        assert_eq!(pychar::numeric_value(c), numeric, "numeric value of {c:?}");
        checked += 1;
    }
    assert!(checked > 1_100_000);
    let generated = run_script(&python, GENERATOR, "");
    assert!(generated == FOLD_TABLES, "run scripts/gen_fold_tables.py");
}
