//! `grader report`: the HTML page, read as text and opened in a real headless browser.

#![allow(clippy::unwrap_used)]

mod support;

use predicates::str::contains;
use support::{
    Outcome, browser, evaluation_file, grader, python, python_writes, samples, temp_dir,
};

const HOSTILE_ID: &str = "<script>document.title='owned'</script>";

/// An evaluation file from the project's runner: 12 samples over the reward range, one whose
/// grading fails, one whose id and subscore names are markup, and a command output in info.
fn evaluation(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("results.jsonl");
    let mut list = samples(12, |i| ((i % 4) as f64 / 3.0, 1.0));
    list.push((
        "fails".to_owned(),
        Outcome::Fails("judge said <b>no</b> & left"),
    ));
    list.push((
        HOSTILE_ID.to_owned(),
        Outcome::Graded(vec![(
            "<img src=x onerror=\"document.title='img'\">",
            1.0,
            1.0,
        )]),
    ));
    evaluation_file(&path, list, 1);
    path
}

#[test]
fn the_page_is_self_contained_and_escapes_everything_from_the_file() {
    let dir = temp_dir();
    let results = evaluation(dir.path());
    let page = dir.path().join("report.html");
    grader()
        .arg("report")
        .arg(&results)
        .arg("-o")
        .arg(&page)
        .assert()
        .code(0)
        .stdout(contains("report.html: 14 results (13 scored, 1 errored)"));
    let html = std::fs::read_to_string(&page).unwrap();

    // Nothing is loaded from anywhere: no src or href attribute (attributes are quoted, and a
    // quote from the file is escaped), no URL but the SVG namespace, and a policy that forbids
    // loading.
    assert!(!html.contains("src=\""), "an attribute loads something");
    assert!(!html.contains("href=\""), "a link");
    let urls = html.matches("http").count();
    let allowed =
        html.matches("http://www.w3.org/2000/svg").count() + html.matches("http-equiv").count();
    assert_eq!(urls, allowed);
    assert!(html.contains("default-src 'none'"));
    // One script element, ours; the file's markup is text.
    assert_eq!(html.matches("<script").count(), 1);
    assert!(html.contains("&lt;script&gt;document.title='owned'&lt;/script&gt;"));
    assert!(html.contains("&lt;img src=x onerror=&quot;document.title='img'&quot;&gt;"));
    assert!(html.contains("judge said &lt;b&gt;no&lt;/b&gt; &amp; left"));
    // The parts are there.
    assert!(html.contains(r#"<svg id="histogram""#));
    assert!(html.contains(r#"data-samples="14""#));
    assert!(html.contains(r#"<section id="errors" data-errors="1">"#));
    assert!(html.contains(r#"<table id="samples" data-rows="14">"#));
}

#[test]
fn python_sdk_results_make_a_page() {
    let Some(python) = python() else { return };
    let dir = temp_dir();
    let results = dir.path().join("python.jsonl");
    python_writes(&python, support::PYTHON_WRITES_LINES, &results);
    let page = dir.path().join("python.html");
    grader()
        .arg("report")
        .arg(&results)
        .arg("-o")
        .arg(&page)
        .assert()
        .code(0)
        .stdout(contains("3 results (2 scored, 1 errored)"));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("isError: sandbox died"));
    assert!(html.contains(r#"data-subscore="style""#));
}

#[test]
fn rows_beyond_the_limit_are_left_out_of_the_table_only() {
    let dir = temp_dir();
    let results = dir.path().join("many.jsonl");
    let mut list = samples(30, |_| (1.0, 1.0));
    for index in 0..8 {
        list.push((format!("bad{index}"), Outcome::Fails("no")));
    }
    evaluation_file(&results, list, 1);
    let page = dir.path().join("many.html");
    grader()
        .args(["report", "--max-rows", "5", "-o"])
        .arg(&page)
        .arg(&results)
        .assert()
        .code(0);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(r#"data-rows="5""#));
    assert!(html.contains("33 more results not in the table (--max-rows)"));
    assert!(html.contains(r#"data-count="30""#));
    assert!(html.contains(r#"<section id="errors" data-errors="8">"#));
    assert!(html.contains("The first 5 are listed (--max-rows)."));
}

#[test]
fn the_page_renders_in_a_headless_browser() {
    let Some(chromium) = browser::chromium() else {
        return;
    };
    let dir = temp_dir();
    let results = evaluation(dir.path());
    let page = dir.path().join("report.html");
    grader()
        .arg("report")
        .arg(&results)
        .arg("-o")
        .arg(&page)
        .assert()
        .code(0);

    let output = browser::run(&chromium, &page, &["--dump-dom"]);
    assert!(output.status.success(), "{output:?}");
    let dom = String::from_utf8(output.stdout).unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    // The script ran to its end, and no error was caught on the page or logged.
    assert!(
        dom.contains(r#"data-ready="yes""#),
        "the script did not run:\n{log}"
    );
    assert!(
        dom.contains(r#"<pre id="script-errors" hidden=""></pre>"#),
        "script errors: {dom}"
    );
    assert!(!log.contains("Uncaught"), "{log}");
    assert!(!log.contains("Content Security Policy"), "{log}");
    // The title is ours: neither the id's script nor the name's image handler ran.
    assert!(dom.contains("<title>Evaluation report</title>"), "{dom}");
    // The histogram has its ten bins holding every scored result; the counts are there.
    let bars = dom.matches(r#"<rect class="bar""#).count();
    assert_eq!(bars, 10, "{dom}");
    let counted: usize = dom
        .split(r#"data-count=""#)
        .skip(2) // the svg's own total, then one per bar
        .map(|rest| rest[..rest.find('"').unwrap()].parse::<usize>().unwrap())
        .sum();
    assert_eq!(counted, 13);
    assert!(dom.contains(r#"data-samples="14""#));
    assert!(
        dom.contains(r#"<span id="shown">14</span>"#),
        "the filter did not count"
    );
    // Each result's grade tree is in the page, folded in its row until opened.
    assert!(
        dom.contains(r#"<details><summary>2 subscore(s)</summary><ul class="tree"><li><span class="sub-name">tests</span>"#),
        "{dom}"
    );
    // The markup from the file is text in the page.
    assert!(dom.contains("<code>&lt;script&gt;document.title='owned'&lt;/script&gt;</code>"));
    assert_eq!(dom.matches("<script").count(), 1);
    assert_eq!(dom.matches("<img").count(), 0);

    // A screenshot for people to look at.
    let shots = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("report");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join("report.png");
    let _ = std::fs::remove_file(&shot);
    let output = browser::run(
        &chromium,
        &page,
        &[
            "--hide-scrollbars",
            "--window-size=1200,1600",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    assert!(output.status.success(), "{output:?}");
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    assert!(
        png.len() > 10_000,
        "a blank screenshot? {} bytes",
        png.len()
    );
    eprintln!("screenshot of the report: {}", shot.display());
}
