//! A coding environment graded as a tree: the tests, a lint `all`, a penalty for editing the
//! tests, and a review `cascade` (a cheap check first, a slow "expert" only when it cannot
//! decide) that runs only when the tests pass.
//!
//! The agent was asked to fix `slugify` in a small Python project. The project is graded as
//! shipped (tests fail: the review is skipped, not scored), and after a fix (everything runs).
//! Commands share a limiter of two slots, as they would across many samples.
//!
//! Run it with `cargo run -p grader-examples --example coding_tree`.

use std::error::Error;
use std::path::Path;
use std::time::Duration;

use grader_core::{
    BashGrader, EvaluationResult, Gather, Limiter, OnError, Resource, all, cascade, grader,
};

const CODE: &str = "\
def slugify(title):
    \"\"\"Lower-case words of `title` joined by dashes.\"\"\"
    return title.lower().replace(' ', '_')
";

const TESTS: &str = "\
import unittest

from slug import slugify


class SlugTest(unittest.TestCase):
    def test_words(self):
        self.assertEqual(slugify('Hello World'), 'hello-world')
";

/// Penalty: 1.0 when the tests are not the ones shipped.
#[grader]
fn tests_edited(repo: &Path) -> std::io::Result<bool> {
    Ok(std::fs::read_to_string(repo.join("test_slug.py"))? != TESTS)
}

/// Cheap: every function has a docstring.
#[grader]
fn documented(repo: &Path) -> std::io::Result<f64> {
    let code = std::fs::read_to_string(repo.join("slug.py"))?;
    let functions = code.matches("def ").count().max(1);
    let docs = code.matches("\"\"\"").count() / 2;
    Ok((docs.min(functions) as f64) / functions as f64)
}

/// Expensive: stands in for a slow expert review (a model, a benchmark run).
#[grader]
async fn expert_review(repo: &Path) -> std::io::Result<f64> {
    tokio::time::sleep(Duration::from_millis(300)).await;
    let code = std::fs::read_to_string(repo.join("slug.py"))?;
    Ok(if code.contains("'-'") { 0.9 } else { 0.2 })
}

/// The whole tree. `when` gates the review on the tests; `cascade` skips the expert when the
/// cheap check already reaches 1.0 (here it does: the function is documented).
async fn grade(repo: &Path, limiter: &Limiter) -> Result<EvaluationResult, Box<dyn Error>> {
    let bash = |command: &str| {
        BashGrader::new(command)
            .cwd(repo)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .timeout(Duration::from_secs(60))
    };
    let result = Gather::new()
        .limiter(limiter)
        .on_error(OnError::Zero)
        .add(bash("python3 -m unittest -q").grade(0.5).named("tests"))
        .add(
            all(
                "lint",
                (
                    // Parses without writing bytecode: a cached .pyc of the same size and
                    // second would hide the agent's next edit from the tests.
                    bash("python3 -c \"import ast; ast.parse(open('slug.py').read())\"")
                        .grade(1.0)
                        .named("compiles"),
                    bash("! grep -nP '\\t' slug.py").grade(1.0).named("no_tabs"),
                ),
            )
            .grade(0.2),
        )
        .add(TestsEdited { repo }.grade(-0.5))
        .add(
            cascade(
                "review",
                1.0,
                (
                    Documented { repo },
                    ExpertReview { repo }.grade(1.0).timed(),
                ),
            )
            .grade(0.3)
            .when(|earlier| earlier.passed("tests")),
        )
        .await?;
    Ok(result)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let repo = dir.path();
    std::fs::write(repo.join("slug.py"), CODE)?;
    std::fs::write(repo.join("test_slug.py"), TESTS)?;
    let limiter = Limiter::new().limit(Resource::Commands, 2);

    let before = grade(repo, &limiter).await?;
    println!("== as shipped: the tests fail, so the review is skipped:\n{before}");

    std::fs::write(repo.join("slug.py"), CODE.replace("'_'", "'-'"))?;
    let after = grade(repo, &limiter).await?;
    println!("== after the fix:\n{after}");
    println!("== as JSON:\n{}", serde_json::to_string_pretty(&after)?);

    let review = after.subscore("review").ok_or("no review")?;
    let decided_by = review.info().and_then(|info| info.get("decided_by"));
    if (before.reward() - 0.2).abs() > 1e-9
        || (after.reward() - 1.0).abs() > 1e-9
        || decided_by != Some(&serde_json::Value::from("documented"))
    {
        let rewards = (before.reward(), after.reward());
        return Err(
            format!("expected 0.2 then 1.0, decided by the cheap check; got {rewards:?}").into(),
        );
    }
    Ok(())
}
