//! Shards picked from the environment, in real processes (`shard-probe`), the way each
//! scheduler sets it: a Kubernetes Indexed Job, a Slurm job array, an AWS Batch array job and a
//! plain `GRADER_SHARD`. Each way's parts merged equal one unsharded run; a missing or
//! inconsistent setting fails with the variables named, writing nothing.

use grader_tests::child::Bounded as _;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use grader_eval::{Line, SummaryOptions, merge, summarize_files};

const PROBE: &str = env!("CARGO_BIN_EXE_shard-probe");

/// Every variable `Shard::from_env` reads, cleared so the test's own environment (a CI job
/// that happens to be an array task) cannot leak in.
const VARIABLES: [&str; 9] = [
    "GRADER_SHARD",
    "GRADER_SHARD_COUNT",
    "JOB_COMPLETION_INDEX",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_STEP",
    "SLURM_ARRAY_TASK_COUNT",
    "AWS_BATCH_JOB_ARRAY_INDEX",
];

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("eval-shards-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

fn probe(dir: &Path, vars: &[(&str, String)]) -> std::process::Output {
    let mut command = Command::new(PROBE);
    command.arg(dir);
    for name in VARIABLES {
        command.env_remove(name);
    }
    for (name, value) in vars {
        command.env(name, value);
    }
    command.output_bounded()
}

fn pairs(path: &Path) -> BTreeSet<(String, u32, String)> {
    std::fs::read_to_string(path)
        .expect("a results file")
        .lines()
        .map(|text| {
            let line: Line = serde_json::from_str(text).expect("a line");
            let reward = serde_json::to_string(&line.result).expect("json");
            (line.id, line.epoch, reward)
        })
        .collect()
}

#[test]
fn every_scheduler_shards_the_same_run() {
    let whole_dir = scratch("whole");
    let output = probe(&whole_dir, &[("GRADER_SHARD", "0/1".into())]);
    assert!(output.status.success(), "{output:?}");
    let whole = whole_dir.join("part-0-of-1.jsonl");
    assert_eq!(pairs(&whole).len(), 600);

    type Setting = fn(u32) -> Vec<(&'static str, String)>;
    let schedulers: [(&str, Setting); 4] = [
        ("kubernetes", |i| {
            vec![
                ("JOB_COMPLETION_INDEX", i.to_string()),
                ("GRADER_SHARD_COUNT", "3".into()),
            ]
        }),
        ("slurm", |i| {
            // `sbatch --array=1-3`: ids from 1.
            vec![
                ("SLURM_ARRAY_TASK_ID", (i + 1).to_string()),
                ("SLURM_ARRAY_TASK_MIN", "1".into()),
                ("SLURM_ARRAY_TASK_MAX", "3".into()),
                ("SLURM_ARRAY_TASK_COUNT", "3".into()),
            ]
        }),
        ("aws-batch", |i| {
            vec![
                ("AWS_BATCH_JOB_ARRAY_INDEX", i.to_string()),
                ("GRADER_SHARD_COUNT", "3".into()),
            ]
        }),
        ("explicit", |i| vec![("GRADER_SHARD", format!("{i}/3"))]),
    ];
    for (name, setting) in schedulers {
        let dir = scratch(name);
        let mut parts = Vec::new();
        for index in 0..3 {
            let output = probe(&dir, &setting(index));
            assert!(output.status.success(), "{name} {index}: {output:?}");
            let said = String::from_utf8_lossy(&output.stdout);
            assert!(said.starts_with(&format!("{index}/3 ")), "{name}: {said}");
            assert!(
                said.contains(" resumed 0 "),
                "{name}: nothing resumed in a fresh run: {said}"
            );
            parts.push(dir.join(format!("part-{index}-of-3.jsonl")));
        }
        for part in &parts {
            assert!(!pairs(part).is_empty(), "{name}: every shard has work");
        }
        let merged = dir.join("merged.jsonl");
        let report = merge(&parts, &merged).expect("merge");
        assert_eq!((report.written, report.duplicates), (600, 0), "{name}");
        assert_eq!(pairs(&merged), pairs(&whole), "{name}");
        let mut ours =
            summarize_files(&[merged.as_path()], SummaryOptions::default()).expect("a summary");
        let mut theirs =
            summarize_files(&[whole.as_path()], SummaryOptions::default()).expect("a summary");
        ours.grading_secs = 0.0;
        theirs.grading_secs = 0.0;
        assert_eq!(ours, theirs, "{name}");
    }
}

#[test]
fn a_missing_or_inconsistent_setting_fails_naming_it() {
    let dir = scratch("errors");
    let cases: Vec<(Vec<(&str, String)>, &str)> = vec![
        (vec![], "no shard in the environment"),
        (
            vec![("JOB_COMPLETION_INDEX", "2".into())],
            "JOB_COMPLETION_INDEX=2 is set but the number of shards is not",
        ),
        (
            vec![
                ("JOB_COMPLETION_INDEX", "3".into()),
                ("GRADER_SHARD_COUNT", "3".into()),
            ],
            "JOB_COMPLETION_INDEX=3 makes shard 3 of 3",
        ),
        (
            vec![("GRADER_SHARD", "1 of 4".into())],
            "GRADER_SHARD=\"1 of 4\"",
        ),
        (
            vec![
                ("SLURM_ARRAY_TASK_ID", "5".into()),
                ("SLURM_ARRAY_TASK_MIN", "1".into()),
                ("SLURM_ARRAY_TASK_MAX", "9".into()),
                ("SLURM_ARRAY_TASK_COUNT", "3".into()),
            ],
            "SLURM_ARRAY_TASK_COUNT=3 but 1-9:1 has 9 tasks",
        ),
        (
            vec![
                ("AWS_BATCH_JOB_ARRAY_INDEX", "0".into()),
                ("JOB_COMPLETION_INDEX", "0".into()),
                ("GRADER_SHARD_COUNT", "2".into()),
            ],
            "several schedulers' indexes are set",
        ),
    ];
    for (vars, expected) in cases {
        let output = probe(&dir, &vars);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{vars:?}: {stderr}");
        assert!(stderr.contains(expected), "{vars:?}: {stderr}");
    }
    assert_eq!(
        std::fs::read_dir(&dir).expect("the folder").count(),
        0,
        "nothing written"
    );
}
