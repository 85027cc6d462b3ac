//! Graders that hold state, with `#[derive(Grader)]`: a reference set loaded once from a file
//! and graded against many answers, and an async grader holding a client and a secret.
//!
//! A quiz agent answered five questions. The reference (accepted answers per question) is a
//! JSON Lines file, read and normalized once; each answer is graded by a small struct that
//! borrows it. The derive records the struct's fields under `_parameters`, except the ones
//! marked `#[grader(skip)]`: the whole reference set (large) and the API key (secret).
//!
//! Run it with `cargo run -p grader-examples --example stateful_grader`.

use std::collections::{HashMap, HashSet};
use std::error::Error;
use std::path::Path;
use std::time::Duration;

use grader_core::text::normalize;
use grader_core::{EvaluationResult, Grade, Grader, Info, SubScore};
use serde::Deserialize;

/// One line of the reference file.
#[derive(Deserialize)]
struct Entry {
    question: String,
    accepted: Vec<String>,
}

/// The accepted answers per question, normalized once when loaded.
struct Reference {
    accepted: HashMap<String, HashSet<String>>,
}

impl Reference {
    fn load(path: &Path) -> Result<Self, Box<dyn Error>> {
        let mut accepted = HashMap::new();
        for line in std::fs::read_to_string(path)?.lines() {
            let entry: Entry = serde_json::from_str(line)?;
            let answers = entry.accepted.iter().map(|a| normalize(a)).collect();
            accepted.insert(entry.question, answers);
        }
        Ok(Reference { accepted })
    }
}

/// Passes when the answer is one of the question's accepted answers, after normalizing
/// (case, punctuation, articles). A question missing from the reference is an error, not a 0.
#[derive(Grader)]
#[grader(score = check)]
struct InReference<'a> {
    /// The reference set: large, and the same for every answer, so not recorded.
    #[grader(skip)]
    reference: &'a Reference,
    /// Which reference file, recorded instead of its content.
    dataset: &'a str,
    question: &'a str,
    answer: &'a str,
}

impl InReference<'_> {
    fn check(&self) -> Result<(f64, Info), String> {
        let accepted =
            self.reference.accepted.get(self.question).ok_or_else(|| {
                format!("question {:?} is not in {}", self.question, self.dataset)
            })?;
        let normalized = normalize(self.answer);
        let mut info = Info::new();
        info.insert("normalized".into(), normalized.clone().into());
        Ok((f64::from(u8::from(accepted.contains(&normalized))), info))
    }
}

/// Stands in for a fact-checking service that a grader asks over the network.
struct FactChecker;

impl FactChecker {
    async fn confidence(&self, api_key: &str, answer: &str) -> Result<f64, String> {
        tokio::time::sleep(Duration::from_millis(2)).await; // a network call
        if api_key.is_empty() {
            return Err("the fact checker needs an API key".to_owned());
        }
        Ok(if answer.split_whitespace().count() <= 4 {
            1.0
        } else {
            0.5
        })
    }
}

/// Asks the fact checker how confident it is in the answer: an async score method, so it is
/// named `async check`. The client has no JSON form (recorded as a placeholder); the key is a
/// secret (skipped).
#[derive(Grader)]
#[grader(score = async check, name = "fact_checked", skip(api_key))]
struct FactChecked<'a> {
    checker: &'a FactChecker,
    api_key: &'a str,
    answer: &'a str,
}

impl FactChecked<'_> {
    async fn check(&self) -> Result<f64, String> {
        self.checker.confidence(self.api_key, self.answer).await
    }
}

const REFERENCE: &str = r#"{"question": "capital of France", "accepted": ["Paris"]}
{"question": "largest planet", "accepted": ["Jupiter"]}
{"question": "author of Hamlet", "accepted": ["Shakespeare", "William Shakespeare"]}
{"question": "boiling point of water at sea level in C", "accepted": ["100", "100 degrees"]}
{"question": "chemical symbol for gold", "accepted": ["Au"]}
"#;

const ANSWERS: &[(&str, &str)] = &[
    ("capital of France", "paris."),
    ("largest planet", "Saturn"),
    ("author of Hamlet", "William Shakespeare"),
    ("boiling point of water at sea level in C", "100 degrees"),
    (
        "chemical symbol for gold",
        "The symbol for gold is Au, from aurum",
    ),
];

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("quiz.jsonl");
    std::fs::write(&path, REFERENCE)?;
    let reference = Reference::load(&path)?; // loaded once, borrowed by every grade below
    let checker = FactChecker;
    let api_key = "sk-example-not-recorded";

    let mut subscores: Vec<SubScore> = Vec::new();
    for (question, answer) in ANSWERS {
        let in_reference = InReference {
            reference: &reference,
            dataset: "quiz.jsonl",
            question,
            answer,
        };
        let fact_checked = FactChecked {
            checker: &checker,
            api_key,
            answer,
        };
        let (correct, checked) = tokio::join!(in_reference.grade(1.0), fact_checked.grade(0.25));
        let correct = correct?;
        println!("{question:?} ← {answer:?}: {}", correct.value());
        subscores.push(correct);
        subscores.push(checked?);
    }

    // An unknown question is a typed error naming the grader, not a silent 0.
    let unknown = InReference {
        reference: &reference,
        dataset: "quiz.jsonl",
        question: "speed of light",
        answer: "fast",
    };
    let error = unknown.grade(1.0).await.expect_err("not in the reference");
    println!("{error}");

    let result: EvaluationResult = Grade::from_subscores(subscores)?;
    println!("\n{result}");
    println!("== as JSON:\n{}", serde_json::to_string_pretty(&result)?);
    Ok(())
}
