//! `grader report` and `grader export --inspect` (to a `.json` and to a `.eval` log) on a large
//! evaluation, beside `grader summary` on the same file in the same run (one read of the file,
//! the baseline): time, peak resident memory, the size of what is written; for the report
//! pages the time to first paint in headless Chromium, beside a one-line page's in the same
//! browser; and how long `inspect view` takes to list the samples of the `.eval` log in
//! Chromium, beside a 100-result `.eval` log's in the same run.
//!
//! ```sh
//! cargo bench -p grader-cli --bench results_pages            # 100 000 results
//! cargo bench -p grader-cli --bench results_pages -- 20000   # another count
//! cargo bench -p grader-cli --bench results_pages -- 20000 --all-rows   # also paint the page
//!                                                               # with every result listed
//! cargo bench -p grader-cli --bench results_pages -- --view-only   # the exports and the
//!                                                               # inspect view listing only
//! ```
//!
//! The results are written under `target/` as the evaluation runner writes its lines: 50 000
//! samples × 2 epochs of a coding environment (a test command with 20 lines of output, a
//! judge's reason, a penalty that fires in 5 %), 2 % of the gradings failed with messages of
//! three kinds. Each command runs once after an untimed read of the file (so all read it from
//! the page cache); peak RSS is GNU time's `%M`. Paint times are Chromium's own
//! (`performance.getEntriesByType("paint")`), read over the DevTools protocol, median of three
//! loads (the page with every result in its table only with `--all-rows`: it takes minutes
//! and gigabytes); "script done"
//! is when the page's script had run (`performance.now()`), after the whole page was parsed.
//! Chromium and the Inspect AI venv (for the protocol driver) are those of the tests.

#![allow(clippy::unwrap_used, missing_docs)]

#[path = "../tests/support/browser.rs"]
#[allow(dead_code)]
mod browser;

use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use grader_core::{Grade, Info, SubScore};
use grader_eval::{ErrorKind, Line};
use serde_json::json;

fn info(value: serde_json::Value) -> Info {
    match value {
        serde_json::Value::Object(map) => map,
        _ => Info::new(),
    }
}

fn sub(name: &str, value: f64, weight: f64) -> SubScore {
    SubScore::new(name, value)
        .and_then(|s| s.with_weight(weight))
        .unwrap()
}

/// Writes `count` results to `path`.
fn write_file(path: &Path, count: u64) {
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let passing: String = (0..20)
        .map(|n| format!("test_module.py::test_case_{n} PASSED\n"))
        .collect();
    for index in 0..count {
        let (sample, epoch) = (format!("task-{}", index / 2), (index % 2 + 1) as u32);
        let line = if index % 50 == 7 {
            let message = match index % 3 {
                0 => format!("judge timed out after {}s", 30 + index % 17),
                1 => format!("sandbox {} exited with code 137", index % 1000),
                _ => "connection reset by peer".to_owned(),
            };
            Line::failed(sample, epoch, ErrorKind::Failed, message, 30.0)
        } else {
            let passed = index % 3 != 0;
            let tests = sub("tests", f64::from(passed), 0.7).with_info(info(json!({
                "_parameters": {"command": "pytest -q", "timeout_seconds": 120},
                "exit_code": i32::from(!passed),
                "stdout": passing,
                "stderr": if passed { "" } else { "FAILED test_module.py::test_case_3\n1 failed, 19 passed in 0.52s\n" },
            })));
            let judge = sub("judge", f64::from(index % 4 != 0), 0.3).with_info(info(json!({
                "reason": "The change fixes the parser and adds a regression test; the error message is clearer.",
            })));
            let edited = sub("tests_edited", f64::from(index % 20 == 5), -0.5);
            Line::graded(
                sample,
                epoch,
                Grade::from_subscores([tests, judge, edited]).unwrap(),
                1.5,
            )
        };
        out.write_all(&line.to_json_line().unwrap()).unwrap();
    }
    out.flush().unwrap();
}

/// Runs the grader with `args` under GNU time; returns (seconds, peak RSS in KiB).
fn measure(args: &[&str]) -> (f64, u64) {
    let report = scratch("time");
    let started = Instant::now();
    let status = Command::new("/usr/bin/time")
        .args(["-f", "%M", "-o"])
        .arg(&report)
        .arg(env!("CARGO_BIN_EXE_grader"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let seconds = started.elapsed().as_secs_f64();
    assert!(status.success(), "grader {args:?} failed");
    let text = std::fs::read_to_string(&report).unwrap();
    let _ = std::fs::remove_file(&report);
    (
        seconds,
        text.lines().last().unwrap().trim().parse().unwrap(),
    )
}

fn scratch(name: &str) -> PathBuf {
    // The name keeps its extension last: Chromium shows a file as HTML by its extension.
    target_dir().join(format!("bench-{}-{name}", std::process::id()))
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

/// Chromium's paint times of `page` (first paint, first contentful paint) and when the page's
/// script had run, in milliseconds: the median of `loads` fresh loads.
fn paint(chromium: &Path, python: &Path, page: &Path, loads: usize) -> [f64; 3] {
    let mut runs: Vec<[f64; 3]> = (0..loads)
        .map(|_| {
            let values = browser::look(
                chromium,
                python,
                &browser::Look {
                    url: &format!("file://{}", page.display()),
                    wait: "document.readyState === 'complete' && \
                           performance.getEntriesByName('first-contentful-paint').length > 0",
                    timeout_secs: 600,
                    evaluate: &[
                        "performance.getEntriesByName('first-paint')[0].startTime",
                        "performance.getEntriesByName('first-contentful-paint')[0].startTime",
                        "Number(document.documentElement.getAttribute('data-ready-ms') || 'NaN')",
                    ],
                    screenshot: None,
                    size: (1200, 900),
                },
            );
            [0, 1, 2].map(|i| values[i].as_f64().unwrap_or(f64::NAN))
        })
        .collect();
    runs.sort_by(|a, b| a[1].total_cmp(&b[1]));
    runs[runs.len() / 2]
}

fn main() {
    let count: u64 = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse().ok())
        .unwrap_or(100_000);
    assert!(
        Path::new("/usr/bin/time").exists(),
        "GNU time (/usr/bin/time) is needed to measure peak memory"
    );
    let results = scratch("results.jsonl");
    write_file(&results, count);
    let size = std::fs::metadata(&results).unwrap().len();
    let file = results.to_str().unwrap().to_owned();
    let _ = Command::new("cat")
        .arg(&file)
        .stdout(Stdio::null())
        .status();
    println!(
        "{count} results, {:.1} MB of JSON Lines\n",
        size as f64 / 1e6
    );

    let page = scratch("report.html");
    let all_rows = scratch("report-all.html");
    let log = scratch("inspect.json");
    let eval_dir = scratch("view");
    std::fs::create_dir_all(&eval_dir).unwrap();
    let eval_log = eval_dir.join("large.eval");
    let (page_s, all_s, log_s, eval_s) = (
        page.to_str().unwrap().to_owned(),
        all_rows.to_str().unwrap().to_owned(),
        log.to_str().unwrap().to_owned(),
        eval_log.to_str().unwrap().to_owned(),
    );
    let all = count.to_string();
    let view_only = std::env::args().any(|arg| arg == "--view-only");
    let runs: [(&str, Vec<&str>, Option<&Path>); 5] = [
        ("grader summary (baseline)", vec!["summary", &file], None),
        (
            "grader report",
            vec!["report", &file, "-o", &page_s],
            Some(&page),
        ),
        (
            "grader report --max-rows all",
            vec!["report", &file, "--max-rows", &all, "-o", &all_s],
            Some(&all_rows),
        ),
        (
            "grader export --inspect (.json)",
            vec!["export", "--inspect", &file, "-o", &log_s],
            Some(&log),
        ),
        (
            "grader export --inspect (.eval)",
            vec!["export", "--inspect", &file, "-o", &eval_s],
            Some(&eval_log),
        ),
    ];
    println!("| command | seconds | ÷ summary | peak RSS | written |");
    println!("|---|---|---|---|---|");
    let mut baseline = None;
    for (name, args, written) in &runs {
        if view_only && name.starts_with("grader report") {
            continue;
        }
        let (seconds, rss) = measure(args);
        let base = *baseline.get_or_insert(seconds);
        let written = written.map_or_else(
            || "-".to_owned(),
            |path| {
                format!(
                    "{:.1} MB",
                    std::fs::metadata(path).unwrap().len() as f64 / 1e6
                )
            },
        );
        println!(
            "| {name} | {seconds:.2} | {:.2} | {:.1} MiB | {written} |",
            seconds / base,
            rss as f64 / 1024.0
        );
    }

    let Some(chromium) = browser::chromium() else {
        println!("\nno Chromium: no paint times");
        return;
    };
    let Some(python) = grader_tests::python::inspect_python(env!("CARGO_TARGET_TMPDIR")) else {
        println!("\nno Python: no paint times");
        return;
    };
    inspect_view_listing(&chromium, &python, &eval_dir, count);
    if view_only {
        for path in [&results, &log] {
            let _ = std::fs::remove_file(path);
        }
        let _ = std::fs::remove_dir_all(&eval_dir);
        return;
    }
    let blank = scratch("blank.html");
    std::fs::write(
        &blank,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>one line</title>\
         </head><body><p>One line of text.</p></body></html>",
    )
    .unwrap();
    println!(
        "\n| page | first paint (ms) | first contentful paint (ms) | script done (ms) | ÷ one-line page's FCP |"
    );
    println!("|---|---|---|---|---|");
    let base = paint(&chromium, &python, &blank, 3);
    // The page with every result in its table is not loaded: at 100 000 results it had not
    // finished loading after 7 minutes, its renderer holding 6.9 GB; `--max-rows` is what
    // keeps the page usable. `--all-rows` loads it once anyway.
    let all_rows_too = std::env::args().any(|arg| arg == "--all-rows");
    for (name, path, loads) in [
        ("one-line page (baseline)", &blank, 0),
        ("report (default --max-rows 5000)", &page, 3),
        (
            "report, every result in the table",
            &all_rows,
            usize::from(all_rows_too),
        ),
    ] {
        if path == &all_rows && loads == 0 {
            continue;
        }
        let [first, contentful, ready] = if loads == 0 {
            base
        } else {
            paint(&chromium, &python, path, loads)
        };
        println!(
            "| {name} | {first:.0} | {contentful:.0} | {ready:.0} | {:.1} |",
            contentful / base[1]
        );
    }
    for path in [&results, &page, &all_rows, &log, &blank] {
        let _ = std::fs::remove_file(path);
    }
    let _ = std::fs::remove_dir_all(&eval_dir);
}

/// `GET path` from 127.0.0.1:`port`: whether it answers 200.
fn answers(port: u16, path: &str) -> bool {
    use std::io::{Read as _, Write as _};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(600)));
    if write!(
        stream,
        "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    )
    .is_err()
    {
        return false;
    }
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response.starts_with("HTTP/1.1 200") || response.starts_with("HTTP/1.0 200")
}

/// How long `inspect view` takes to list the samples of `large.eval` in `dir` (`count`
/// results) in headless Chromium, from opening the log's page to five sample rows shown,
/// beside a 100-result `.eval` log's (the baseline) under the same server: the median of
/// three loads each, and the sample count the viewer's footer shows.
fn inspect_view_listing(chromium: &Path, python: &Path, dir: &Path, count: u64) {
    use std::os::unix::process::CommandExt as _;
    let small_results = scratch("small.jsonl");
    write_file(&small_results, 100);
    let small = dir.join("small.eval");
    let (_, _) = measure(&[
        "export",
        "--inspect",
        small_results.to_str().unwrap(),
        "-o",
        small.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_file(&small_results);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // Without `..` in it: the server refuses to list a folder named with one.
    let dir = std::fs::canonicalize(dir).unwrap();
    let server = Command::new(python)
        .args(["-m", "inspect_ai", "view", "--log-dir"])
        .arg(&dir)
        .args(["--port", &port.to_string(), "--host", "127.0.0.1"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let _server = browser::Group(server);
    let started = Instant::now();
    while !answers(port, "/api/log-files") {
        assert!(
            started.elapsed().as_secs() < 60,
            "inspect view did not answer"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    println!(
        "\n| `inspect view` of a .eval log | seconds to list the samples (median of 3) | ÷ 100 results' | samples the viewer counts |"
    );
    println!("|---|---|---|---|");
    let cells = r#"document.querySelectorAll('[data-col-id="sampleId"]')"#;
    let mut base = None;
    for (name, results) in [("small.eval", 100), ("large.eval", count)] {
        let mut shown = String::new();
        let mut times: Vec<f64> = (0..3)
            .map(|_| {
                let started = Instant::now();
                let values = browser::look(
                    chromium,
                    python,
                    &browser::Look {
                        url: &format!("http://127.0.0.1:{port}/#/tasks/{name}"),
                        wait: &format!(
                            "{cells}.length >= 5 && /Samples/.test(document.body.innerText)"
                        ),
                        timeout_secs: 600,
                        evaluate: &[
                            "(document.body.innerText.match(/[\\d,]+ \\/ [\\d,]+ Samples|[\\d,]+ Samples/) || [''])[0]",
                        ],
                        screenshot: None,
                        size: (1400, 900),
                    },
                );
                shown = values[0].as_str().unwrap_or_default().to_owned();
                started.elapsed().as_secs_f64()
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let median = times[1];
        let base = *base.get_or_insert(median);
        println!(
            "| {results} results | {median:.1} | {:.1} | {shown} |",
            median / base
        );
    }
}
