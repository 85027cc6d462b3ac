//! grader-core's `similarity` module gives rapidfuzz 3.14.3's edit distances, rouge-score
//! 0.1.2's ROUGE and sacrebleu 2.5.1's sentence BLEU and chrF, bit for bit, on hand-picked
//! and thousands of seeded random pairs of texts.
//!
//! One run of `scripts/similarity_cases.py` (the packages themselves) scores every case.

use grader_core::similarity::{
    self, MAX_CELLS, RougeScore, SimilarityError, bleu, chrf, indel, levenshtein,
    levenshtein_similarity, ratio, rouge_l, rouge_n, rouge_tokens, tokenize_13a,
};
use grader_tests::python::{run_script, similarity_python};
use grader_tests::rng::Rng;
use serde_json::{Value, json};

const SCRIPT: &str = include_str!("../../scripts/similarity_cases.py");

fn float(x: f64) -> Value {
    // Python's `repr` and Rust's `{:?}` both write the shortest text that reads back exactly;
    // compare what they read back as.
    Value::from(format!("{x:?}"))
}

fn rouge_value(score: RougeScore) -> Value {
    json!([
        float(score.precision),
        float(score.recall),
        float(score.fmeasure)
    ])
}

/// grader-core's result for `case`, in the script's form.
fn run(case: &Value) -> Value {
    let a = case["a"].as_str().expect("a");
    let b = case["b"].as_str().unwrap_or("");
    match case["f"].as_str().expect("f") {
        "levenshtein" => levenshtein(a, b).expect("small").into(),
        "levenshtein_similarity" => float(levenshtein_similarity(a, b).expect("small")),
        "indel" => indel(a, b).expect("small").into(),
        "ratio" => float(ratio(a, b).expect("small")),
        "rouge_n" => {
            let n = usize::try_from(case["n"].as_u64().expect("n")).expect("fits");
            rouge_value(rouge_n(a, b, n).expect("n > 0"))
        }
        "rouge_l" => rouge_value(rouge_l(a, b).expect("small")),
        "tokens" => rouge_tokens(a).into(),
        "tokens_13a" => tokenize_13a(a).into(),
        "bleu" | "chrf" => {
            let refs: Vec<&str> = case["refs"]
                .as_array()
                .expect("refs")
                .iter()
                .map(|r| r.as_str().expect("a reference"))
                .collect();
            let score = if case["f"] == "bleu" {
                bleu(a, &refs)
            } else {
                chrf(a, &refs)
            };
            float(score.expect("references"))
        }
        other => panic!("unknown case {other}"),
    }
}

/// Reads every float the script wrote (a `repr` string) as a number, so that `1.0` and `1`
/// compare equal where both languages mean the same double.
fn numbers(value: &Value) -> Value {
    match value {
        Value::String(s) => s
            .parse::<f64>()
            .map_or_else(|_| value.clone(), |x| json!(x)),
        Value::Array(items) => items.iter().map(numbers).collect(),
        other => other.clone(),
    }
}

fn differ(cases: &[Value]) -> Option<Vec<String>> {
    let python = similarity_python(env!("CARGO_TARGET_TMPDIR"))?;
    let output = run_script(&python, SCRIPT, &Value::from(cases.to_vec()).to_string());
    let theirs: Vec<Value> = serde_json::from_str(&output).expect("the script's JSON");
    assert_eq!(theirs.len(), cases.len());
    Some(
        cases
            .iter()
            .zip(&theirs)
            .filter_map(|(case, theirs)| {
                let (ours, theirs) = (numbers(&run(case)), numbers(theirs));
                (ours != theirs).then(|| format!("{case}\n  python: {theirs}\n  ours:   {ours}"))
            })
            .collect(),
    )
}

/// Every comparison of `a` and `b`.
fn all_cases(a: &str, b: &str, out: &mut Vec<Value>) {
    for f in [
        "levenshtein",
        "levenshtein_similarity",
        "indel",
        "ratio",
        "rouge_l",
    ] {
        out.push(json!({"f": f, "a": a, "b": b}));
    }
    for n in 1..=3 {
        out.push(json!({"f": "rouge_n", "a": a, "b": b, "n": n}));
    }
    out.push(json!({"f": "tokens", "a": a}));
    out.push(json!({"f": "tokens_13a", "a": a}));
    for f in ["bleu", "chrf"] {
        out.push(json!({"f": f, "a": a, "refs": [b]}));
        out.push(json!({"f": f, "a": b, "refs": [a, format!("{b} {a}")]}));
    }
}

#[test]
fn hand_picked_pairs_agree() {
    let mut cases = Vec::new();
    for (a, b) in [
        ("", ""),
        ("", "abc"),
        ("kitten", "sitting"),
        ("this is a test", "this is a test!"),
        ("The cat sat on the mat.", "the cat is on the mat"),
        ("the the the the", "the"),
        ("café", "cafe"),
        ("😀 emoji 👍🏽", "emoji 😀"),
        ("İstanbul K", "istanbul k"),
        ("ΟΔΟΣ", "οδος"),
        ("police killed the gunman", "the gunman police killed"),
        ("a b c d e f", "f e d c b a"),
        ("2nd-best ranking, 3.14", "2nd best ranking 3 14"),
        (
            "It's 3.5-4 &amp; more.<skipped> a-\nb",
            "It is 3.5 - 4 & more . ab",
        ),
        (
            "Hello, world!! (x+y)/2 = z; {a|b} ~ [c] @ #1 $2 %3 ^4 _5 `6`",
            "Hello world",
        ),
        ("1,000.5 vs 1 , 000 . 5 ... ,,, .a a. 5-", "1,000.5"),
    ] {
        all_cases(a, b, &mut cases);
    }
    let Some(differ) = differ(&cases) else {
        return;
    };
    eprintln!(
        "hand-picked: {} of {} agree",
        cases.len() - differ.len(),
        cases.len()
    );
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

#[rustfmt::skip]
const WORDS: &[&str] = &[
    "the", "The", "cat", "sat", "on", "mat", "a", "dog", "is", "was", "big", "Big", "2nd", "42",
    "café", "naïve", "İ", "ß", "ΟΔΟΣ", "中文", "😀", "-", ",", ".", "!", "'s", "\n", " ", "x",
    "3.5", "1,000", "5-", "&amp;", "&lt;", "(", ")", "\"", "$", "<skipped>", "-\n", "\t",
];

fn random_text(rng: &mut Rng) -> String {
    let mut out = String::new();
    for _ in 0..rng.below(12) {
        out.push_str(rng.pick::<&str>(WORDS));
        if rng.below(3) > 0 {
            out.push(' ');
        }
    }
    out
}

/// `text` with a few words changed, dropped or moved.
fn edited(rng: &mut Rng, text: &str) -> String {
    let mut words: Vec<String> = text.split(' ').map(str::to_owned).collect();
    for _ in 0..rng.below(4) {
        if words.is_empty() {
            break;
        }
        let i = rng.below(words.len());
        match rng.below(3) {
            0 => words[i] = (*rng.pick(WORDS)).to_owned(),
            1 => {
                words.remove(i);
            }
            _ => {
                let word = words.remove(i);
                let j = rng.below(words.len() + 1);
                words.insert(j, word);
            }
        }
    }
    words.join(" ")
}

#[test]
fn generated_pairs_agree() {
    let mut rng = Rng(0x5EED_51A1);
    let mut cases = Vec::new();
    for _ in 0..1200 {
        let a = random_text(&mut rng);
        let b = if rng.below(3) == 0 {
            random_text(&mut rng)
        } else {
            edited(&mut rng, &a)
        };
        all_cases(&a, &b, &mut cases);
    }
    // Long texts: tables of several 64-row blocks.
    for _ in 0..150 {
        let a: String = (0..8).map(|_| random_text(&mut rng)).collect();
        let b = edited(&mut rng, &a);
        all_cases(&a, &b, &mut cases);
    }
    let Some(differ) = differ(&cases) else {
        return;
    };
    eprintln!(
        "generated: {} of {} agree",
        cases.len() - differ.len(),
        cases.len()
    );
    // BLEU and chrF take values across their range, not only 0 and 100.
    for f in ["bleu", "chrf"] {
        let between = cases
            .iter()
            .filter(|c| c["f"] == f)
            .filter_map(|c| numbers(&run(c)).as_f64())
            .filter(|&x| x > 1.0 && x < 99.0)
            .count();
        eprintln!("  {f}: {between} strictly between 1 and 99");
        assert!(between > 500, "{f}: {between}");
    }
    grader_tests::assert_none_differ(&differ);
}

/// Long texts, up to 100 000 characters: copies with a handful to thousands of edits (the
/// edit distance's band of 256, 2 048 or 8 192 rows, or the whole table) and different texts.
#[test]
fn long_texts_agree() {
    let mut rng = Rng(0x1005_7E57);
    let mut cases = Vec::new();
    for (length, edits) in [
        (3_000, 5),
        (5_000, 200),
        (20_000, 40),
        (20_000, 900),
        (40_000, 3_000),
        (100_000, 30),
        (100_000, 2_500),
    ] {
        let mut a = String::new();
        while a.chars().count() < length {
            a.push_str(&random_text(&mut rng));
        }
        let mut words: Vec<String> = a.split(' ').map(str::to_owned).collect();
        for _ in 0..edits {
            let i = rng.below(words.len());
            words[i] = (*rng.pick(WORDS)).to_owned();
        }
        let b = words.join(" ");
        for f in ["levenshtein", "levenshtein_similarity"] {
            cases.push(json!({"f": f, "a": a, "b": b}));
        }
        if length <= 20_000 {
            let mut other = String::new();
            while other.chars().count() < length {
                other.push_str(&random_text(&mut rng));
            }
            cases.push(json!({"f": "levenshtein", "a": a, "b": other}));
        }
    }
    let Some(differ) = differ(&cases) else {
        return;
    };
    grader_tests::assert_none_differ(&differ);
}

#[test]
fn large_inputs_get_a_typed_error() {
    let a = "ab".repeat(100_001);
    let b = "ba".repeat(100_001);
    assert!(matches!(
        levenshtein(&a, &b),
        Err(SimilarityError::TooLarge {
            grader: "levenshtein",
            limit: MAX_CELLS,
            ..
        })
    ));
    assert!(matches!(
        ratio(&a, &b),
        Err(SimilarityError::TooLarge { .. })
    ));
    // Megabytes that differ only in one place: the common affixes cost nothing.
    let long = "x".repeat(4 << 20);
    assert_eq!(levenshtein(&long, &format!("{long}y")), Ok(1));
    let words = "w ".repeat(100_001);
    assert!(matches!(
        rouge_l(&words, &words),
        Err(SimilarityError::TooLarge { .. })
    ));
    assert_eq!(rouge_n(&words, &words, 2).map(|s| s.fmeasure), Ok(1.0));
    assert!(matches!(
        similarity::rouge_n("a", "a", 0),
        Err(SimilarityError::ZeroN { n: 0, .. })
    ));
}
