//! The similarity graders score in `[0, 1]` whatever the anchors' rounding: a perfect answer
//! scores 1.0 (sacrebleu's perfect BLEU is 100.00000000000004, kept in `info`), and answers
//! near the reference never fail the score check.

use grader_core::similarity::{Bleu, Chrf, Levenshtein, Ratio, RougeL, RougeN, bleu};
use proptest::prelude::*;

/// Every similarity grader's score of `answer` against `reference`.
fn scores(answer: &str, reference: &str) -> Vec<(&'static str, f64)> {
    let references = [reference];
    let graded = [
        (
            "levenshtein",
            Levenshtein { answer, reference }.grade(1.0).now(),
        ),
        ("ratio", Ratio { answer, reference }.grade(1.0).now()),
        (
            "rouge_n",
            RougeN {
                answer,
                reference,
                n: 1,
            }
            .grade(1.0)
            .now(),
        ),
        (
            "rouge_n2",
            RougeN {
                answer,
                reference,
                n: 2,
            }
            .grade(1.0)
            .now(),
        ),
        ("rouge_l", RougeL { answer, reference }.grade(1.0).now()),
        (
            "bleu",
            Bleu {
                answer,
                references: &references,
            }
            .grade(1.0)
            .now(),
        ),
        (
            "chrf",
            Chrf {
                answer,
                references: &references,
            }
            .grade(1.0)
            .now(),
        ),
    ];
    graded
        .into_iter()
        .map(|(name, result)| {
            let score = result.unwrap_or_else(|e| panic!("{name} on {answer:?}: {e}"));
            (name, score.value())
        })
        .collect()
}

#[test]
fn a_perfect_bleu_scores_one_and_keeps_sacrebleus_value() {
    let text = "The cat sat on the mat.";
    assert!(bleu(text, &[text]).expect("a reference") > 100.0);
    let score = Bleu {
        answer: text,
        references: &[text],
    }
    .grade(1.0)
    .now()
    .expect("a perfect answer is scored");
    assert_eq!(score.value(), 1.0);
    assert_eq!(
        score.info().expect("info")["bleu"],
        serde_json::json!(100.000_000_000_000_04)
    );
    for (name, value) in scores(text, text) {
        assert_eq!(value, 1.0, "{name}");
    }
}

/// A text and a copy of it with at most one word changed.
fn near_pair() -> impl Strategy<Value = (String, String)> {
    (
        prop::collection::vec("[a-zA-Z]{1,8}|[0-9]{1,3}|[.,!?]", 1..40),
        any::<prop::sample::Index>(),
        "[a-z]{0,6}",
        any::<bool>(),
    )
        .prop_map(|(words, at, replacement, change)| {
            let reference = words.join(" ");
            let mut answer_words = words;
            if change {
                let i = at.index(answer_words.len());
                answer_words[i] = replacement;
            }
            (answer_words.join(" "), reference)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn near_answers_score_within_zero_and_one((answer, reference) in near_pair()) {
        for (name, value) in scores(&answer, &reference) {
            prop_assert!((0.0..=1.0).contains(&value), "{name}: {value}");
            // ROUGE reads words of letters and digits only (rouge_score's tokenizer): a text
            // without one has no words to match, and scores 0 as rouge_score does.
            let has_words = if name == "rouge_l" {
                reference.chars().any(|c| c.is_ascii_alphanumeric())
            } else {
                !reference.trim().is_empty()
            };
            if answer == reference && ["levenshtein", "ratio", "rouge_l"].contains(&name) && has_words
            {
                prop_assert!(value == 1.0, "{name}: {value} for the same text");
            }
        }
    }

    #[test]
    fn any_answers_score_within_zero_and_one(answer in ".{0,60}", reference in ".{0,60}") {
        for (name, value) in scores(&answer, &reference) {
            prop_assert!((0.0..=1.0).contains(&value), "{name}: {value}");
        }
    }
}
