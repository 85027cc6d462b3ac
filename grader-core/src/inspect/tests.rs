//! Inputs built to hurt: every scorer answers, in time linear in the input, with a verdict or
//! a typed error.

use super::*;

fn megabytes(piece: &str) -> String {
    piece.repeat((1 << 20) / piece.len())
}

#[test]
fn answers_are_read_in_linear_time() {
    let text = megabytes("ANSWER:");
    for kind in [AnswerKind::Letter, AnswerKind::Word, AnswerKind::Line] {
        assert!(!answer(&text, &["A"], kind).is_correct());
    }
    // The lazy word runs into the last `ANSWER:` from every earlier one.
    let text = megabytes("ANSWER:") + "x";
    let word = extract_answer(&text, AnswerKind::Word).map(str::len);
    assert_eq!(word, Some(text.len() - 7));
    // The leftmost occurrence whose line is the last with content: the one before the last.
    let text = megabytes("answer : \n");
    assert_eq!(extract_answer(&text, AnswerKind::Line), Some("answer : "));
}

#[test]
fn numbers_of_any_length_are_read_without_panic() {
    let digits = "7".repeat(1 << 20);
    let options = MatchOptions {
        numeric: true,
        ..MatchOptions::default()
    };
    assert!(!match_targets(&digits, &["7"], options).is_correct());
    // A target too large for a double is not a number (`float()` gives `inf`): it is text.
    assert!(match_targets(&format!("x {digits}"), &[digits.as_str()], options).is_correct());
    let power = format!("2{}", "⁹".repeat(100_000));
    assert!(!match_targets(&power, &["2"], options).is_correct());
    let f1_score = f1(&megabytes("1e999 the -0 "), &["0"], &[] as &[&str]);
    assert!(f1_score.value < 0.01);
}

#[cfg(feature = "pattern")]
#[test]
fn patterns_run_in_linear_time_or_are_refused() {
    let text = "a".repeat(1 << 20) + "b";
    let verdict = pattern(&text, r"(a+)+$", &["a"], PatternOptions::default());
    assert_eq!(verdict.map(|v| v.value), Ok(0.0));
    for bad in [
        "(",
        r"(?=x)",
        r"(a)\1",
        r"(?P=n)",
        "a{1000}{1000}{1000}",
        r"\",
    ] {
        let error = pattern("aaa", bad, &["a"], PatternOptions::default());
        assert!(
            matches!(&error, Err(PatternError { grader: "pattern", pattern, .. }) if pattern == bad),
            "{bad}: {error:?}"
        );
    }
    let options = ChoiceOptions {
        choices: 4,
        ..ChoiceOptions::default()
    };
    let text = megabytes("ANSWER: $ (A ** ");
    assert!(choice(&text, &["A"], options).is_ok());
}
