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
    assert!(html.contains(r#"<section id="errors" data-errors="1" data-groups="1">"#));
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
fn rows_beyond_the_limit_are_left_out_of_the_table_only_the_worst_kept() {
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
    // The table keeps the results that went worst: the first five errored ones.
    assert!(html.contains(r#"data-left-out="33""#));
    assert!(html.contains("the table lists the 5 results that went worst"));
    assert_eq!(
        shown(&table_rows(&html)),
        ["bad0", "bad1", "bad2", "bad3", "bad4"]
    );
    assert!(html.contains(r#"data-count="30""#));
    // The eight errors share one message: one group, counted whole.
    assert!(html.contains(r#"<section id="errors" data-errors="8" data-groups="1">"#));
    assert!(html.contains(r#"<td class="num fail">8</td>"#));
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
        dom.contains(r#"<details><summary>2 subscore(s), none failed</summary><ul class="tree"><li data-subscore="tests" data-weight="0.8""#),
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

/// A coding environment's results: a test command's output (one short, one long and cut by
/// the grader's budget), a judge's reason with markup and quotes, a penalty for editing the
/// tests that fires once, and 42 judge time-outs whose messages differ in their numbers.
fn coding_results(dir: &std::path::Path) -> std::path::PathBuf {
    use grader_core::Grade;
    use grader_eval::{ErrorKind, Line};
    use serde_json::json;
    use support::{info, sub};

    let short = "----\nRan 3 tests in 0.01s\n\nOK (skipped=1)\n";
    let long: String = (1..=100).map(|n| format!("line {n}\n")).collect();
    let result = |tests: f64, stdout: &str, stderr: &str, judge: f64, edited: f64| {
        let mut tests_info = json!({
            "_parameters": {"command": "python -m unittest", "timeout_seconds": 60},
            "exit_code": i32::from(tests < 1.0),
            "stdout": stdout,
            "stderr": stderr,
        });
        if stdout.len() > 200 {
            tests_info["stdout_dropped_bytes"] = json!(12345);
        }
        Grade::from_subscores([
            sub("tests", tests, 0.7).with_info(info(tests_info)),
            sub("judge", judge, 0.3).with_info(info(json!({
                "reason": "The diff \"fixes\" <the> bug & adds a test.",
            }))),
            sub("tests_edited", edited, -0.5),
        ])
        .unwrap()
    };
    let mut lines = vec![
        Line::graded("ok", 1, result(1.0, "", short, 1.0, 0.0), 0.1),
        Line::graded("edited", 1, result(1.0, "", short, 1.0, 1.0), 0.1),
        Line::graded(
            "broken",
            1,
            result(0.0, &long, "FAILED (failures=1)\n", 1.0, 0.0),
            0.1,
        ),
        Line::graded("unjudged", 1, result(1.0, "", short, 0.0, 0.0), 0.1),
    ];
    for index in 0..42 {
        lines.push(Line::failed(
            format!("slow{index}"),
            1,
            ErrorKind::Failed,
            format!("judge timed out after {}.{}s", 30 + index, index % 10),
            30.0,
        ));
    }
    let path = dir.join("coding.jsonl");
    let text: String = lines
        .iter()
        .map(|line| String::from_utf8(line.to_json_line().unwrap()).unwrap())
        .collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn coding_page(dir: &std::path::Path) -> std::path::PathBuf {
    let results = coding_results(dir);
    let page = dir.join("coding.html");
    grader()
        .arg("report")
        .arg(&results)
        .arg("-o")
        .arg(&page)
        .assert()
        .code(0)
        .stdout(contains("46 results (4 scored, 42 errored)"));
    page
}

#[test]
fn output_is_text_weights_are_shown_and_errors_are_grouped() {
    let dir = temp_dir();
    let html = std::fs::read_to_string(coding_page(dir.path())).unwrap();

    // The test command's stderr is a preformatted text with its own line breaks, not a JSON
    // string with escaped ones.
    assert!(
        html.contains("<pre>----\nRan 3 tests in 0.01s\n\nOK (skipped=1)\n</pre>"),
        "{html}"
    );
    assert!(!html.contains(r"\nRan 3 tests"), "escaped newlines");
    assert!(!html.contains("&quot;stderr&quot;"), "info as JSON");
    assert!(html.contains(r#"<span class="muted">exit_code</span> <code>1</code>"#));
    assert!(html.contains(
        r#"<span class="muted">_parameters.command</span> <code>python -m unittest</code>"#
    ));
    // The long output keeps its first and last 20 lines, counts the 60 between, and says what
    // the grader's budget dropped.
    assert!(html.contains(r#"data-lines-left-out="60""#));
    assert!(html.contains("<pre class=\"head\">line 1\nline 2\n"));
    assert!(html.contains("line 20\n</pre>"));
    assert!(html.contains("<pre class=\"tail\">line 81\n"));
    assert!(html.contains("line 100\n</pre>"));
    assert!(!html.contains("line 50\n"));
    assert!(
        html.contains("12345 bytes dropped by the grader&#39;s output budget")
            || html.contains("12345 bytes dropped by the grader's output budget")
    );
    // Weights in the subscore table; the penalty's row says how often it fired.
    assert!(html.contains(r#"<tr data-subscore="tests" data-weight="0.7" data-kind="score">"#));
    assert!(
        html.contains(
            r#"<tr data-subscore="tests_edited" data-weight="−0.5" data-kind="penalty">"#
        )
    );
    assert!(html.contains(">fired 0.2500 (1)</td>"), "{html}");
    assert!(
        !html.contains("data-pass-rate=\"1\"><"),
        "a penalty given a pass rate"
    );
    // The 42 time-outs are one group with its count.
    assert!(html.contains(r#"<section id="errors" data-errors="42" data-groups="1">"#));
    assert!(html.contains(r#"data-group-count="42""#));
    assert!(html.contains("judge timed out after 30.0s"));
    assert!(html.contains("and 34 more"));
}

/// The `data-sample` of each row of the table, in the order the DOM has them, with whether
/// the row is hidden.
fn table_rows(dom: &str) -> Vec<(String, bool)> {
    let table = &dom[dom.find(r#"<table id="samples""#).unwrap()..];
    table
        .split("<tr data-sample=\"")
        .skip(1)
        .map(|rest| {
            let id = rest[..rest.find('"').unwrap()].to_owned();
            let tag = &rest[..rest.find('>').unwrap()];
            (id, tag.contains(" hidden=\"\""))
        })
        .collect()
}

fn shown(rows: &[(String, bool)]) -> Vec<&str> {
    rows.iter()
        .filter(|(_, hidden)| !hidden)
        .map(|(id, _)| id.as_str())
        .collect()
}

#[test]
fn filters_and_sorting_work_in_a_headless_browser() {
    let Some(chromium) = browser::chromium() else {
        return;
    };
    let dir = temp_dir();
    let page = coding_page(dir.path());
    let url = |fragment: &str| format!("file://{}#{fragment}", page.display());
    let dom = |fragment: &str| {
        let output = browser::run_url(&chromium, &url(fragment), &["--dump-dom"]);
        assert!(output.status.success(), "{output:?}");
        let dom = String::from_utf8(output.stdout).unwrap();
        assert!(
            dom.contains(r#"data-ready="yes""#),
            "the script did not run"
        );
        assert!(
            dom.contains(r#"<pre id="script-errors" hidden=""></pre>"#),
            "{dom}"
        );
        dom
    };

    // Penalised: the one result whose penalty fired, its tree opened; the penalty is styled
    // as a failure there and the penalty that did not fire elsewhere as a pass.
    let penalised = dom("status=penalised&open=1");
    assert_eq!(shown(&table_rows(&penalised)), ["edited"]);
    assert!(penalised.contains(r#"<span id="shown">1</span>"#));
    assert!(
        penalised.contains(r#"<li class="penalty-fired" data-subscore="tests_edited" data-weight="-0.5" data-verdict="fail"><span class="sub-name">tests_edited</span> <span class="muted">weight −0.5 · value </span><span class="fail">1.0000</span><span class="badge fail">penalty fired</span>"#),
        "{penalised}"
    );
    assert!(penalised.contains(r#"<span class="badge pass">penalty not fired</span>"#));
    let folded = penalised
        .split("<details open=\"\"><summary>")
        .nth(1)
        .and_then(|rest| rest.split("</summary>").next())
        .unwrap_or_default()
        .to_owned();
    // Folded, the row already says which subscore went wrong, and why.
    assert_eq!(
        folded,
        "<span class=\"fail sub-name\">tests_edited</span>: <span class=\"why\">penalty −0.5 fired</span><span class=\"muted\"> (3 subscore(s))</span>"
    );
    // The page's style gives both classes of a fired penalty the failure colour.
    assert!(penalised.contains(".fail { color: var(--fail); }"));
    assert!(penalised.contains("li.penalty-fired > .sub-name { color: var(--fail); }"));
    // The texts are in the DOM as text: line breaks, quotes and markup as they were.
    assert!(penalised.contains("<pre>----\nRan 3 tests in 0.01s\n\nOK (skipped=1)\n</pre>"));
    assert!(penalised.contains("<pre>The diff \"fixes\" &lt;the&gt; bug &amp; adds a test.</pre>"));

    // Failed, by subscore: only the result whose tests failed; by the whole reward: also the
    // one the judge failed and the penalised one.
    assert_eq!(
        shown(&table_rows(&dom("status=failed&subscore=tests"))),
        ["broken"]
    );
    assert_eq!(
        shown(&table_rows(&dom("status=failed&subscore=judge"))),
        ["unjudged"]
    );
    assert_eq!(
        shown(&table_rows(&dom("status=failed"))),
        ["edited", "broken", "unjudged"]
    );
    let errored = table_rows(&dom("status=errored"));
    assert_eq!(shown(&errored).len(), 42);
    assert!(shown(&errored).iter().all(|id| id.starts_with("slow")));

    // Sorted by reward, lowest first: the errored results (no reward) first, then the
    // rewards in order; highest first is the reverse, errors last.
    let rewards = |dom: &str| -> Vec<Option<f64>> {
        let table = &dom[dom.find(r#"<table id="samples""#).unwrap()..];
        table
            .split(" data-reward=\"")
            .skip(1)
            .map(|rest| rest[..rest.find('"').unwrap()].parse().ok())
            .collect()
    };
    let ascending = rewards(&dom("sort=reward-asc"));
    assert_eq!(ascending.len(), 46);
    assert!(ascending[..42].iter().all(Option::is_none));
    let scored: Vec<f64> = ascending[42..].iter().map(|r| r.unwrap()).collect();
    assert!(scored.windows(2).all(|w| w[0] <= w[1]), "{scored:?}");
    assert_eq!(shown(&table_rows(&dom("sort=reward-asc")))[42], "broken");
    let descending = rewards(&dom("sort=reward-desc"));
    assert!(descending[4..].iter().all(Option::is_none));
    assert_eq!(descending[0], Some(1.0));

    // Screenshots for people to look at: the failed results opened, and the penalised one.
    let shots = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("report");
    std::fs::create_dir_all(&shots).unwrap();
    for (name, fragment) in [
        ("failed.png", "status=failed&subscore=tests&open=1"),
        ("penalised.png", "status=penalised&open=1"),
    ] {
        let shot = shots.join(name);
        let _ = std::fs::remove_file(&shot);
        let output = browser::run_url(
            &chromium,
            &url(fragment),
            &[
                "--hide-scrollbars",
                "--window-size=1200,1800",
                &format!("--screenshot={}", shot.display()),
            ],
        );
        assert!(output.status.success(), "{output:?}");
        let png = std::fs::read(&shot).unwrap();
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{name}");
        eprintln!("screenshot: {}", shot.display());
    }
}

#[test]
fn a_fired_penalty_is_painted_in_the_failure_colour() {
    let Some(chromium) = browser::chromium() else {
        return;
    };
    // The browser is driven over the DevTools protocol by a script in the Inspect AI venv.
    let Some(python) = support::inspect_python() else {
        return;
    };
    let dir = temp_dir();
    let page = coding_page(dir.path());
    let colour =
        |selector: &str| format!("getComputedStyle(document.querySelector({selector:?})).color");
    let shots = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("report");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join("penalty-colours.png");
    let values = browser::look(
        &chromium,
        &python,
        &browser::Look {
            url: &format!("file://{}#open=1", page.display()),
            wait: "document.documentElement.getAttribute('data-ready') === 'yes'",
            timeout_secs: 60,
            evaluate: &[
                // The penalty that fired in `edited`: its value, its name, its badge.
                &colour(r#"tr[data-sample="edited"] li[data-subscore="tests_edited"] > span.fail"#),
                &colour(r#"tr[data-sample="edited"] li[data-subscore="tests_edited"] > .sub-name"#),
                &colour(r#"tr[data-sample="edited"] li[data-subscore="tests_edited"] > .badge"#),
                // A failed subscore, a passed one, and the penalty that did not fire in `ok`.
                &colour(r#"tr[data-sample="broken"] li[data-subscore="tests"] > span.fail"#),
                &colour(r#"tr[data-sample="ok"] li[data-subscore="tests"] > span.pass"#),
                &colour(r#"tr[data-sample="ok"] li[data-subscore="tests_edited"] > span.pass"#),
                // The penalty's row in the subscore table, and its bar.
                &colour(r#"tr[data-subscore="tests_edited"] td[data-fired-rate]"#),
                r#"getComputedStyle(document.querySelector('tr[data-subscore="tests_edited"] .meter > span')).backgroundColor"#,
                r#"getComputedStyle(document.querySelector('tr[data-subscore="tests"] .meter > span')).backgroundColor"#,
            ],
            screenshot: Some(&shot),
            size: (1200, 1600),
        },
    );
    let colours: Vec<&str> = values.iter().map(|v| v.as_str().unwrap()).collect();
    let (fail, pass) = (colours[3], colours[4]);
    assert_ne!(fail, pass);
    assert_eq!(colours[0], fail, "the fired penalty's value");
    assert_eq!(colours[1], fail, "the fired penalty's name");
    assert_eq!(colours[2], fail, "the fired penalty's badge");
    assert_eq!(colours[5], pass, "a penalty that did not fire");
    assert_eq!(colours[6], fail, "the penalty's fired rate");
    assert_eq!(colours[7], fail, "the penalty's bar");
    assert_ne!(colours[8], fail, "a score's bar");
    eprintln!("screenshot: {}", shot.display());
}

#[test]
fn a_limited_table_keeps_errors_then_penalties_then_the_lowest_rewards() {
    let dir = temp_dir();
    let results = coding_results(dir.path());
    let page = dir.path().join("worst.html");
    grader()
        .args(["report", "--max-rows", "44", "-o"])
        .arg(&page)
        .arg(&results)
        .assert()
        .code(0);
    let html = std::fs::read_to_string(&page).unwrap();
    // 42 errors, then the penalised result, then the lowest reward (`broken`, 0.3) of the
    // three others; in file order.
    let rows = shown(&table_rows(&html)).join(" ");
    assert!(rows.starts_with("edited broken slow0 slow1 "), "{rows}");
    assert!(
        !rows.contains("unjudged") && !rows.contains("ok "),
        "{rows}"
    );
    assert!(html.contains(r#"data-left-out="2""#));
}

/// A sample's input, target and answer, where its line holds them, are in its row: folded
/// with the rest (a `<details>` closed until opened), each a text block cut as the others,
/// escaped; a failed grading's row has them too, and a row whose line holds none has no block.
#[test]
fn a_sample_s_input_target_and_answer_are_in_its_row_folded_and_escaped() {
    use grader_eval::{ErrorKind, Line};
    let dir = temp_dir();
    let mut graded = Line::graded(
        "q1",
        1,
        grader_core::EvaluationResult::from_reward(0.5).unwrap(),
        0.1,
    );
    graded.input = Some("Solve <b>x</b> + 1 = 3.\nShow your work.".to_owned());
    graded.target = Some("x = 2".to_owned());
    graded.answer = Some(format!(
        "<script>document.title='owned'</script>\n{}",
        "step\n".repeat(100)
    ));
    let mut failed = Line::failed("q2", 1, ErrorKind::Failed, "judge timed out", 1.0);
    failed.input = Some("What is 6 × 7?".to_owned());
    let plain = Line::graded(
        "q3",
        1,
        grader_core::EvaluationResult::from_reward(1.0).unwrap(),
        0.1,
    );
    let text: String = [graded, failed, plain]
        .iter()
        .map(|line| String::from_utf8(line.to_json_line().unwrap()).unwrap())
        .collect();
    std::fs::write(dir.path().join("texts.jsonl"), text).unwrap();
    grader()
        .current_dir(dir.path())
        .args(["report", "texts.jsonl", "-o", "page.html"])
        .assert()
        .code(0);
    let page = std::fs::read_to_string(dir.path().join("page.html")).unwrap();
    let row = |id: &str| {
        let start = page.find(&format!("<tr data-sample=\"{id}\"")).unwrap();
        let end = start + page[start..].find("</tr>").unwrap();
        page[start..end].to_owned()
    };
    let q1 = row("q1");
    assert!(
        q1.contains(r#"<details class="sample-texts"><summary>input, target, answer"#),
        "{q1}"
    );
    assert!(
        q1.contains(r#"data-key="input""#)
            && q1.contains("Solve &lt;b&gt;x&lt;/b&gt; + 1 = 3.\nShow your work."),
        "{q1}"
    );
    assert!(
        q1.contains(r#"data-key="target""#) && q1.contains("x = 2"),
        "{q1}"
    );
    // The long answer is cut as every long text is, and its markup is text.
    assert!(
        q1.contains("&lt;script&gt;document.title='owned'&lt;/script&gt;"),
        "{q1}"
    );
    assert!(q1.contains(r#"data-lines-left-out="#), "{q1}");
    assert_eq!(page.matches("<script").count(), 1);
    let q2 = row("q2");
    assert!(
        q2.contains("judge timed out") && q2.contains("What is 6 × 7?"),
        "{q2}"
    );
    assert!(q2.contains(r#"<summary>input"#), "{q2}");
    assert!(!row("q3").contains("sample-texts"));
}
