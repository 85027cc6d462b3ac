//! grader-core's `math` module against HuggingFace's math-verify 0.9.0 itself: the verdict of
//! `verify(parse(gold), parse(answer))` on math-verify's own test cases
//! (`tests/data/math_verify_cases.json`) and on seeded generated ones, with the agreement
//! floor asserted and every known difference listed, so that a regression fails.
//!
//! One run of `scripts/math_cases.py` (math-verify itself) judges every case.

use grader_core::math::{Limits, MathError, MathVerify, parse, parse_with, verify};
use grader_core::{Gather, OnError};
use grader_tests::python::{math_python, run_script};
use grader_tests::rng::Rng;
use serde_json::{Value, json};

const SCRIPT: &str = include_str!("../../scripts/math_cases.py");
const CASES: &str = include_str!("../data/math_verify_cases.json");

/// Math-verify's verdicts, or `None` where python3 is missing outside CI.
fn anchor(cases: &[(String, String)]) -> Option<Vec<bool>> {
    let python = math_python(env!("CARGO_TARGET_TMPDIR"))?;
    let input = serde_json::to_string(cases).expect("cases as JSON");
    let output = run_script(&python, SCRIPT, &input);
    let verdicts: Vec<bool> = serde_json::from_str(&output).expect("the script's JSON");
    assert_eq!(verdicts.len(), cases.len());
    Some(verdicts)
}

/// The cases where our verdict differs from math-verify's, as `(index, gold, answer, theirs)`.
fn differences(cases: &[(String, String)], theirs: &[bool]) -> Vec<(usize, String, String, bool)> {
    cases
        .iter()
        .zip(theirs)
        .enumerate()
        .filter_map(|(i, ((gold, answer), &theirs))| {
            let ours = verify(gold, answer).unwrap_or(false);
            (ours != theirs).then(|| (i, gold.clone(), answer.clone(), theirs))
        })
        .collect()
}

fn suite_cases() -> Vec<(String, String)> {
    let doc: Value = serde_json::from_str(CASES).expect("the cases file");
    assert!(doc["source"].as_str().expect("a source").contains("Apache"));
    doc["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| {
            (
                c[0].as_str().expect("gold").to_owned(),
                c[1].as_str().expect("answer").to_owned(),
            )
        })
        .collect()
}

/// The suite's cases where we differ from math-verify, by index, each for a reason written in
/// docs/graders.md ("Math answers"):
/// - 188: `1 \le |z| \le 3/2` against a union of intervals: sympy's `as_set` solves the
///   absolute value; we turn only relations of a plain variable into intervals.
/// - 194: `p=5,q=2;p=7,q=2` against `(5,2),(7,2)`: latex2sympy groups the assignments into
///   tuples; we read a flat set of equations.
/// - 247: two `\sum` whose factors are written in another order: sums are not parsed here
///   but compared by their text.
const KNOWN_SUITE: &[usize] = &[188, 194, 247];

/// The least share of the suite's cases where we agree (254 of 257).
const SUITE_FLOOR: f64 = 0.98;

#[test]
fn math_verify_suite_agrees() {
    let cases = suite_cases();
    let Some(theirs) = anchor(&cases) else {
        return;
    };
    let differ = differences(&cases, &theirs);
    let agree = cases.len() - differ.len();
    eprintln!("math-verify's suite: {agree} of {} agree", cases.len());
    for (i, gold, answer, theirs) in &differ {
        let short = |s: &str| s.chars().take(90).collect::<String>();
        eprintln!(
            "  #{i} math-verify {theirs}: {:?} | {:?}",
            short(gold),
            short(answer)
        );
        if std::env::var_os("MATH_SHOW").is_some() {
            eprintln!("    ours: {:?}\n          {:?}", parse(gold), parse(answer));
        }
    }
    let unexpected: Vec<usize> = differ
        .iter()
        .map(|d| d.0)
        .filter(|i| !KNOWN_SUITE.contains(i))
        .collect();
    #[allow(clippy::cast_precision_loss)] // counts of a few hundred
    let share = agree as f64 / cases.len() as f64;
    assert!(
        share >= SUITE_FLOOR,
        "agreement {share} under {SUITE_FLOOR}"
    );
    assert!(unexpected.is_empty(), "new differences: {unexpected:?}");
}

fn random_number(rng: &mut Rng) -> String {
    match rng.below(6) {
        0 => format!("{}", rng.below(1000)),
        1 => format!("-{}", rng.below(100) + 1),
        2 => format!("{}.{}", rng.below(100), rng.below(100)),
        3 => format!("\\frac{{{}}}{{{}}}", rng.below(20) + 1, rng.below(20) + 1),
        4 => format!("{}\\sqrt{{{}}}", rng.below(5) + 1, rng.below(20) + 2),
        _ => format!("{},{:03}", rng.below(99) + 1, rng.below(1000)),
    }
}

fn random_variable(rng: &mut Rng) -> &'static str {
    rng.pick::<&str>(&["x", "y", "a", "n"])
}

fn random_answer(rng: &mut Rng) -> String {
    match rng.below(12) {
        0..=2 => random_number(rng),
        3 => format!("x = {}", random_number(rng)),
        4 => format!("({}, {})", rng.below(10), rng.below(10) + 10),
        5 => format!("[{}, {})", rng.below(10), rng.below(10) + 10),
        6 => format!("\\{{{}, {}\\}}", rng.below(10), rng.below(10)),
        7 => format!("{}\\%", rng.below(100)),
        8 => {
            let v = random_variable(rng);
            let (a, b) = (rng.below(9) + 1, rng.below(9) + 1);
            match rng.below(4) {
                0 => format!("{a}{v} + {b}"),
                1 => format!("{b} + {a}{v}"),
                2 => format!("{a}({v} + {b})"),
                _ => format!("{v}^2 + {b}"),
            }
        }
        9 => {
            let v = random_variable(rng);
            let op = *rng.pick::<&str>(&["<", "\\le", ">", "\\geq"]);
            format!("{v} {op} {}", rng.below(20))
        }
        10 => format!("{} \\pm \\sqrt{{{}}}", rng.below(5) + 1, rng.below(10) + 2),
        _ => format!(
            "\\text{{{}}}",
            *rng.pick::<&str>(&["Evelyn", "odd", "even", "B"])
        ),
    }
}

/// A plain-text answer: numbers with units, currency and separators.
fn plain_text(rng: &mut Rng) -> (String, String) {
    let n = rng.below(100_000);
    let gold = format!("{n}");
    let shown = match rng.below(5) {
        0 => format!("The total is ${n}."),
        1 => format!("It takes {n} minutes"),
        2 => format!("so the answer: {}", group_thousands(n)),
        3 => format!("We get {} m²", n + rng.below(2)),
        _ => format!("answer is {n}.0 and that is all"),
    };
    (gold, shown)
}

fn group_thousands(n: usize) -> String {
    if n >= 1000 {
        format!("{},{:03}", n / 1000, n % 1000)
    } else {
        n.to_string()
    }
}

fn wrap(rng: &mut Rng, answer: &str) -> String {
    match rng.below(6) {
        0 => format!("${answer}$"),
        1 => format!("The answer is $\\boxed{{{answer}}}$."),
        2 => format!("We compute step by step.\n\nSo \\[ {answer} \\]"),
        3 => format!("Final Answer: The final answer is ${answer}$. I hope it is correct."),
        4 => format!("Therefore, the answer is {answer}."),
        _ => format!("\\boxed{{{answer}}}"),
    }
}

fn generated_cases() -> Vec<(String, String)> {
    let mut rng = Rng(0x3A7B_1E55);
    let mut cases = Vec::new();
    for _ in 0..600 {
        let gold = random_answer(&mut rng);
        let answer = if rng.below(2) == 0 {
            gold.clone()
        } else {
            random_answer(&mut rng)
        };
        let (gold, answer) = (format!("${gold}$"), wrap(&mut rng, &answer));
        cases.push((gold, answer));
    }
    for _ in 0..200 {
        cases.push(plain_text(&mut rng));
    }
    cases
}

/// The generated cases where we differ from math-verify, by index: none.
const KNOWN_GENERATED: &[usize] = &[];

#[test]
fn generated_cases_agree() {
    let cases = generated_cases();
    let Some(theirs) = anchor(&cases) else {
        return;
    };
    let differ = differences(&cases, &theirs);
    let agree = cases.len() - differ.len();
    eprintln!("generated: {agree} of {} agree", cases.len());
    let positives = theirs.iter().filter(|&&t| t).count();
    eprintln!("  math-verify says true for {positives}");
    assert!(positives > 200 && positives < 700);
    for (i, gold, answer, theirs) in &differ {
        eprintln!("  #{i} math-verify {theirs}: {gold:?} | {answer:?}");
    }
    let unexpected: Vec<usize> = differ
        .iter()
        .map(|d| d.0)
        .filter(|i| !KNOWN_GENERATED.contains(i))
        .collect();
    assert!(unexpected.is_empty(), "new differences: {unexpected:?}");
}

#[test]
fn hostile_inputs_get_a_bounded_typed_answer() {
    // Megabytes of text: past the limit, a typed error.
    let huge = "The answer is 1. ".repeat(70_000);
    assert!(matches!(
        verify("1", &huge),
        Err(MathError::TooLong {
            limit: 1_000_000,
            ..
        })
    ));
    // Under the limit, a long text is searched to its end.
    let long = format!(
        "{}so $\\boxed{{7}}$",
        "filler words $x$ and 3 ".repeat(30_000)
    );
    assert!(verify("7", &long).expect("within the limits"));
    // `\frac` nested 10 000 deep.
    let nested = format!(
        "$\\boxed{{{}1{}}}$",
        "\\frac{1}{".repeat(10_000),
        "}".repeat(10_000)
    );
    assert!(matches!(parse(&nested), Err(MathError::TooLong { .. })));
    let limits = Limits {
        answer: 1 << 20,
        ..Limits::default()
    };
    assert!(matches!(
        parse_with(&nested, &limits),
        Err(MathError::TooDeep { limit: 64, .. })
    ));
    let parens = format!("${}1{}$", "(".repeat(10_000), ")".repeat(10_000));
    assert!(matches!(
        parse_with(&parens, &limits),
        Err(MathError::TooDeep { .. })
    ));
    // Long chains of powers, factorials and percents nest as deeply as brackets do.
    for chain in [
        format!("${}2$", "2^".repeat(1_500)),
        format!("$5{}$", "!".repeat(3_000)),
        format!("$5{}$", "\\%".repeat(1_500)),
        format!("the answer is {}2", "2**".repeat(1_300)),
        format!("${}1$", "-".repeat(3_000)),
        format!("${}x$", "\\sin ".repeat(700)),
    ] {
        assert!(
            matches!(parse(&chain), Err(MathError::TooDeep { limit: 64, .. })),
            "{}",
            &chain[..20]
        );
    }
    // A number with 100 000 digits.
    let digits = format!("$\\boxed{{{}}}$", "9".repeat(100_000));
    assert!(parse(&digits).is_err());
    let plain_digits = format!("the answer is {}", "7".repeat(100_000));
    assert!(matches!(
        parse(&plain_digits),
        Err(MathError::TooManyDigits {
            digits: 100_000,
            ..
        })
    ));
    // Many nodes.
    let sum = format!("${}1$", "1+".repeat(1_500));
    assert!(matches!(parse(&sum), Err(MathError::TooManyNodes { .. })));
    // Multi-byte characters at every odd boundary: no panic, a verdict.
    for text in [
        "é$\\boxed{½}$ü",
        "€1,000.99€",
        "答案是 $\\frac{1}{2}$ 。",
        "$x = 😀$",
        "\\boxed{",
        "$",
        "$$",
        "\\[",
        "answer: ",
        "final answer is",
        "1,",
        "∞ ≤ ≥ ≠ π",
        "\\boxed{\\frac{1}{}}",
        "\\sqrt[",
        "$\\begin{pmatrix}1&2\\\\3$",
    ] {
        for cut in 0..=text.len() {
            if let Some(prefix) = text.get(..cut) {
                let _ = parse(prefix).expect("small inputs are within the limits");
                let _ = verify(prefix, text).expect("small inputs are within the limits");
            }
        }
    }
    // A power too large to compute exactly is compared in floating point.
    assert!(!verify("$2^{100000}$", "$2^{99999}$").expect("within the limits"));
}

#[tokio::test]
async fn the_grader_scores_records_its_arguments_and_names_itself_in_errors()
-> Result<(), Box<dyn std::error::Error>> {
    let (answer, gold) = ("so it is $\\boxed{\\frac{3}{4}}$", "0.75");
    let sub = MathVerify { answer, gold }.grade(1.0).now()?;
    assert_eq!((sub.name(), sub.value()), ("math_verify", 1.0));
    let info = sub.info().expect("info");
    assert_eq!(info["_parameters"], json!({"answer": answer, "gold": gold}));
    assert_eq!(info["answer_parsed"], "3/4");
    assert_eq!(info["gold_parsed"], "0.75");
    let wrong = MathVerify {
        answer: "\\boxed{0.7}",
        gold,
    }
    .grade(1.0)
    .now()?;
    assert_eq!(wrong.value(), 0.0);
    // In a gather beside another grader.
    let result = Gather::new()
        .on_error(OnError::Fail)
        .add(MathVerify { answer, gold }.grade(0.5))
        .add(
            MathVerify {
                answer: "no answer",
                gold,
            }
            .grade(0.5),
        )
        .await?;
    assert_eq!(result.reward(), 0.5);
    // Past a bound: a failure naming the grader and the bound, not a 0.
    let huge = "9".repeat(5_000);
    let error = MathVerify {
        answer: &huge,
        gold,
    }
    .grade(1.0)
    .now()
    .expect_err("past the digit limit");
    let message = error.to_string();
    assert!(message.contains("math_verify"), "{message}");
    assert!(message.contains("digits"), "{message}");
    Ok(())
}
