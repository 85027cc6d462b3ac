//! No command writes over one of its inputs: `report`, `export --inspect` and `merge` given
//! an output that is one of the files they read (the same path, another spelling of it, a
//! symbolic or a hard link) refuse before writing, and the results are left as they were.

#![allow(clippy::unwrap_used)]

mod support;

use std::path::{Path, PathBuf};

use predicates::str::contains;
use support::{evaluation_file, grader, samples, temp_dir};

/// The command's arguments with `input` read and `output` written.
fn command(name: &str, input: &Path, output: &Path) -> Vec<PathBuf> {
    let mut args: Vec<PathBuf> = match name {
        "report" => vec!["report".into()],
        "export" => vec!["export".into(), "--inspect".into()],
        "merge" => vec!["merge".into()],
        _ => unreachable!("a command of this test"),
    };
    args.extend([PathBuf::from("-o"), output.to_owned(), input.to_owned()]);
    args
}

#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let dir = temp_dir();
    let input = dir.path().join("results.jsonl");
    evaluation_file(&input, samples(5, |i| (i as f64 / 4.0, 1.0)), 1);
    let before = std::fs::read(&input).unwrap();
    let symlink = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&input, &symlink).unwrap();
    let hard = dir.path().join("hard.jsonl");
    std::fs::hard_link(&input, &hard).unwrap();
    let respelt = dir.path().join(".").join("results.jsonl");
    for name in ["report", "export", "merge"] {
        for output in [&input, &respelt, &symlink, &hard] {
            grader()
                .args(command(name, &input, output))
                .assert()
                .code(1)
                .stderr(contains(format!(
                    "{}: the output is also an input",
                    output.display()
                )));
            assert_eq!(
                std::fs::read(&input).unwrap(),
                before,
                "{name} -o {}",
                output.display()
            );
        }
    }
}

#[test]
fn another_file_is_written() {
    let dir = temp_dir();
    let input = dir.path().join("results.jsonl");
    evaluation_file(&input, samples(3, |_| (1.0, 1.0)), 1);
    for (name, output) in [
        ("report", "page.html"),
        ("export", "log.json"),
        ("merge", "merged.jsonl"),
    ] {
        let output = dir.path().join(output);
        grader()
            .args(command(name, &input, &output))
            .assert()
            .code(0);
        assert!(std::fs::metadata(&output).unwrap().len() > 0, "{name}");
    }
}
