//! The results table says why without a click: a folded row names the subscores that failed or
//! fired and the first line of why, as the terminal says it (a timeout as "timed out after
//! 10s", a command as its exit code and last line of output).

#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod support;

use grader_core::Grade;
use serde_json::json;
use support::{grader, info, sub, temp_dir};

#[test]
fn a_folded_row_names_what_failed_and_why() {
    let dir = temp_dir();
    let result = Grade::from_subscores([
        sub("tests", 0.0, 0.6).with_info(info(json!({
            "exit_code": 1,
            "stdout": "..F\nE   AssertionError: 2 != 3\n1 failed in 0.12s\n",
            "stderr": "",
        }))),
        sub("slow", 0.0, 0.2).with_info(info(json!({
            "exit_code": null,
            "timed_out": true,
            "timeout": 10,
            "stdout": "",
            "stderr": "",
        }))),
        sub("lint", 1.0, 0.2).with_info(info(json!({"exit_code": 0}))),
        sub("deleted tests", 1.0, -0.5),
    ])
    .unwrap();
    let mut result = serde_json::to_value(&result).unwrap();
    result["sample_id"] = json!("q1");
    std::fs::write(dir.path().join("run.jsonl"), format!("{result}\n")).unwrap();
    grader()
        .current_dir(dir.path())
        .args(["report", "run.jsonl", "-o", "page.html"])
        .assert()
        .success();
    let page = std::fs::read_to_string(dir.path().join("page.html")).unwrap();
    let folded = page
        .split("<details><summary>")
        .nth(1)
        .and_then(|rest| rest.split("</summary>").next())
        .unwrap();
    assert_eq!(
        folded,
        "<span class=\"fail sub-name\">tests</span>: <span class=\"why\">exit code 1: 1 failed in \
         0.12s</span> · <span class=\"fail sub-name\">slow</span>: <span class=\"why\">timed out \
         after 10s</span> · <span class=\"fail sub-name\">deleted tests</span>: <span \
         class=\"why\">penalty −0.5 fired</span><span class=\"muted\"> (4 subscore(s))</span>"
    );
    // In the tree, each line gives the same reason after its value, as the terminal does.
    assert!(
        page.contains(
            "<span class=\"fail\">0.0000</span> <span class=\"why muted\">timed out after 10s</span>"
        ),
        "{page}"
    );
}
