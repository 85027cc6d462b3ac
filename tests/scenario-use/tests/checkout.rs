//! Graders defined in one crate, graded from another.
#![allow(missing_docs)]

use grader_scenario_use::{ShortAnswer, grade_checkout};

#[tokio::test]
async fn a_checkout_is_graded_with_another_crates_graders() -> Result<(), Box<dyn std::error::Error>>
{
    let repo = std::env::temp_dir().join(format!("grader-scenario-{}", std::process::id()));
    std::fs::create_dir_all(&repo)?;
    std::fs::write(repo.join("receipt.txt"), "ok")?;
    std::fs::write(repo.join("total.txt"), "42\n")?;
    let result = grade_checkout(&repo, "PAID at noon", "done").await;
    std::fs::remove_dir_all(&repo)?;
    let result = result?;
    let subs = result.subscores.as_deref().expect("subscores");
    let names: Vec<&str> = subs.iter().map(|sub| sub.name()).collect();
    assert_eq!(
        names,
        [
            "file_exists",
            "log_lines",
            "reported_number",
            "short_answer"
        ]
    );
    assert!(
        (result.reward() - 0.875).abs() < 1e-12,
        "{}",
        result.reward()
    );
    let log = subs[1].info().expect("info");
    assert_eq!(log["missing"], serde_json::json!(["shipped"]));
    assert_eq!(
        log["_parameters"],
        serde_json::json!({"expected": ["paid", "shipped"], "strictness": "Loose"})
    );
    Ok(())
}

#[test]
fn a_grader_declared_through_a_reexport_grades() -> Result<(), Box<dyn std::error::Error>> {
    let sub = ShortAnswer {
        answer: "yes",
        limit: 2,
    }
    .grade(1.0)
    .now()?;
    assert_eq!((sub.name(), sub.value()), ("short_answer", 0.0));
    assert!(grader_scenario_defs::run_internal(0.5)?.value() > 0.0);
    Ok(())
}

#[tokio::test]
async fn an_error_names_the_grader_across_crates() {
    let error = grader_scenario_defs::ReportedNumber {
        repo: std::path::Path::new("/nonexistent-grader-dir"),
        file: "total.txt",
        target: 1.0,
    }
    .grade(1.0)
    .await
    .expect_err("missing file");
    assert_eq!(error.grader, "reported_number");
    assert!(error.to_string().contains("total.txt"), "{error}");
}
