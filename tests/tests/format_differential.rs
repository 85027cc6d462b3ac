//! grader-core's `format` module parses and scores tagged sections as verifiers 0.3.1's own
//! `XMLParser`, `ThinkParser` and `MaybeThinkParser` do, on the cases of verifiers' own tests
//! and on thousands of seeded random texts (missing, nested, repeated and unclosed tags,
//! whitespace Python and Rust disagree on, unicode); and it answers bounded on inputs built to
//! hurt.
//!
//! One run of `scripts/format_cases.py` (the parser modules of the installed package) runs
//! every case.

use grader_core::format::{
    Field, FormatError, XmlParser, maybe_think_answer, think_answer, think_format,
    think_format_reward,
};
use grader_tests::python::{run_script, verifiers_python};
use grader_tests::rng::Rng;
use serde_json::{Value, json};

const SCRIPT: &str = include_str!("../../scripts/format_cases.py");

fn float(x: f64) -> Value {
    Value::from(format!("{x:?}"))
}

fn parser(case: &Value) -> XmlParser {
    let fields = case["fields"].as_array().expect("fields").iter().map(|f| {
        f.as_str().map_or_else(
            || {
                Field::any_of(
                    f.as_array()
                        .expect("alternatives")
                        .iter()
                        .map(|t| t.as_str().expect("a tag")),
                )
            },
            Field::from,
        )
    });
    let parser = XmlParser::new(fields).expect("a valid parser");
    match case["answer_field"].as_str() {
        Some(tag) => parser.with_answer_field(tag),
        None => parser,
    }
}

fn messages(case: &Value) -> Vec<&str> {
    case["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m.as_str().expect("a message"))
        .collect()
}

/// grader-core's result for `case`, in the script's form.
fn run(case: &Value) -> Value {
    let text = case["text"].as_str().unwrap_or("");
    match case["f"].as_str().expect("f") {
        "parse" => {
            let parser = parser(case);
            let parsed = if case["last"] == true {
                parser.parse_last(text)
            } else {
                parser.parse(text)
            };
            serde_json::to_value(&parsed).expect("a map")
        }
        "parse_answer" => parser(case).parse_answer(text).into(),
        "parse_answer_messages" => parser(case).parse_answer_messages(&messages(case)).into(),
        "format_reward" => float(parser(case).format_reward(&messages(case))),
        "think_parse" => think_answer(text).into(),
        "think_format_reward" => float(think_format_reward(&messages(case))),
        "think_parse_answer" => messages(case).last().map(|m| think_answer(m)).into(),
        "maybe_think_parse" => maybe_think_answer(text).into(),
        other => panic!("unknown case {other}"),
    }
}

/// The format reward of `case` summed as Python before 3.12 sums floats: left to right, with
/// no compensation.
fn uncompensated_reward(case: &Value) -> Value {
    let parser = parser(case);
    let messages = messages(case);
    if messages.is_empty() {
        return float(0.0);
    }
    let sum = messages
        .iter()
        .map(|m| parser.format_score(m))
        .fold(0.0, |sum, x| sum + x);
    #[allow(clippy::cast_precision_loss)] // a count of messages
    float(sum / messages.len() as f64)
}

/// The cases on which grader-core and verifiers differ, or `None` (after saying why) where
/// Python is not installed. Floats (`repr` strings) agree exactly; under Python before 3.12,
/// whose `sum` of floats is not compensated, a mean of format scores is compared with the
/// same scores summed that way (and the number of means that differ in their last bits is
/// said).
fn differ(cases: &[Value]) -> Option<Vec<String>> {
    let python = verifiers_python(env!("CARGO_TARGET_TMPDIR"))?;
    let output = run_script(&python, SCRIPT, &Value::from(cases.to_vec()).to_string());
    let theirs: Vec<Value> = serde_json::from_str(&output).expect("the script's JSON");
    assert_eq!(theirs.len(), cases.len() + 1);
    let version = (theirs[0][0].as_u64(), theirs[0][1].as_u64());
    let compensated_sum = version >= (Some(3), Some(12));
    let mut inexact = 0;
    let differ = cases
        .iter()
        .zip(&theirs[1..])
        .filter_map(|(case, theirs)| {
            let mut ours = run(case);
            if !compensated_sum && case["f"] == "format_reward" && ours != *theirs {
                ours = uncompensated_reward(case);
                inexact += usize::from(ours == *theirs);
            }
            (ours != *theirs).then(|| format!("{case}\n  verifiers: {theirs}\n  ours:      {ours}"))
        })
        .collect();
    if inexact > 0 {
        eprintln!(
            "{inexact} means differ in their last bits from Python {version:?}'s uncompensated sum, and equal it summed that way"
        );
    }
    Some(differ)
}

fn assert_agree(label: &str, cases: &[Value]) {
    let Some(differ) = differ(cases) else {
        return;
    };
    eprintln!(
        "{label}: {} of {} agree",
        cases.len() - differ.len(),
        cases.len()
    );
    grader_tests::assert_none_differ(&differ);
}

const BASIC: [&str; 2] = ["reasoning", "answer"];

/// The cases of verifiers' `tests/test_xml_parser.py` and `tests/test_think_parser.py`, with
/// the values those tests assert checked here too, and two of `MaybeThinkParser`.
#[test]
fn the_anchors_own_cases_agree() {
    let alternatives = json!(["reasoning", ["code", "answer"]]);
    let simple = "\n        <reasoning>\n        Let me think about this problem step by step.\n        </reasoning>\n        <answer>\n        The final answer is 42.\n        </answer>\n        ";
    let with_code = "\n        <reasoning>\n        First, I need to understand the problem.\n        </reasoning>\n        <code>\n        def solve(): return 42\n        </code>\n        ";
    let think = "<think>\n        Let me think about this problem.\n        I need to consider multiple factors.\n        </think>\n        The final answer is 42.";
    let cases = vec![
        json!({"f": "parse", "fields": BASIC, "text": simple}),
        json!({"f": "parse", "fields": alternatives, "text": with_code}),
        json!({"f": "parse", "fields": BASIC, "text": "<reasoning>Only reasoning here</reasoning>"}),
        json!({"f": "parse", "fields": BASIC, "text": "<reasoning></reasoning><answer></answer>"}),
        json!({"f": "parse", "fields": BASIC, "text": "<answer>  spaced content  </answer>"}),
        json!({"f": "parse_answer_messages", "fields": BASIC, "messages": [
            "<reasoning>Let me think</reasoning><answer>42</answer>",
            "<reasoning>Actually, let me reconsider</reasoning><answer>43</answer>"]}),
        json!({"f": "parse_answer", "fields": BASIC, "text":
            "<answer>44</answer><reasoning>Actually, that's not right either.</reasoning><answer>45</answer>"}),
        json!({"f": "parse_answer_messages", "fields": BASIC, "messages": [
            "<answer>44</answer><reasoning>Actually, that's not right either.</reasoning><answer>45</answer>"]}),
        json!({"f": "parse_answer_messages", "fields": BASIC, "messages": ["<reasoning>Only reasoning here</reasoning>"]}),
        json!({"f": "format_reward", "fields": BASIC, "messages": ["<reasoning>Good reasoning</reasoning><answer>42</answer>"]}),
        json!({"f": "format_reward", "fields": BASIC, "messages": ["Just plain text without XML"]}),
        json!({"f": "think_parse", "text": think}),
        json!({"f": "think_parse", "text": "Just a simple answer without thinking tags."}),
        json!({"f": "think_parse", "text": "<think>First thought</think>\n        Some intermediate text.\n        <think>Second thought</think>\n        Final answer here."}),
        json!({"f": "think_parse", "text": "<think>Some thinking</think>"}),
        json!({"f": "think_parse", "text": "<think>\n        Thinking process here.\n        </think>\n        \n        Answer with spaces around it.\n        \n        "}),
        json!({"f": "think_format_reward", "messages": ["<think>Let me think</think>Final answer"]}),
        json!({"f": "think_format_reward", "messages": ["Just an answer without thinking"]}),
        json!({"f": "think_format_reward", "messages": ["<think>First</think><think>Second</think>Answer"]}),
        json!({"f": "think_format_reward", "messages": ["<think>Only thinking</think>"]}),
        json!({"f": "think_format_reward", "messages": [
            "<think>Good thinking</think>Good answer", "Bad answer without thinking",
            "<think>More thinking</think>Another good answer"]}),
        json!({"f": "think_format_reward", "messages": []}),
        json!({"f": "think_parse_answer", "messages": ["<think>Let me calculate</think>The answer is 4"]}),
        json!({"f": "think_parse", "text": "<think>Calculating...</think>Result: 42"}),
        json!({"f": "maybe_think_parse", "text": "<think>Let me think</think>Final answer"}),
        json!({"f": "maybe_think_parse", "text": "  No thinking, just the answer.  "}),
    ];
    // What verifiers' own tests assert, checked without Python.
    let expected = [
        json!({"reasoning": "Let me think about this problem step by step.", "answer": "The final answer is 42."}),
        json!({"reasoning": "First, I need to understand the problem.", "code": "def solve(): return 42", "answer": null}),
        json!({"reasoning": "Only reasoning here", "answer": null}),
        json!({"reasoning": "", "answer": ""}),
        json!({"reasoning": null, "answer": "spaced content"}),
        json!("43"),
        json!("45"),
        // The test comes from a later revision of verifiers' repository, which reads each
        // message's last answer; the released 0.3.1 reads its first.
        json!("44"),
        json!(null),
        json!("1.0"),
        json!("0.2"),
        json!("The final answer is 42."),
        json!(""),
        json!("Final answer here."),
        json!(""),
        json!("Answer with spaces around it."),
        json!("1.0"),
        json!("0.0"),
        json!("0.0"),
        json!("0.0"),
        float(2.0 / 3.0),
        json!("0.0"),
        json!("The answer is 4"),
        json!("Result: 42"),
        json!("Final answer"),
        json!("No thinking, just the answer."),
    ];
    assert_eq!(cases.len(), expected.len());
    for (case, expected) in cases.iter().zip(&expected) {
        assert_eq!(&run(case), expected, "{case}");
    }
    assert_agree("verifiers' own cases", &cases);
}

/// Pieces random texts are made of: the tags in several spellings, whitespace of both
/// languages' kinds (`\x1c`–`\x1f` is whitespace in Python only, U+200B and U+FEFF in
/// neither), and unicode.
#[rustfmt::skip]
const PIECES: &[&str] = &[
    "<answer>", "</answer>", "<answer>", "</answer>", "<reasoning>", "</reasoning>", "<think>",
    "</think>", "<think>", "</think>", "<result>", "</result>", "<code>", "</code>", "<answer >",
    "</ answer>", "<Answer>", "<", ">", "/", "</", " ", "  ", "\n", "\t", "\r\n", "\u{a0}",
    "\u{1c}", "\u{1f}", "\u{85}", "\u{2028}", "\u{3000}", "\u{200b}", "\u{feff}", "42", "x",
    "é", "日本", "😀", "e\u{301}", "answer", "think", "\u{202e}", "\u{0}", "<réponse>",
    "</réponse>",
];

#[rustfmt::skip]
const FIELDS: &[&str] = &[
    r#"["reasoning", "answer"]"#, r#"["think", "answer"]"#, r#"["reasoning", ["code", "answer"]]"#,
    r#"[["answer", "result"]]"#, r#"["think", ["answer", "result"]]"#, r#"["answer"]"#,
    r#"["code", "reasoning", "answer"]"#, r#"[["think", "reasoning"], "answer", ["result", "answer"]]"#,
    r#"["think", ["réponse", "answer"]]"#,
];

fn random_text(rng: &mut Rng) -> String {
    if rng.chance(3) {
        // A well-formed answer, then damaged.
        let space = |rng: &mut Rng| {
            (*rng.pick(&["", " ", "\n", "\n\n  ", "\u{1c}", "\u{3000}"])).to_owned()
        };
        let mut text = format!(
            "{}<think>{}{}{}</think>{}<answer>{}{}{}</answer>{}",
            space(rng),
            space(rng),
            rng.pick::<&str>(&["6 × 7", "hm", "", "<answer>1</answer>"]),
            space(rng),
            space(rng),
            space(rng),
            rng.pick::<&str>(&["42", "", "x y", "😀"]),
            space(rng),
            space(rng),
        );
        for _ in 0..rng.below(3) {
            let at = rng.below(text.len() + 1);
            if text.is_char_boundary(at) {
                text.insert_str(at, rng.pick::<&str>(PIECES));
            }
        }
        if rng.chance(3) {
            let cut = rng.below(text.len() + 1);
            if text.is_char_boundary(cut) {
                text.truncate(cut);
            }
        }
        text
    } else {
        (0..rng.below(16)).map(|_| *rng.pick(PIECES)).collect()
    }
}

#[test]
fn generated_texts_agree() {
    let mut rng = Rng(0xF0_4D_A7);
    let mut cases = Vec::new();
    for _ in 0..2500 {
        let text = random_text(&mut rng);
        let fields: Value = serde_json::from_str(rng.pick::<&str>(FIELDS)).expect("fields");
        let answer_field = *rng.pick(&["answer", "answer", "result", "code", "missing"]);
        for last in [false, true] {
            cases.push(json!({"f": "parse", "fields": fields, "text": text, "last": last}));
        }
        cases.push(json!({"f": "parse_answer", "fields": fields, "answer_field": answer_field, "text": text}));
        cases.push(json!({"f": "format_reward", "fields": fields, "messages": [text]}));
        cases.push(json!({"f": "think_parse", "text": text}));
        cases.push(json!({"f": "think_format_reward", "messages": [text]}));
        cases.push(json!({"f": "maybe_think_parse", "text": text}));
    }
    for _ in 0..1000 {
        let fields: Value = serde_json::from_str(rng.pick::<&str>(FIELDS)).expect("fields");
        let messages: Vec<String> = (0..rng.below(5)).map(|_| random_text(&mut rng)).collect();
        for f in [
            "parse_answer_messages",
            "format_reward",
            "think_format_reward",
            "think_parse_answer",
        ] {
            cases.push(json!({"f": f, "fields": fields, "messages": messages}));
        }
    }
    // Enough of the texts must parse, score in between, and follow the think format.
    let answers = cases
        .iter()
        .filter(|c| c["f"] == "parse_answer" && !run(c).is_null())
        .count();
    let between = cases
        .iter()
        .filter(|c| c["f"] == "format_reward")
        .filter(|c| {
            run(c)
                .as_str()
                .is_some_and(|s| !["0.0", "0.2", "1.0"].contains(&s))
        })
        .count();
    let think = cases
        .iter()
        .filter(|c| c["f"] == "think_format_reward" && run(c) == "1.0")
        .count();
    eprintln!(
        "{answers} texts with an answer, {between} format rewards in between, {think} following the think format"
    );
    assert!(
        answers > 150 && between > 300 && think > 100,
        "{answers} {between} {think}"
    );
    assert_agree("generated", &cases);
}

/// Nesting 10 000 deep, repeated sections and unclosed tags: small enough for Python's
/// regular expressions to answer, compared with them.
#[test]
fn deep_and_repeated_tags_agree() {
    let deep = "<answer>".repeat(10_000) + "x" + &"</answer>".repeat(10_000);
    let deep_think = "<think>".repeat(10_000) + "x" + &"</think>".repeat(10_000) + "y";
    let repeated = "<answer> 1 </answer>\n".repeat(10_000);
    // Python tries each opening tag against the whole rest: fewer of them, to stay quick.
    let unclosed = "<answer>".repeat(2_000);
    let stray = "</answer><answer>".repeat(10_000);
    let mut cases = Vec::new();
    for text in [&deep, &deep_think, &repeated, &unclosed, &stray] {
        for last in [false, true] {
            cases.push(
                json!({"f": "parse", "fields": ["think", "answer"], "text": text, "last": last}),
            );
        }
        cases.push(json!({"f": "parse_answer", "fields": ["think", "answer"], "text": text}));
        cases.push(
            json!({"f": "format_reward", "fields": ["think", "answer"], "messages": [text, text]}),
        );
        cases.push(json!({"f": "think_parse", "text": text}));
        cases.push(json!({"f": "think_format_reward", "messages": [text]}));
    }
    let parser = XmlParser::new(["think", "answer"]).expect("valid");
    assert_eq!(parser.parse(&deep).get("answer"), Some(&deep[8..80_001]));
    assert_eq!(parser.parse_answer(&repeated), Some("1"));
    assert_eq!(parser.parse_answer(&unclosed), None);
    assert_agree("deep and repeated", &cases);
}

#[test]
fn inputs_built_to_hurt_get_a_bounded_answer() {
    let parser =
        XmlParser::new([Field::from("think"), Field::any_of(["answer", "result"])]).expect("valid");
    // Megabytes of opening tags and no closing one: Python's lazy expression would try every
    // start against the whole rest; this reads the text once per tag.
    let unclosed = "<answer>".repeat(500_000);
    assert_eq!(parser.parse_answer(&unclosed), None);
    assert_eq!(parser.parse_last(&unclosed).get("answer"), None);
    assert_eq!(parser.format_score(&unclosed), 0.2);
    // Megabytes inside one section, and a million sections.
    let long = format!(
        "<think>{}</think><answer>{}</answer>",
        "é".repeat(2_000_000),
        "😀".repeat(1_000_000)
    );
    assert_eq!(
        parser.parse(&long).get("answer").map(str::len),
        Some(4_000_000)
    );
    assert_eq!(parser.format_reward(&[&long]), 1.0);
    let many = "<result>7</result>".repeat(1_000_000);
    assert_eq!(parser.parse_last(&many).get("result"), Some("7"));
    assert_eq!(
        parser
            .clone()
            .with_answer_field("result")
            .parse_answer(&many),
        Some("7")
    );
    // Tags nested 10 000 deep, for the think format too.
    let nested = "<think>".repeat(10_000) + &"</think>".repeat(10_000) + "answer";
    assert!(!think_format(&nested));
    assert_eq!(think_answer(&nested), "answer");
    assert_eq!(think_format_reward(&[nested.as_str(); 3]), 0.0);
    // Whitespace only, control characters and unpaired marks.
    let odd = "\u{1c}\u{1d}\u{1e}\u{1f}<answer>\u{0}\u{202e}\u{fffd}</answer>\u{85}";
    assert_eq!(parser.parse_answer(odd), Some("\u{0}\u{202e}\u{fffd}"));
    assert_eq!(maybe_think_answer("\u{2028}\u{3000}"), "");
}

#[test]
fn parsers_verifiers_accepts_with_unusable_tags_are_typed_errors() {
    assert!(matches!(
        XmlParser::new(Vec::<Field>::new()),
        Err(FormatError::NoFields {
            grader: "xml_parser"
        })
    ));
    for tag in ["a.b", "ans|wer", "a*", "x y", "<a>", ""] {
        let error = XmlParser::new([tag]).expect_err("a bad tag");
        assert!(
            matches!(&error, FormatError::BadTag { tag: t, .. } if t == tag),
            "{error}"
        );
        assert!(
            error.to_string().starts_with("xml_parser: tag name"),
            "{error}"
        );
    }
}
