//! The text helpers give the Python reference's results on the same strings: hand-picked
//! cases, thousands of seeded random strings over a mix of scripts, digits, marks, spaces and
//! punctuation, and probes that cover every code point of planes 0 to 3 and 14.
//!
//! One run of `scripts/text_cases.py` (the reference's own `hud.graders`) scores every case.
#![allow(clippy::approx_constant)] // 3.14 is an answer an agent writes, not π

use grader_core::text::{
    self, ContainsOptions, ExactMatchOptions, NumericMatchOptions, UNICODE_VERSION,
};
use grader_tests::python::{hud_python, run_script};
use grader_tests::rng::Rng;
use serde_json::{Value, json};

const SCRIPT: &str = include_str!("../../scripts/text_cases.py");
const TABLES_SCRIPT: &str = include_str!("../../scripts/gen_text_tables.py");
const TABLES: &str = include_str!("../../grader-core/src/text/tables.rs");

/// A call of one helper.
#[derive(Debug, Clone)]
enum Case {
    Normalize(String),
    ExactMatch(String, String, Option<bool>),
    Contains(String, String, Option<bool>),
    ContainsAny(String, Vec<String>, Option<bool>),
    ContainsAll(String, Vec<String>, Option<bool>),
    NumericMatch(String, f64, Option<f64>),
    F1(String, String),
}

/// What a helper returned.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Text(String),
    Score(u64),
}

impl Case {
    /// The case as `text_cases.py` reads it; an option is passed only when the case sets it.
    fn to_json(&self) -> Value {
        fn float(x: f64) -> String {
            format!("{x:?}")
        }
        match self {
            Case::Normalize(a) => json!({"f": "normalize", "a": [a]}),
            Case::ExactMatch(a, b, o) => with_option(
                json!({"f": "exact_match", "a": [a, b]}),
                "normalize_text",
                o.map(Value::from),
            ),
            Case::Contains(a, b, o) => with_option(
                json!({"f": "contains", "a": [a, b]}),
                "case_sensitive",
                o.map(Value::from),
            ),
            Case::ContainsAny(a, b, o) => with_option(
                json!({"f": "contains_any", "a": [a, b]}),
                "case_sensitive",
                o.map(Value::from),
            ),
            Case::ContainsAll(a, b, o) => with_option(
                json!({"f": "contains_all", "a": [a, b]}),
                "case_sensitive",
                o.map(Value::from),
            ),
            Case::NumericMatch(a, e, t) => with_option(
                json!({"f": "numeric_match", "a": [a, float(*e)]}),
                "tolerance",
                t.map(|t| Value::from(float(t))),
            ),
            Case::F1(a, b) => json!({"f": "f1_score", "a": [a, b]}),
        }
    }

    /// The Rust helper's result, called without options where the case sets none.
    fn run(&self) -> Outcome {
        let score = |x: f64| Outcome::Score(x.to_bits());
        match self {
            Case::Normalize(a) => Outcome::Text(text::normalize(a)),
            Case::ExactMatch(a, b, None) => score(text::exact_match(a, b)),
            Case::ExactMatch(a, b, Some(normalize_text)) => score(text::exact_match_with(
                a,
                b,
                ExactMatchOptions {
                    normalize_text: *normalize_text,
                },
            )),
            Case::Contains(a, b, None) => score(text::contains(a, b)),
            Case::Contains(a, b, Some(case_sensitive)) => score(text::contains_with(
                a,
                b,
                ContainsOptions {
                    case_sensitive: *case_sensitive,
                },
            )),
            Case::ContainsAny(a, b, None) => score(text::contains_any(a, b)),
            Case::ContainsAny(a, b, Some(case_sensitive)) => score(text::contains_any_with(
                a,
                b,
                ContainsOptions {
                    case_sensitive: *case_sensitive,
                },
            )),
            Case::ContainsAll(a, b, None) => score(text::contains_all(a, b)),
            Case::ContainsAll(a, b, Some(case_sensitive)) => score(text::contains_all_with(
                a,
                b,
                ContainsOptions {
                    case_sensitive: *case_sensitive,
                },
            )),
            Case::NumericMatch(a, e, None) => score(text::numeric_match(a, *e)),
            Case::NumericMatch(a, e, Some(tolerance)) => score(text::numeric_match_with(
                a,
                *e,
                NumericMatchOptions {
                    tolerance: *tolerance,
                },
            )),
            Case::F1(a, b) => score(text::f1_score(a, b)),
        }
    }
}

fn with_option(mut case: Value, key: &str, value: Option<Value>) -> Value {
    if let Some(value) = value {
        case["k"] = json!({ key: value });
    }
    case
}

/// A result of the script: scores are `repr` strings, read with Rust's correctly rounded
/// parser (`serde_json`'s default float parsing can be one unit in the last place off).
fn outcome(value: &Value) -> Outcome {
    if let Some(text) = value.get("text").and_then(Value::as_str) {
        return Outcome::Text(text.to_owned());
    }
    let score = value
        .get("score")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("unexpected result {value}"));
    Outcome::Score(score.parse::<f64>().expect("a float").to_bits())
}

/// Pieces random strings are made of: every one is assigned in Unicode 6.0 or earlier, so any
/// Python 3 version classifies them as the tables do.
#[rustfmt::skip]
const PIECES: &[&str] = &[
    // ASCII words, articles in every case, numbers and punctuation.
    "a", "an", "the", "The", "AN", "A", "THE", "tHe", "x", "Paris", "paris", "capital", "_",
    "snake_case", "42", "7", "0", "3.14", "-", "+", ".", "e", "E", ",", "!", "?", ":", ";", "'",
    "\"", "(", ")", "/", "\\", "-5", "1e5", "2E-3", ".5", "1,000", "1.", "5.e2", "+.25", "--1",
    "\0",
    // ASCII whitespace, including the separators Python counts and Rust does not.
    " ", "  ", "\t", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f",
    // Latin and special case mappings.
    "é", "É", "ß", "ẞ", "ǅ", "Ǆ", "ǆ", "İ", "ı", "ſ", "\u{212A}", "\u{212B}", "ﬁ", "Æ", "ǰ", "ŉ",
    // Greek: sigmas in every context, iota subscript, ohm sign.
    "Σ", "σ", "ς", "ΟΔΟΣ", "ΣΑ", "Α", "ά", "ΐ", "\u{345}", "\u{2126}", "ᾼ", "ᾈ",
    // Combining, enclosing and spacing marks; format characters.
    "\u{301}", "\u{307}", "\u{903}", "\u{93E}", "\u{20DD}", "\u{200D}", "\u{AD}", "\u{200B}",
    "\u{FEFF}", "\u{2060}",
    // Cyrillic, Armenian, Georgian, Cherokee, Deseret.
    "Д", "д", "Ё", "Ա", "Ⴀ", "Ꭰ", "\u{10400}",
    // Modifier letters and symbols, and case-ignorable punctuation.
    "ʰ", "ˆ", "^", "`", "´", "·", "ʼ", "’",
    // Decimal digits of many scripts, and numbers that are not decimal.
    "٣", "٠", "٩", "०", "९", "０", "９", "𝟘", "𝟗", "߀", "၉", "᠐", "²", "½", "Ⅻ", "ⅻ", "①",
    // Spaces beyond ASCII, and characters that look like spaces but are not.
    "\u{A0}", "\u{85}", "\u{1680}", "\u{2000}", "\u{2009}", "\u{200A}", "\u{2028}", "\u{2029}",
    "\u{202F}", "\u{205F}", "\u{3000}", "\u{180E}",
    // Punctuation and symbols.
    "¿", "¡", "«", "»", "“", "”", "‘", "…", "・", "。", "、", "〜", "‐", "−", "＋", "€", "©",
    // Other scripts and emoji.
    "中文", "日本", "ひらがな", "カタカナ", "한국어", "עברית", "العربية", "हिन्दी", "ไทย", "😀",
    "👍🏽", "🇫🇷",
];

/// Zero digits of decimal runs (each followed by its nine successors).
const ZEROS: &[char] = &['0', '٠', '۰', '०', '০', '๐', '០', '０', '𝟎', '𝟘', '߀', '၀'];

fn random_text(rng: &mut Rng, max_pieces: usize) -> String {
    let mut out = String::new();
    for _ in 0..rng.below(max_pieces + 1) {
        let piece = *rng.pick(PIECES);
        out.push_str(piece);
        if rng.chance(2) {
            out.push(' ');
        }
    }
    out
}

/// A random character-aligned slice of `s`.
fn random_slice(rng: &mut Rng, s: &str) -> String {
    let bounds: Vec<usize> = s.char_indices().map(|(i, _)| i).chain([s.len()]).collect();
    let a = *rng.pick(&bounds);
    let b = *rng.pick(&bounds);
    s[a.min(b)..a.max(b)].to_owned()
}

/// A variant of `s` that often compares equal in some mode of some helper.
fn variant(rng: &mut Rng, s: &str) -> String {
    match rng.below(6) {
        0 => s.to_owned(),
        1 => s.to_uppercase(),
        2 => format!(" \t{}\u{3000}", s.to_lowercase()),
        3 => text::normalize(s),
        4 => {
            let mut words: Vec<&str> = s.split(' ').collect();
            words.reverse();
            words.join(" ")
        }
        _ => random_text(rng, 6),
    }
}

/// A number written with random digits of one script, with the text `float()` reads for it.
fn random_number(rng: &mut Rng) -> (String, String) {
    let zero = u32::from(*rng.pick(ZEROS));
    let mut written = String::new();
    let mut ascii = String::new();
    let digits = |rng: &mut Rng, count: usize, written: &mut String, ascii: &mut String| {
        for _ in 0..count {
            let d = u32::try_from(rng.below(10)).expect("digit");
            written.push(char::from_u32(zero + d).expect("a digit"));
            ascii.push(char::from_digit(d, 10).expect("a digit"));
        }
    };
    if rng.chance(3) {
        let sign = *rng.pick(&["-", "+"]);
        written.push_str(sign);
        ascii.push_str(sign);
    }
    let integer = rng.below(4);
    digits(rng, integer, &mut written, &mut ascii);
    if integer == 0 || rng.chance(2) {
        written.push('.');
        ascii.push('.');
        let fraction = usize::from(integer == 0) + rng.below(4);
        digits(rng, fraction, &mut written, &mut ascii);
    }
    if rng.chance(4) {
        let e = *rng.pick(&["e", "E", "e-", "E+"]);
        written.push_str(e);
        ascii.push_str(e);
        let count = 1 + rng.below(3);
        digits(rng, count, &mut written, &mut ascii);
    }
    (written, ascii)
}

fn random_options(rng: &mut Rng) -> Option<bool> {
    match rng.below(3) {
        0 => None,
        1 => Some(false),
        _ => Some(true),
    }
}

fn random_cases(seed: u64, rounds: usize) -> Vec<Case> {
    let mut rng = Rng(seed);
    let mut cases = Vec::new();
    for _ in 0..rounds {
        let a = random_text(&mut rng, 14);
        let b = variant(&mut rng, &a);
        cases.push(Case::Normalize(a.clone()));
        cases.push(Case::ExactMatch(
            a.clone(),
            b.clone(),
            random_options(&mut rng),
        ));
        let sub = if rng.chance(3) {
            (*rng.pick(PIECES)).to_owned()
        } else {
            let slice = random_slice(&mut rng, &a);
            variant(&mut rng, &slice)
        };
        cases.push(Case::Contains(a.clone(), sub, random_options(&mut rng)));
        let subs: Vec<String> = (0..rng.below(4))
            .map(|_| {
                if rng.chance(2) {
                    random_slice(&mut rng, &a).to_uppercase()
                } else {
                    (*rng.pick(PIECES)).to_owned()
                }
            })
            .collect();
        cases.push(Case::ContainsAny(
            a.clone(),
            subs.clone(),
            random_options(&mut rng),
        ));
        cases.push(Case::ContainsAll(a.clone(), subs, random_options(&mut rng)));
        cases.push(Case::F1(a.clone(), b));
        cases.push(Case::F1(a.clone(), random_text(&mut rng, 8)));

        let (written, ascii) = random_number(&mut rng);
        let value: f64 = ascii.parse().expect("a number the pattern allows");
        let prefix = if rng.chance(2) {
            String::new()
        } else {
            random_text(&mut rng, 3)
        };
        let answer = format!("{prefix}{written}{}", random_text(&mut rng, 3));
        let expected = match rng.below(4) {
            0 | 1 => value,
            2 => value + 0.5,
            _ => *rng.pick(&[0.0, 1.0, -1.0, 42.0, f64::INFINITY, f64::NAN]),
        };
        let tolerance = match rng.below(4) {
            0 => None,
            1 => Some(0.0),
            2 => Some(0.5),
            _ => Some(*rng.pick(&[1e-9, 1.0, f64::INFINITY, -1.0])),
        };
        cases.push(Case::NumericMatch(answer, expected, tolerance));
        cases.push(Case::NumericMatch(a, 0.0, Some(f64::INFINITY)));
    }
    cases
}

fn s(x: &str) -> String {
    x.to_owned()
}

/// Hand-picked cases: the reference's own tests, and each Python subtlety.
fn fixed_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for x in [
        "  The Answer is: 42! ",
        "Hello World",
        "answer: 42!",
        "The answer is a test",
        "  lots   of    space  ",
        "42",
        "",
        "a an the",
        "Theatre anthem, A-team: the_end",
        "ΟΔΟΣ ΣΑ Σ. ΑΣ'Α ΑΣ' x ΣΣ",
        "İstanbul",
        "café\u{301} naïve",
        "x\u{1c}y\u{85}z\u{a0}w",
        "x\u{200B}y",
        "² ½ Ⅻ ① ٣",
        "हिन्दी",
        "ǅemal ǈ",
        "ẞ ß ſ \u{212A} \u{212B}",
    ] {
        cases.push(Case::Normalize(s(x)));
    }
    for (a, b, o) in [
        ("The Answer!", "answer", None),
        ("Germany", "france", None),
        ("Paris.", "Paris", None),
        ("The capital is Paris", "capital is Paris", None),
        ("Paris", "Paris", Some(false)),
        ("The Paris!", "Paris", Some(false)),
        ("42", "42", None),
        ("", "", None),
        ("hello", "world", None),
        ("ΟΔΟΣ", "οδος", Some(false)),
        ("ΟΔΟΣ", "οδοσ", Some(false)),
        ("\u{1c}PARIS\u{85}", "paris", Some(false)),
        ("İ", "i\u{307}", Some(false)),
        ("İ", "i", None),
    ] {
        cases.push(Case::ExactMatch(s(a), s(b), o));
    }
    for (a, b, o) in [
        ("The capital of France is Paris", "paris", None),
        ("The capital of France is Paris", "berlin", None),
        ("Paris", "paris", Some(true)),
        ("Paris", "Paris", Some(true)),
        ("anything", "", None),
        ("ΟΔΟΣ", "ος", None),
        ("ΟΔΟΣ", "οσ", None),
        ("İ", "i", None),
        ("İ", "\u{307}", None),
        ("STRASSE", "straße", None),
    ] {
        cases.push(Case::Contains(s(a), s(b), o));
    }
    let cars = vec![s("toyota"), s("honda"), s("nissan")];
    cases.push(Case::ContainsAny(
        s("I like Toyota cars"),
        cars.clone(),
        None,
    ));
    cases.push(Case::ContainsAny(s("I like BMW cars"), cars, None));
    cases.push(Case::ContainsAny(s("anything"), vec![], None));
    cases.push(Case::ContainsAny(
        s("Toyota"),
        vec![s("toyota")],
        Some(true),
    ));
    let pair = vec![s("toyota"), s("honda")];
    cases.push(Case::ContainsAll(
        s("Toyota and Honda are Japanese"),
        pair.clone(),
        None,
    ));
    cases.push(Case::ContainsAll(s("Toyota is Japanese"), pair, None));
    cases.push(Case::ContainsAll(s("anything"), vec![], None));
    for (a, e, t) in [
        ("The answer is 42", 42.0, None),
        ("Result: 3.14", 3.14, None),
        ("no numbers", 42.0, None),
        ("The answer is 41", 42.0, None),
        ("The answer is 41.5", 42.0, Some(1.0)),
        ("The answer is 40", 42.0, Some(1.0)),
        ("Temperature is -5 degrees", -5.0, None),
        ("There are 3 items and 5 left", 3.0, None),
        ("1e5", 100_000.0, None),
        ("1e5", 1.0, None),
        (".5", 0.5, None),
        (".5", 5.0, None),
        ("1,000", 1.0, None),
        ("1,000", 1000.0, None),
        ("٣", 3.0, None),
        ("٣.٥e١", 35.0, None),
        ("𝟏𝟐", 12.0, None),
        ("² and 2", 2.0, None),
        ("1e999", f64::INFINITY, None),
        ("1e999", f64::INFINITY, Some(f64::INFINITY)),
        ("nan", f64::NAN, Some(f64::INFINITY)),
        ("0.1", 0.1, Some(0.0)),
        ("-0", 0.0, None),
        (
            "12345678901234567890123456789",
            1.234_567_890_123_456_8e28,
            None,
        ),
        ("v1.2.3", 1.2, None),
        ("5.", 5.0, None),
        ("x-.5e-1", -0.05, None),
        ("1e+", 1.0, None),
    ] {
        cases.push(Case::NumericMatch(s(a), e, t));
    }
    for (a, b) in [
        ("Paris", "Paris"),
        ("The capital is Paris, France", "Paris"),
        ("Berlin", "Paris"),
        ("", "Paris"),
        ("Paris", ""),
        ("New York City", "New York City"),
        ("I believe the answer is 42 degrees", "42 degrees"),
        ("I think 42 degrees", "42 degrees"),
        ("42", "42 degrees celsius"),
        ("The PARIS!", "paris"),
        ("paris paris paris", "paris paris"),
        ("a an the", "the"),
        ("ΟΔΟΣ", "οδος"),
    ] {
        cases.push(Case::F1(s(a), s(b)));
    }
    cases
}

/// The probes of every code point in planes 0 to 3 and 14 (the other planes are unassigned
/// or private use in every Unicode version), in chunks.
fn code_point_probes() -> Vec<Case> {
    let code_points = (0..=0x3_FFFF_u32)
        .chain(0xE_0000..=0xE_FFFF)
        .filter_map(char::from_u32);
    let all: Vec<char> = code_points.collect();
    let mut cases = Vec::new();
    for chunk in all.chunks(8192) {
        // Lowercasing, word characters, and the case properties the final sigma reads.
        let mut probe = String::new();
        let mut not_digits = String::new();
        for &c in chunk {
            probe.extend(['x', c, 'y', ' ', 'A', c, 'Σ', ' ', c, 'Σ', '\n']);
            let alone = c.to_string();
            let digit = (0..10).find(|&d| text::numeric_match(&alone, f64::from(d)) == 1.0);
            match digit {
                Some(d) => cases.push(Case::NumericMatch(alone, f64::from(d), None)),
                None => {
                    not_digits.push(c);
                    not_digits.push('|');
                }
            }
        }
        cases.push(Case::Normalize(probe));
        // No digit among the characters Rust reads as none: the first number is the last one.
        not_digits.push_str("7.25");
        cases.push(Case::NumericMatch(not_digits, 7.25, None));
    }
    cases
}

fn compare(cases: &[Case], results: &[Value]) {
    assert_eq!(cases.len(), results.len());
    let mut failures = Vec::new();
    for (case, result) in cases.iter().zip(results) {
        let expected = outcome(result);
        let actual = case.run();
        if actual != expected {
            failures.push(format!(
                "{case:?}\n  python: {expected:?}\n  rust:   {actual:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from the reference; the first ones:\n{}",
        failures.len(),
        cases.len(),
        failures[..failures.len().min(8)].join("\n")
    );
}

#[test]
fn the_helpers_score_every_case_as_the_reference_does() {
    let Some(python) = hud_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let mut general = fixed_cases();
    general.extend(random_cases(0x5EED_7E57, 2500));
    let probes = code_point_probes();
    let input: Vec<Value> = general.iter().chain(&probes).map(Case::to_json).collect();
    let output = run_script(
        &python,
        SCRIPT,
        &serde_json::to_string(&input).expect("cases are JSON"),
    );
    let output: Value = serde_json::from_str(&output).expect("the script prints JSON");
    let results = output["results"].as_array().expect("a list of results");
    assert!(general.len() > 20_000, "{} cases", general.len());

    compare(&general, &results[..general.len()]);

    let unicode = output["unicode"].as_str().expect("the Unicode version");
    if unicode == UNICODE_VERSION {
        compare(&probes, &results[general.len()..]);
    } else {
        eprintln!(
            "skipping the per-code-point probes: this Python has Unicode {unicode}, the \
             tables Unicode {UNICODE_VERSION}"
        );
    }
}

#[test]
fn the_committed_tables_are_what_the_generator_writes() {
    let Some(python) = hud_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let version = run_script(
        &python,
        "import unicodedata; print(unicodedata.unidata_version)",
        "",
    );
    if version.trim() != UNICODE_VERSION {
        eprintln!(
            "skipping: this Python has Unicode {}, the tables Unicode {UNICODE_VERSION}",
            version.trim()
        );
        return;
    }
    let generated = run_script(&python, TABLES_SCRIPT, "");
    // The header names the exact interpreter; the tables below it must be identical.
    let body = |t: &str| t.lines().skip(2).collect::<Vec<_>>().join("\n");
    assert!(
        body(&generated) == body(TABLES),
        "grader-core/src/text/tables.rs differs from what scripts/gen_text_tables.py writes"
    );
}
