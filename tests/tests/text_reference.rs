//! The reference's own tests of its text helpers, ported; the Python subtleties each with an
//! example; and properties that hold for every input.
#![allow(clippy::approx_constant)] // 3.14 is an answer an agent writes, not π

use grader_core::text::{
    ContainsOptions, ExactMatchOptions, NumericMatchOptions, contains, contains_all,
    contains_all_with, contains_any, contains_any_with, contains_with, exact_match,
    exact_match_with, f1_score, normalize, numeric_match, numeric_match_with,
};
use proptest::prelude::*;

const RAW: ExactMatchOptions = ExactMatchOptions {
    normalize_text: false,
};
const CASE_SENSITIVE: ContainsOptions = ContainsOptions {
    case_sensitive: true,
};

fn within(tolerance: f64) -> NumericMatchOptions {
    NumericMatchOptions { tolerance }
}

// ─── The reference's tests ──────────────────────────────────────────────────────────────────

#[test]
fn normalize_lowercases_and_strips_punctuation_articles_and_spaces() {
    assert_eq!(normalize("  The Answer is: 42! "), "answer is 42");
    assert_eq!(normalize("Hello World"), "hello world");
    assert_eq!(normalize("answer: 42!"), "answer 42");
    assert_eq!(normalize("The answer is a test"), "answer is test");
    assert_eq!(normalize("  lots   of    space  "), "lots of space");
    // The reference's `normalize(42)` is `normalize(str(42))`.
    assert_eq!(normalize(&42.to_string()), "42");
}

#[test]
fn exact_match_compares_normalized_or_raw_text() {
    assert_eq!(exact_match("The Answer!", "answer"), 1.0);
    assert_eq!(exact_match("Germany", "france"), 0.0);
    assert_eq!(exact_match("Paris.", "Paris"), 1.0);
    assert_eq!(exact_match("The capital is Paris", "capital is Paris"), 1.0);
    assert_eq!(exact_match_with("Paris", "Paris", RAW), 1.0);
    assert_eq!(exact_match_with("The Paris!", "Paris", RAW), 0.0);
    assert_eq!(exact_match(&42.to_string(), "42"), 1.0);
    assert_eq!(exact_match("", ""), 1.0);
    assert_eq!(exact_match("hello", "world"), 0.0);
}

#[test]
fn contains_family_finds_substrings() {
    assert_eq!(contains("The capital of France is Paris", "paris"), 1.0);
    assert_eq!(contains("The capital of France is Paris", "berlin"), 0.0);
    assert_eq!(contains_with("Paris", "paris", CASE_SENSITIVE), 0.0);
    assert_eq!(contains_with("Paris", "Paris", CASE_SENSITIVE), 1.0);

    let cars = ["toyota", "honda", "nissan"];
    assert_eq!(contains_any("I like Toyota cars", &cars), 1.0);
    assert_eq!(contains_any("I like BMW cars", &cars), 0.0);
    assert_eq!(contains_any::<&str>("anything", &[]), 0.0);
    assert_eq!(
        contains_any_with("Toyota", &["toyota"], CASE_SENSITIVE),
        0.0
    );

    let pair = vec![String::from("toyota"), String::from("honda")];
    assert_eq!(contains_all("Toyota and Honda are Japanese", &pair), 1.0);
    assert_eq!(contains_all("Toyota is Japanese", &pair), 0.0);
    assert_eq!(contains_all::<String>("anything", &[]), 1.0);
    assert_eq!(
        contains_all_with("Toyota and Honda", &pair, CASE_SENSITIVE),
        0.0
    );
}

#[test]
fn numeric_match_reads_the_first_number() {
    assert_eq!(numeric_match("The answer is 42", 42.0), 1.0);
    assert_eq!(numeric_match("Result: 3.14", 3.14), 1.0);
    assert_eq!(numeric_match("no numbers", 42.0), 0.0);
    assert_eq!(numeric_match("The answer is 41", 42.0), 0.0);
    assert_eq!(
        numeric_match_with("The answer is 41.5", 42.0, within(1.0)),
        1.0
    );
    assert_eq!(
        numeric_match_with("The answer is 40", 42.0, within(1.0)),
        0.0
    );
    assert_eq!(numeric_match("Temperature is -5 degrees", -5.0), 1.0);
    assert_eq!(numeric_match("There are 3 items and 5 left", 3.0), 1.0);
}

#[test]
fn f1_score_is_token_overlap() {
    assert_eq!(f1_score("Paris", "Paris"), 1.0);
    // pred = [capital, is, paris, france], ref = [paris]: P = 1/4, R = 1, F1 = 0.4.
    assert_eq!(f1_score("The capital is Paris, France", "Paris"), 0.4);
    assert_eq!(f1_score("Berlin", "Paris"), 0.0);
    assert_eq!(f1_score("", "Paris"), 0.0);
    assert_eq!(f1_score("Paris", ""), 0.0);
    assert_eq!(f1_score("New York City", "New York City"), 1.0);
    let superset = f1_score("I believe the answer is 42 degrees", "42 degrees");
    assert!(0.0 < superset && superset < 1.0);
    assert_eq!(
        f1_score("I think 42 degrees", "42 degrees"),
        2.0 / 3.0 * 1.0
    );
    assert_eq!(f1_score("42", "42 degrees celsius"), 0.5);
    assert_eq!(f1_score("The PARIS!", "paris"), 1.0);
}

// ─── Python's semantics where they are subtle ───────────────────────────────────────────────

#[test]
fn word_characters_are_pythons() {
    // Combining marks are not `\w` to Python: the accent splits the word.
    assert_eq!(normalize("cafe\u{301}"), "cafe");
    assert_eq!(normalize("e\u{301}x"), "e x");
    // Devanagari vowel signs (spacing marks) are not `\w` either.
    assert_eq!(normalize("हिन्दी"), "ह न द");
    // Superscripts, fractions and Roman numerals are (`isalnum()` counts numerics).
    assert_eq!(normalize("x² ½ Ⅻ"), "x² ½ ⅻ");
    // The underscore is a word character; articles inside words stay.
    assert_eq!(normalize("the_end Theatre an-them"), "the_end theatre them");
}

#[test]
fn whitespace_is_pythons() {
    // U+001C..U+001F and U+0085 are whitespace to Python's `str.strip()`.
    assert_eq!(exact_match_with("\u{1c}Paris\u{85}", "paris", RAW), 1.0);
    // U+200B (zero width space) is not whitespace, so raw comparison keeps it.
    assert_eq!(exact_match_with("\u{200B}Paris", "paris", RAW), 0.0);
    assert_eq!(normalize("a\u{3000}b\u{a0}c"), "b c");
}

#[test]
fn lowercasing_is_pythons() {
    // `İ` lowercases to `i` and a combining dot, which is not a word character.
    assert_eq!(normalize("İstanbul"), "i stanbul");
    assert_eq!(contains("İ", "\u{307}"), 1.0);
    assert_eq!(exact_match_with("İ", "i\u{307}", RAW), 1.0);
    // Final sigma: a capital sigma at the end of a word lowercases to `ς`.
    assert_eq!(normalize("ΟΔΟΣ ΣΑ"), "οδος σα");
    assert_eq!(exact_match_with("ΟΔΟΣ", "οδος", RAW), 1.0);
    assert_eq!(exact_match_with("ΟΔΟΣ", "οδοσ", RAW), 0.0);
    assert_eq!(contains("ΟΔΟΣ", "ος"), 1.0);
    // Case-ignorable characters between are skipped; a lone sigma is not final.
    assert_eq!(normalize("ΑΣ' x"), "ας x");
    assert_eq!(normalize("ΑΣ'Α"), "ασ α");
    assert_eq!(normalize("Σ"), "σ");
    // Lowercasing is not case folding: `ß` and `ss` differ.
    assert_eq!(contains("STRASSE", "straße"), 0.0);
}

#[test]
fn numbers_follow_the_current_pattern_and_python_float() {
    assert_eq!(numeric_match("1e5", 100_000.0), 1.0);
    assert_eq!(numeric_match(".5", 0.5), 1.0);
    assert_eq!(numeric_match("1,000", 1.0), 1.0);
    assert_eq!(numeric_match("1,000", 1000.0), 0.0);
    assert_eq!(numeric_match("٣", 3.0), 1.0);
    assert_eq!(numeric_match("٣.٥e١", 35.0), 1.0);
    assert_eq!(numeric_match("𝟏𝟐 apples", 12.0), 1.0);
    // A superscript is a digit to `isdigit()` but not a decimal, so not `\d`.
    assert_eq!(numeric_match("² and 7", 7.0), 1.0);
    assert_eq!(numeric_match("v1.2.3", 1.2), 1.0);
    assert_eq!(numeric_match("1e999", f64::INFINITY), 0.0);
    assert_eq!(
        numeric_match_with("1e999", f64::INFINITY, within(f64::INFINITY)),
        0.0
    );
    assert_eq!(
        numeric_match_with("0", f64::NAN, within(f64::INFINITY)),
        0.0
    );
    assert_eq!(numeric_match_with("5", 5.0, within(-1.0)), 0.0);
}

#[test]
fn f1_counts_common_tokens_as_a_multiset() {
    assert_eq!(f1_score("paris paris paris", "paris"), 0.5);
    assert_eq!(f1_score("paris paris", "paris paris"), 1.0);
    assert_eq!(f1_score("a the an", "the"), 0.0);
}

// ─── Properties ─────────────────────────────────────────────────────────────────────────────

/// Strings over a mix of scripts, digits, marks, spaces and punctuation.
fn mixed_text() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "a",
        "An",
        "THE",
        "Paris",
        "x",
        "_",
        "42",
        "-3.5",
        "1e5",
        ".",
        ",",
        "!",
        "'",
        " ",
        "\t",
        "\u{1c}",
        "\u{85}",
        "\u{a0}",
        "\u{3000}",
        "\u{200B}",
        "é",
        "\u{301}",
        "İ",
        "Σ",
        "ΟΔΟΣ",
        "ς",
        "ß",
        "ǅ",
        "²",
        "½",
        "٣",
        "𝟗",
        "中文",
        "हिन्दी",
        "😀",
        "ʰ",
        "·",
    ]);
    prop::collection::vec(
        prop_oneof![
            pieces.prop_map(str::to_owned),
            any::<char>().prop_map(String::from)
        ],
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn normalize_is_idempotent(text in mixed_text()) {
        let once = normalize(&text);
        prop_assert_eq!(normalize(&once), once);
    }

    #[test]
    fn a_text_matches_itself(text in mixed_text()) {
        prop_assert_eq!(exact_match(&text, &text), 1.0);
        prop_assert_eq!(exact_match_with(&text, &text, RAW), 1.0);
        prop_assert_eq!(contains(&text, &text), 1.0);
    }

    #[test]
    fn f1_is_symmetric_and_in_the_unit_interval(a in mixed_text(), b in mixed_text()) {
        let ab = f1_score(&a, &b);
        let ba = f1_score(&b, &a);
        prop_assert!((0.0..=1.0).contains(&ab), "{ab}");
        // 2PR/(P+R) with P and R swapped can round differently in the last place.
        prop_assert!((ab - ba).abs() <= 1e-15, "{ab} {ba}");
        let same = f1_score(&a, &a);
        prop_assert!(same == 1.0 || (same == 0.0 && normalize(&a).is_empty()));
    }

    #[test]
    fn the_first_number_written_is_read(value in -1e12_f64..1e12, text in mixed_text()) {
        let answer = format!("= {value:?} {text}");
        prop_assert_eq!(numeric_match(&answer, value), 1.0);
    }
}
