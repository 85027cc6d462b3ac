//! Running many graders at once with `Gather`: sync and async `#[grader]` functions and
//! `BashGrader`s, at most three at a time, and what happens when one of them fails.
//!
//! An agent was asked to set up a small project; seven checks grade what it left in a
//! temporary directory. One check asks a "judge" service that is down. Under the default
//! policy (`OnError::Fail`) the gathering fails, keeping every finished subscore in the error;
//! under `OnError::Exclude` the failed check is kept in the breakdown with weight 0 and its
//! error, and the result is marked `isError`.
//!
//! Run it with `cargo run -p grader-examples --example gather`.

use std::error::Error;
use std::path::Path;
use std::time::{Duration, Instant};

use grader_core::text::contains_all;
use grader_core::{BashGrader, Gather, GatherError, OnError, grader};

const README: &str = "# app\n\n## Install\n\nRun `bash build.sh`.\n\n## Usage\n\nRun `out/app`.\n";
const BUILD: &str =
    "mkdir -p out && printf '#!/bin/sh\\necho hi\\n' > out/app && chmod +x out/app\n";

/// Stands in for a model that grades prose: slow, and sometimes unavailable.
struct Judge {
    available: bool,
}

impl Judge {
    async fn rate(&self, text: &str, must_cover: &[&str]) -> Result<f64, String> {
        tokio::time::sleep(Duration::from_millis(300)).await;
        if !self.available {
            return Err("judge unavailable: HTTP 503".to_owned());
        }
        Ok(contains_all(text, must_cover))
    }
}

/// Synchronous: passes when `file` exists in the project.
#[grader]
fn has_file(project: &Path, file: &str) -> bool {
    project.join(file).is_file()
}

/// Asynchronous: the judge's rating of the README for the given topics.
#[grader(skip(judge))]
async fn readme_covers(project: &Path, topics: &[&str], judge: &Judge) -> Result<f64, String> {
    let readme = std::fs::read_to_string(project.join("README.md")).map_err(|e| e.to_string())?;
    judge.rate(&readme, topics).await
}

/// Every check of the project, sync or async, graded alike when the gathering is awaited.
fn checks<'a>(project: &'a Path, up: &'a Judge, down: &'a Judge) -> Gather<'a> {
    let exists = |file| HasFile { project, file };
    let covers = |topics, judge| ReadmeCovers {
        project,
        topics,
        judge,
    };
    let bash = |command: &str| {
        BashGrader::new(command)
            .cwd(project)
            .timeout(Duration::from_secs(30))
    };
    Gather::new()
        .add(exists("README.md").grade(0.1).named("readme"))
        .add(exists("LICENSE").grade(0.1).named("license"))
        .add(
            bash("grep -q '^## Usage' README.md")
                .grade(0.2)
                .named("usage_section"),
        )
        .add(
            bash("bash -n build.sh")
                .grade(0.1)
                .named("build_script_parses"),
        )
        .add(
            bash("bash build.sh && out/app")
                .grade(0.2)
                .named("build_runs"),
        )
        .add(
            covers(&["install", "usage"], up)
                .grade(0.2)
                .named("readme_topics"),
        )
        .add(covers(&["tone"], down).grade(0.1).named("readme_tone"))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?; // removed when dropped
    let project = dir.path();
    std::fs::write(project.join("README.md"), README)?;
    std::fs::write(project.join("build.sh"), BUILD)?; // and no LICENSE
    let (up, down) = (Judge { available: true }, Judge { available: false });

    // The default policy: one failure fails the whole gathering.
    match checks(project, &up, &down).limit(3).await {
        Err(error @ GatherError::Graders { .. }) => {
            let done = error.completed().count();
            println!(
                "== OnError::Fail: {error}\n   ({done} subscores finished and are kept in the error)\n"
            );
        }
        other => {
            return Err(format!("expected the judge to fail the gathering, got {other:?}").into());
        }
    }

    // Leave the failed check out of the reward, keeping it (and its error) in the breakdown.
    let started = Instant::now();
    let result = checks(project, &up, &down)
        .limit(3)
        .on_error(OnError::Exclude)
        .await?;
    let took = started.elapsed().as_secs_f64();
    println!("== OnError::Exclude, at most 3 at once, in {took:.2} s:\n{result}");
    println!("== as JSON:\n{}", serde_json::to_string_pretty(&result)?);

    // README, usage, parses, runs and covers pass; LICENSE is missing: 0.8 of the 0.9 counted.
    if !result.is_error || (result.reward() - 0.8 / 0.9).abs() > 1e-9 {
        return Err(format!("expected an error-marked reward of 0.8889, got {result:?}").into());
    }
    Ok(())
}
