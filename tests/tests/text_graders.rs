//! The text helpers as graders: the same scores as the functions, their arguments recorded
//! under `_parameters`, and usable beside other graders in a `Gather`.

use grader_core::text::{
    self, Contains, ContainsAll, ContainsAny, ExactMatch, F1Score, NumericMatch,
};
use grader_core::{Gather, Grader, OnError};
use serde_json::json;

#[test]
fn each_grader_scores_as_its_function_and_records_its_arguments()
-> Result<(), Box<dyn std::error::Error>> {
    let answer = "The Answer is: 42!";
    let sub = ExactMatch {
        answer,
        expected: "answer is 42",
        normalize_text: true,
    }
    .grade(1.0)
    .now()?;
    assert_eq!((sub.name(), sub.value()), ("exact_match", 1.0));
    assert_eq!(
        sub.info().expect("info")["_parameters"],
        json!({"answer": answer, "expected": "answer is 42", "normalize_text": true})
    );
    let raw = ExactMatch {
        answer,
        expected: "answer is 42",
        normalize_text: false,
    }
    .grade(1.0)
    .now()?;
    assert_eq!(raw.value(), 0.0);

    let sub = Contains {
        answer,
        substring: "ANSWER",
        case_sensitive: true,
    }
    .grade(1.0)
    .now()?;
    assert_eq!((sub.name(), sub.value()), ("contains", 0.0));

    let wanted = vec!["42".to_owned(), "forty-two".to_owned()];
    let sub = ContainsAny {
        answer,
        substrings: &wanted,
        case_sensitive: false,
    }
    .grade(1.0)
    .now()?;
    assert_eq!(sub.value(), 1.0);
    assert_eq!(
        sub.info().expect("info")["_parameters"]["substrings"],
        json!(["42", "forty-two"])
    );
    let sub = ContainsAll {
        answer,
        substrings: &wanted,
        case_sensitive: false,
    }
    .grade(1.0)
    .now()?;
    assert_eq!((sub.name(), sub.value()), ("contains_all", 0.0));

    let sub = NumericMatch {
        answer: "about 1e5 km",
        expected: 100_000.0,
        tolerance: 0.0,
    }
    .grade(1.0)
    .now()?;
    assert_eq!((sub.name(), sub.value()), ("numeric_match", 1.0));

    let reference = "Paris";
    let sub = F1Score {
        answer: "The capital is Paris, France",
        reference,
    }
    .grade(1.0)
    .now()?;
    assert_eq!(
        sub.value(),
        text::f1_score("The capital is Paris, France", reference)
    );
    assert_eq!(sub.value(), 0.4);
    Ok(())
}

#[tokio::test]
async fn text_graders_gather_beside_other_graders() -> Result<(), Box<dyn std::error::Error>> {
    let answer = "Paris";
    let result = Gather::new()
        .on_error(OnError::Fail)
        .add(
            ExactMatch {
                answer,
                expected: "paris",
                normalize_text: true,
            }
            .grade(0.5),
        )
        .add(Grader::grade(
            F1Score {
                answer,
                reference: "Paris, France",
            },
            0.5,
        ))
        .await?;
    let names: Vec<&str> = result
        .subscores
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|s| s.name())
        .collect();
    assert_eq!(names, ["exact_match", "f1_score"]);
    let f1 = text::f1_score(answer, "Paris, France");
    assert!((result.reward() - (0.5 + 0.5 * f1)).abs() < 1e-12);
    Ok(())
}
