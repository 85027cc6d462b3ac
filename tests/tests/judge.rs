//! The LLM judge against a scripted OpenAI-compatible server on 127.0.0.1: the reference's
//! request and result, every way a call can fail (each a typed error naming the criterion,
//! never a 0), retries and their attempt counts, the deadline, the lenient policy, and the
//! opt-in panel, batching, structured output, cache and call limit.

use grader_tests::child::Bounded as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use grader_core::judge::prompts::{SYSTEM_PROMPT, user_prompt};
use grader_core::judge::transport::{RetryPolicy, TransportError};
use grader_core::judge::{Criterion, JudgeCache, JudgeConfig, JudgeError, LlmJudge};
use grader_core::{Failure, SubScore};
use grader_tests::judge_server::{Call, Reply, ScriptedServer};
use serde_json::{Value, json};

/// Fast retries, so that tests of many attempts take milliseconds.
fn quick_retries(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(4),
        ..RetryPolicy::default()
    }
}

fn config(server: &ScriptedServer) -> JudgeConfig {
    JudgeConfig::new()
        .base_url(server.base_url())
        .api_key("test-key")
        .retry(quick_retries(6))
}

/// Replies MET to criteria whose text starts with "yes", UNMET otherwise.
fn by_prefix(call: &Call<'_>) -> Reply {
    if call.criterion().starts_with("yes") {
        Reply::verdict("MET", "present")
    } else {
        Reply::verdict("UNMET", "absent")
    }
}

fn judge_error(result: Result<SubScore, JudgeError>) -> JudgeError {
    match result {
        Ok(sub) => panic!("expected an error, got {sub:?}"),
        Err(error) => error,
    }
}

fn reason(child: &SubScore) -> &str {
    child
        .info()
        .and_then(|i| i["reason"].as_str())
        .unwrap_or("")
}

#[tokio::test]
async fn sends_the_reference_request_and_returns_its_result_shape() {
    let server = ScriptedServer::start(by_prefix);
    let graded = LlmJudge::new(
        "Paris is the capital.",
        [
            Criterion::new("yes: names Paris"),
            Criterion::weighted("no: names Lyon", -1.0),
            Criterion::weighted("yes: is polite", 2.0),
        ],
    )
    .question("Capital of France?")
    .config(config(&server))
    .grade(0.6)
    .await
    .expect("graded");

    let requests = server.requests();
    assert_eq!(requests.len(), 3, "one call per criterion");
    for request in &requests {
        assert_eq!(request.path, "/v1/chat/completions");
        assert_eq!(request.header("authorization"), Some("Bearer test-key"));
        let body = request.body.as_object().expect("a JSON object");
        let mut keys: Vec<&str> = body.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["max_tokens", "messages", "model"], "no other fields");
        assert_eq!(body["model"], "claude-sonnet-5-5");
        assert_eq!(body["max_tokens"], 1024);
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": SYSTEM_PROMPT})
        );
    }
    let mut prompts: Vec<&str> = requests.iter().map(|r| r.user_prompt()).collect();
    prompts.sort_unstable();
    let mut expected = vec![
        user_prompt(
            "yes: names Paris",
            1.0,
            "Paris is the capital.",
            "Capital of France?",
        ),
        user_prompt(
            "no: names Lyon",
            -1.0,
            "Paris is the capital.",
            "Capital of France?",
        ),
        user_prompt(
            "yes: is polite",
            2.0,
            "Paris is the capital.",
            "Capital of France?",
        ),
    ];
    expected.sort_unstable();
    assert_eq!(prompts, expected);

    assert_eq!(graded.name(), "LLMJudgeGrader");
    assert_eq!(graded.weight(), 0.6);
    assert_eq!(graded.value(), 1.0); // (1 + 2 - 0) / 3
    let info = graded.info().expect("info");
    assert_eq!(info["model"], "claude-sonnet-5-5");
    assert_eq!(
        info["_parameters"]["criteria"],
        json!([
            "yes: names Paris",
            ["no: names Lyon", -1.0],
            ["yes: is polite", 2.0]
        ])
    );
    let children = graded.children().expect("children");
    let summary: Vec<(&str, f64, f64, &str)> = children
        .iter()
        .map(|c| (c.name(), c.weight(), c.value(), reason(c)))
        .collect();
    assert_eq!(
        summary,
        [
            ("yes: names Paris", 1.0, 1.0, "present"),
            ("no: names Lyon", -1.0, 0.0, "absent"),
            ("yes: is polite", 2.0, 1.0, "present"),
        ]
    );
    assert_eq!(
        children[0]
            .info()
            .map(|i| i.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["reason".to_owned()])
    );
}

#[tokio::test]
async fn no_criteria_is_the_references_zero_with_an_error_and_asks_nothing() {
    let server = ScriptedServer::start(by_prefix);
    let sub = LlmJudge::new("answer", Vec::<Criterion>::new())
        .config(config(&server))
        .judge()
        .await
        .expect("judged");
    assert_eq!(sub.value(), 0.0);
    assert_eq!(
        sub.info().map(|i| i["error"].clone()),
        Some(json!("no criteria provided"))
    );
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn every_reply_form_the_strict_parser_accepts_or_refuses() {
    let accepted = [
        (r#"{"criterion_status": "MET", "explanation": "ok"}"#, true),
        (
            r#"{"criterion_status": "unmet", "explanation": "no"}"#,
            false,
        ),
        ("```json\n{\"criterion_status\": \"Met\"}\n```", true),
        ("Verdict: {\"criterion_status\": \"UNMET\"} (sure)", false),
        ("MET", true),
        ("The criterion is MET.", true),
        ("UNMET", false),
        ("UN_MET", false),
        ("UN-MET", false),
        ("NOT MET", false),
        ("not_MET", false),
        ("MET, then again NOT MET", false),
    ];
    for (content, met) in accepted {
        let server = ScriptedServer::start(move |_| Reply::content(content));
        let sub = LlmJudge::new("a", ["c"])
            .config(config(&server))
            .judge()
            .await
            .unwrap_or_else(|e| panic!("{content:?}: {e}"));
        assert_eq!(sub.value(), if met { 1.0 } else { 0.0 }, "{content:?}");
        assert_eq!(server.request_count(), 1, "a verdict is not retried");
    }
    let refused = [
        r#"{"criterion_status": "PARTIAL", "explanation": "x"}"#,
        r#"{"explanation": "forgot the status"}"#,
        r#"{"criterion_status": true}"#,
        "met",
        "It is Met.",
        "METHODICAL",
        "",
        "I cannot judge this.",
    ];
    for content in refused {
        let server = ScriptedServer::start(move |_| Reply::content(content));
        let error = judge_error(
            LlmJudge::new("a", ["the criterion"])
                .config(config(&server))
                .judge()
                .await,
        );
        assert!(
            matches!(&error, JudgeError::NoVerdict { criterion, .. } if criterion == "the criterion"),
            "{content:?}: {error}"
        );
        assert_eq!(server.request_count(), 1);
    }
    // A null content is an empty reply: no verdict.
    let server = ScriptedServer::start(|_| Reply::NullContent);
    let error = judge_error(
        LlmJudge::new("a", ["c"])
            .config(config(&server))
            .judge()
            .await,
    );
    assert!(matches!(error, JudgeError::NoVerdict { .. }), "{error}");
}

#[tokio::test]
async fn a_429_with_retry_after_is_waited_out_then_retried() {
    let server = ScriptedServer::start(|call| match call.repeat {
        0 => Reply::rate_limited("0.05"),
        _ => Reply::verdict("MET", "fine"),
    });
    let sub = LlmJudge::new("a", ["one", "two"])
        .config(config(&server))
        .judge()
        .await
        .expect("judged after a retry");
    assert_eq!(sub.value(), 1.0);
    assert_eq!(server.request_count(), 4, "two attempts per criterion");
}

#[tokio::test]
async fn a_persistent_500_is_an_http_error_after_seven_attempts_not_a_zero() {
    let server = ScriptedServer::start(|_| Reply::status(500));
    let error = judge_error(
        LlmJudge::new("a", ["the criterion"])
            .config(config(&server))
            .judge()
            .await,
    );
    match &error {
        JudgeError::Status {
            criterion,
            status,
            attempts,
            body,
            ..
        } => {
            assert_eq!(
                (criterion.as_str(), *status, *attempts),
                ("the criterion", 500, 7)
            );
            assert!(body.contains("scripted 500"), "{body}");
        }
        other => panic!("{other}"),
    }
    assert_eq!(server.request_count(), 7);
    assert!(error.to_string().contains("the criterion"));
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    for status in [400, 401, 404] {
        let server = ScriptedServer::start(move |_| Reply::status(status));
        let error = judge_error(
            LlmJudge::new("a", ["c"])
                .config(config(&server))
                .judge()
                .await,
        );
        assert!(
            matches!(error, JudgeError::Status { status: s, attempts: 1, .. } if s == status),
            "{error}"
        );
        assert_eq!(server.request_count(), 1);
    }
}

#[tokio::test]
async fn a_body_that_is_not_a_chat_completion_is_malformed_and_kept() {
    for body in [
        "<html>gateway error</html>",
        r#"{"choices": []}"#,
        r#"{"object": "list"}"#,
    ] {
        let server = ScriptedServer::start(move |_| Reply::Raw(body.into()));
        let error = judge_error(
            LlmJudge::new("a", ["c"])
                .config(config(&server))
                .judge()
                .await,
        );
        match error {
            JudgeError::Malformed {
                criterion,
                body: received,
                ..
            } => {
                assert_eq!(criterion, "c");
                assert_eq!(received, body, "what was received is kept");
            }
            other => panic!("{body}: {other}"),
        }
        assert_eq!(server.request_count(), 1);
    }
}

#[tokio::test]
async fn a_body_that_never_ends_times_out_each_attempt() {
    let server = ScriptedServer::start(|_| Reply::Endless);
    let error = judge_error(
        LlmJudge::new("a", ["c"])
            .config(
                config(&server)
                    .request_timeout(Duration::from_millis(300))
                    .retry(quick_retries(1)),
            )
            .judge()
            .await,
    );
    assert!(
        matches!(
            error,
            JudgeError::Transport {
                attempts: 2,
                source: TransportError::Timeout(_),
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn the_deadline_counts_from_the_judges_start_queueing_included() {
    let server =
        ScriptedServer::start(|_| Reply::verdict("MET", "late").after(Duration::from_secs(30)));
    let error = judge_error(
        LlmJudge::new("a", ["first", "second"])
            .config(
                config(&server)
                    .deadline(Duration::from_millis(300))
                    .max_concurrent_calls(1),
            )
            .judge()
            .await,
    );
    assert!(
        matches!(&error, JudgeError::Deadline { attempts: 1, .. }),
        "{error}"
    );
    assert_eq!(
        server.request_count(),
        1,
        "the second never got a call slot"
    );
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_a_typed_error() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let error = judge_error(
        LlmJudge::new("a", ["c"])
            .config(
                JudgeConfig::new()
                    .base_url(format!("http://127.0.0.1:{port}"))
                    .api_key("k")
                    .retry(quick_retries(2)),
            )
            .judge()
            .await,
    );
    assert!(
        matches!(
            error,
            JudgeError::Transport {
                attempts: 3,
                source: TransportError::Connect(_),
                ..
            }
        ),
        "{error}"
    );
}

#[tokio::test]
async fn strict_by_default_a_failed_criterion_fails_the_grade_with_its_name() {
    let server = ScriptedServer::start(|call| {
        if call.criterion() == "broken" {
            Reply::content("no idea")
        } else {
            Reply::verdict("MET", "ok")
        }
    });
    let error = LlmJudge::new("a", ["fine", "broken"])
        .config(config(&server))
        .grade(1.0)
        .await
        .expect_err("strict");
    assert_eq!(error.grader, "LLMJudgeGrader");
    match &error.failure {
        Failure::Judge(judge) => assert_eq!(judge.criterion(), Some("broken")),
        other => panic!("{other}"),
    }
    assert!(error.to_string().contains("broken"), "{error}");
}

#[tokio::test]
async fn lenient_keeps_the_others_and_a_failure_never_helps_the_agent() {
    let server = ScriptedServer::start(|call| match call.criterion() {
        "broken" | "broken penalty" => Reply::status(400),
        _ => Reply::verdict("MET", "ok"),
    });
    let sub = LlmJudge::new(
        "a",
        [
            Criterion::new("fine"),
            Criterion::new("broken"),
            Criterion::weighted("broken penalty", -1.0),
        ],
    )
    .config(config(&server).lenient(true))
    .judge()
    .await
    .expect("lenient");
    let children = sub.children().expect("children");
    assert_eq!(children.len(), 3);
    // fine MET (1), broken as UNMET (0), the broken penalty as fired: (1 + 0 - 1) / 2 = 0.
    assert_eq!(
        children.iter().map(SubScore::value).collect::<Vec<_>>(),
        [1.0, 0.0, 1.0]
    );
    assert_eq!(sub.value(), 0.0);
    assert!(
        children[1].info().expect("info")["error"]
            .as_str()
            .is_some_and(|e| e.contains("HTTP 400"))
    );
    let info = sub.info().expect("info");
    assert_eq!(info["failed_criteria"], 2);
    assert_eq!(info["errors"].as_array().map(Vec::len), Some(2));

    // Every criterion failing is still an error.
    let server = ScriptedServer::start(|_| Reply::status(400));
    let error = judge_error(
        LlmJudge::new("a", ["x", "y"])
            .config(config(&server).lenient(true))
            .judge()
            .await,
    );
    assert!(matches!(error, JudgeError::Status { .. }), "{error}");
}

#[tokio::test]
async fn per_judge_base_url_key_and_headers() {
    let server = ScriptedServer::start(by_prefix);
    LlmJudge::new("a", ["yes"])
        .model("small-model")
        .config(
            JudgeConfig::new()
                .base_url(format!("{}/", server.base_url()))
                .api_key("other-key")
                .header("x-team", "qa"),
        )
        .judge()
        .await
        .expect("judged");
    let request = &server.requests()[0];
    assert_eq!(
        request.path, "/v1/chat/completions",
        "a trailing slash is fine"
    );
    assert_eq!(request.header("authorization"), Some("Bearer other-key"));
    assert_eq!(request.header("x-team"), Some("qa"));
    assert_eq!(request.body["model"], "small-model");
}

#[tokio::test]
async fn a_call_limit_bounds_requests_in_flight() {
    let server = ScriptedServer::start(|call| by_prefix(call).after(Duration::from_millis(20)));
    let criteria: Vec<String> = (0..24).map(|i| format!("yes {i}")).collect();
    let sub = LlmJudge::new("a", criteria)
        .config(config(&server).max_concurrent_calls(4))
        .judge()
        .await
        .expect("judged");
    assert_eq!(sub.value(), 1.0);
    assert_eq!(server.request_count(), 24);
    assert!(server.max_in_flight() <= 4, "{}", server.max_in_flight());
}

#[tokio::test]
async fn a_panel_decides_by_strict_majority_and_records_every_vote() {
    let server = ScriptedServer::start(|call| match call.model() {
        "a" | "c" => Reply::verdict("MET", call.model()),
        "b" => Reply::verdict("UNMET", "b"),
        _ => Reply::status(400),
    });
    let sub = LlmJudge::new("x", ["c1"])
        .panel(["a", "b", "c"])
        .config(config(&server))
        .judge()
        .await
        .expect("judged");
    assert_eq!(sub.value(), 1.0);
    assert_eq!(server.request_count(), 3);
    let child = &sub.children().expect("children")[0];
    let votes = child.info().expect("info")["votes"].clone();
    assert_eq!(
        votes
            .as_array()
            .expect("votes")
            .iter()
            .map(|v| (v["model"].as_str(), v["verdict"].as_str()))
            .collect::<Vec<_>>(),
        [
            (Some("a"), Some("MET")),
            (Some("b"), Some("UNMET")),
            (Some("c"), Some("MET"))
        ]
    );
    assert_eq!(sub.info().expect("info")["models"], json!(["a", "b", "c"]));

    // A failed judge withholds its vote but still counts: 1 MET, 1 UNMET, 1 failed of 3.
    let error = judge_error(
        LlmJudge::new("x", ["c1"])
            .panel(["a", "b", "broken"])
            .config(config(&server))
            .judge()
            .await,
    );
    assert!(
        matches!(
            error,
            JudgeError::NoMajority {
                judges: 3,
                met: 1,
                unmet: 1,
                failed: 1,
                ..
            }
        ),
        "{error}"
    );
    // Two MET of three is a majority even with the third failed.
    let sub = LlmJudge::new("x", ["c1"])
        .panel(["a", "c", "broken"])
        .config(config(&server))
        .judge()
        .await
        .expect("judged");
    assert_eq!(sub.value(), 1.0);
    let votes = sub.children().expect("children")[0].info().expect("info")["votes"].clone();
    assert!(
        votes[2]["error"]
            .as_str()
            .is_some_and(|e| e.contains("HTTP 400"))
    );
}

/// Replies to a batched request: MET for criteria starting with "yes", UNMET otherwise.
fn batch_reply(call: &Call<'_>) -> Reply {
    let verdicts: Vec<Value> = call
        .batch_criteria()
        .into_iter()
        .map(|(id, text)| {
            let status = if text.starts_with("yes") {
                "MET"
            } else {
                "UNMET"
            };
            json!({"id": id, "criterion_status": status, "explanation": format!("about {text}")})
        })
        .collect();
    Reply::content(json!({ "verdicts": verdicts }).to_string())
}

#[tokio::test]
async fn batching_asks_several_criteria_per_call_and_keeps_each_child() {
    let server = ScriptedServer::start(|call| {
        if call.batch_criteria().is_empty() {
            by_prefix(call)
        } else {
            batch_reply(call)
        }
    });
    let criteria = [
        Criterion::new("yes 1"),
        Criterion::new("no 2"),
        Criterion::weighted("yes 3", 2.0),
        Criterion::weighted("no 4", -1.0),
        Criterion::new("yes 5"),
    ];
    let sub = LlmJudge::new("a", criteria)
        .config(config(&server).batch(2))
        .judge()
        .await
        .expect("judged");
    assert_eq!(server.request_count(), 3, "2 + 2 + 1");
    let children = sub.children().expect("children");
    assert_eq!(
        children
            .iter()
            .map(|c| (c.name(), c.value(), reason(c)))
            .collect::<Vec<_>>(),
        [
            ("yes 1", 1.0, "about yes 1"),
            ("no 2", 0.0, "about no 2"),
            ("yes 3", 1.0, "about yes 3"),
            ("no 4", 0.0, "about no 4"),
            // A batch of one is the reference's own request.
            ("yes 5", 1.0, "present"),
        ]
    );
    assert_eq!(sub.value(), 4.0 / 5.0);
    let first = &server.requests()[0];
    assert!(
        first
            .user_prompt()
            .contains("<criterion id=\"1\" type=\"positive\">")
    );

    // A batch reply missing a criterion fails that criterion only (lenient keeps the rest).
    let server = ScriptedServer::start(|_| {
        Reply::content(r#"{"verdicts": [{"id": 1, "criterion_status": "MET"}]}"#)
    });
    let sub = LlmJudge::new("a", ["one", "two"])
        .config(config(&server).batch(2).lenient(true))
        .judge()
        .await
        .expect("judged");
    assert_eq!(sub.info().expect("info")["failed_criteria"], 1);
    assert!(
        sub.children().expect("children")[1].info().expect("info")["error"]
            .as_str()
            .is_some_and(|e| e.contains("criterion 2"))
    );
}

#[tokio::test]
async fn structured_output_sends_a_schema_and_falls_back_where_refused() {
    let server = ScriptedServer::start(|call| {
        if call.body.get("response_format").is_some() {
            Reply::content(r#"{"criterion_status":"MET","explanation":"structured"}"#)
        } else {
            Reply::verdict("UNMET", "text")
        }
    });
    let sub = LlmJudge::new("a", ["c"])
        .config(config(&server).structured(true))
        .judge()
        .await
        .expect("judged");
    assert_eq!(sub.value(), 1.0);
    let format = server.requests()[0].body["response_format"].clone();
    assert_eq!(format["type"], "json_schema");
    let schema = &format["json_schema"]["schema"];
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(
        schema["properties"]["criterion_status"]["enum"],
        json!(["MET", "UNMET"])
    );
    assert_eq!(sub.info().expect("info")["structured_fallbacks"], 0);

    let refusing = ScriptedServer::start(|call| {
        if call.body.get("response_format").is_some() {
            Reply::status(400)
        } else {
            Reply::verdict("MET", "text")
        }
    });
    let sub = LlmJudge::new("a", ["c"])
        .config(config(&refusing).structured(true))
        .judge()
        .await
        .expect("judged after falling back");
    assert_eq!(sub.value(), 1.0);
    assert_eq!(refusing.request_count(), 2);
    assert!(refusing.requests()[1].body.get("response_format").is_none());
    assert_eq!(sub.info().expect("info")["structured_fallbacks"], 1);
}

#[tokio::test]
async fn the_cache_answers_repeats_without_a_request_and_misses_on_any_change() {
    let server = ScriptedServer::start(by_prefix);
    let cache = JudgeCache::in_memory();
    let judged = |model: &'static str, criterion: &'static str| {
        LlmJudge::new("answer", [criterion])
            .model(model)
            .config(config(&server).cache(cache.clone()))
            .judge()
    };
    let first = judged("m", "yes a").await.expect("judged");
    assert_eq!(server.request_count(), 1);
    assert_eq!(first.info().expect("info")["cache_hits"], 0);
    let again = judged("m", "yes a").await.expect("judged");
    assert_eq!(server.request_count(), 1, "a hit makes no request");
    assert_eq!(again.info().expect("info")["cache_hits"], 1);
    assert_eq!(
        again.children().expect("children")[0].info().expect("info")["cache_hit"],
        true
    );
    assert_eq!(again.value(), first.value());
    judged("other", "yes a").await.expect("judged");
    assert_eq!(server.request_count(), 2, "another model misses");
    judged("m", "yes b").await.expect("judged");
    assert_eq!(server.request_count(), 3, "another criterion misses");

    // Replies with no verdict are not kept.
    let bad = ScriptedServer::start(|_| Reply::content("unsure"));
    for _ in 0..2 {
        let _ = LlmJudge::new("a", ["c"])
            .config(config(&bad).cache(cache.clone()))
            .judge()
            .await;
    }
    assert_eq!(bad.request_count(), 2);
}

#[tokio::test]
async fn the_disk_cache_survives_the_cache_value() {
    let dir = std::env::temp_dir().join(format!("grader-judge-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let server = ScriptedServer::start(by_prefix);
    for expected_requests in [1, 1] {
        let sub = LlmJudge::new("answer", ["yes"])
            .config(config(&server).cache(JudgeCache::on_disk(&dir)))
            .judge()
            .await
            .expect("judged");
        assert_eq!(sub.value(), 1.0);
        assert_eq!(server.request_count(), expected_requests);
    }
    let files = std::fs::read_dir(&dir).expect("cache dir").count();
    assert_eq!(files, 1);
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[tokio::test]
async fn usage_latency_and_attempts_are_recorded_when_asked() {
    let server = ScriptedServer::start(|call| match call.repeat {
        0 => Reply::status(503),
        _ => Reply::WithUsage(r#"{"criterion_status":"MET"}"#.into(), 100, 7),
    });
    let sub = LlmJudge::new("a", ["x", "y"])
        .config(config(&server).record_usage(true))
        .judge()
        .await
        .expect("judged");
    let info = sub.info().expect("info");
    assert_eq!(
        (
            info["prompt_tokens"].as_u64(),
            info["completion_tokens"].as_u64()
        ),
        (Some(200), Some(14))
    );
    assert_eq!(info["calls"], 2);
    let child = sub.children().expect("children")[0]
        .info()
        .expect("info")
        .clone();
    assert_eq!(child["attempts"], 2);
    assert!(child["latency_ms"].as_f64().is_some_and(|ms| ms > 0.0));
}

#[tokio::test]
async fn a_custom_transport_replaces_http() {
    use futures_util::future::BoxFuture;
    use grader_core::judge::transport::{HttpRequest, HttpResponse, Transport};

    struct Counting(Arc<AtomicUsize>);

    impl Transport for Counting {
        fn post(
            &self,
            request: HttpRequest,
        ) -> BoxFuture<'_, Result<HttpResponse, TransportError>> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move {
                assert!(request.url.ends_with("/chat/completions"));
                let content = r#"{"criterion_status": "UNMET", "explanation": "offline"}"#;
                let body = json!({"choices": [{"message": {"content": content}}]}).to_string();
                Ok(HttpResponse {
                    status: 200,
                    headers: Vec::new(),
                    body: body.into_bytes(),
                })
            })
        }
    }

    let count = Arc::new(AtomicUsize::new(0));
    let sub = LlmJudge::new("a", ["p", "q"])
        .config(
            JudgeConfig::new()
                .api_key("k")
                .transport(Counting(Arc::clone(&count))),
        )
        .judge()
        .await
        .expect("judged");
    assert_eq!(sub.value(), 0.0);
    assert_eq!(count.load(Ordering::SeqCst), 2);
}

#[test]
fn the_judges_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let judge = LlmJudge::new("a", ["c"]);
    let future = judge.clone().grade(1.0);
    assert_send(&future);
    assert_send(&judge.judge());
}

/// The reference reads `HUD_GATEWAY_URL` and `HUD_API_KEY`; so does a judge with no base URL
/// or key configured, and it reads `OPENAI_BASE_URL` and `OPENAI_API_KEY` when the `HUD_`
/// variables are unset. The variables are set for child runs of this same test binary (so no
/// other test sees them), each against a real server on 127.0.0.1.
#[test]
fn the_endpoint_and_key_come_from_the_environment() {
    const CHILD: &str = "GRADER_JUDGE_ENV_CHILD";
    const VARS: [&str; 4] = [
        "HUD_GATEWAY_URL",
        "HUD_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
    ];
    if std::env::var_os(CHILD).is_some() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let outcome = runtime.block_on(LlmJudge::new("a", ["c"]).judge());
        if std::env::var("CHILD_EXPECTS_NO_KEY").is_ok() {
            assert!(
                matches!(outcome, Err(JudgeError::MissingApiKey)),
                "{outcome:?}"
            );
        } else {
            assert_eq!(outcome.expect("judged").value(), 1.0);
        }
        return;
    }
    let server = ScriptedServer::start(|_| Reply::verdict("MET", "env"));
    let me = std::env::current_exe().expect("this test binary");
    let base = server.base_url();
    let run = |vars: &[(&str, String)], expects_no_key: bool| {
        let mut child = std::process::Command::new(&me);
        child
            .args([
                "--exact",
                "the_endpoint_and_key_come_from_the_environment",
                "--nocapture",
            ])
            .env(CHILD, "1");
        for var in VARS {
            child.env_remove(var);
        }
        child.envs(vars.iter().map(|(name, value)| (*name, value)));
        if expects_no_key {
            child.env("CHILD_EXPECTS_NO_KEY", "1");
        }
        let status = child.status_bounded();
        assert!(status.success(), "{vars:?}");
        let requests = server.requests();
        server.clear();
        requests
    };
    let hud = |key: &str| {
        vec![
            ("HUD_GATEWAY_URL", format!("{base}/hud")),
            ("HUD_API_KEY", key.to_owned()),
        ]
    };
    let openai = vec![
        ("OPENAI_BASE_URL", format!("{base}/openai/v1")),
        ("OPENAI_API_KEY", "openai-key".to_owned()),
    ];

    // The HUD variables alone, and the HUD variables first when both are set.
    for vars in [hud("env-key"), [hud("env-key"), openai.clone()].concat()] {
        let requests = run(&vars, false);
        assert_eq!(requests.len(), 1);
        assert!(requests[0].path.ends_with("/hud/chat/completions"));
        assert_eq!(requests[0].header("authorization"), Some("Bearer env-key"));
    }
    // The OpenAI variables when the HUD ones are unset or empty.
    for vars in [openai.clone(), [hud(""), openai.clone()].concat()] {
        let requests = run(&vars, false);
        assert_eq!(requests.len(), 1, "{vars:?}");
        assert!(requests[0].path.ends_with("/openai/v1/chat/completions"));
        assert_eq!(
            requests[0].header("authorization"),
            Some("Bearer openai-key")
        );
    }
    // No key at all: a typed error and no request.
    assert!(run(&hud(""), true).is_empty(), "no key, no request");
    assert!(run(&[], true).is_empty(), "no key, no request");
}

#[tokio::test]
async fn the_shared_limiter_bounds_judge_calls_across_judges() {
    use grader_core::limit::{Limiter, Resource};

    let server = ScriptedServer::start(|call| by_prefix(call).after(Duration::from_millis(20)));
    let limiter = Limiter::new().limit(Resource::Judge, 3);
    let judges = (0..4).map(|j| {
        let criteria: Vec<String> = (0..6).map(|i| format!("yes {j}.{i}")).collect();
        limiter.scope(LlmJudge::new("a", criteria).config(config(&server)).judge())
    });
    for judged in futures_util::future::join_all(judges).await {
        assert_eq!(judged.expect("judged").value(), 1.0);
    }
    assert_eq!(server.request_count(), 24);
    assert!(server.max_in_flight() <= 3, "{}", server.max_in_flight());
}

/// A judge grades like `BashGrader` and the trees: `grade` is callable without importing the
/// `Grader` trait (this module imports nothing from the parent).
mod without_the_trait_in_scope {
    use grader_core::Gather;
    use grader_core::judge::{JudgeConfig, LlmJudge};
    use grader_tests::judge_server::{Reply, ScriptedServer};

    #[tokio::test]
    async fn a_judge_grades_alone_and_in_a_gather() {
        let server = ScriptedServer::start(|_| Reply::verdict("MET", "fine"));
        let config = JudgeConfig::new().base_url(server.base_url()).api_key("k");
        let graded = LlmJudge::new("Paris", ["names Paris"])
            .config(config.clone())
            .grade(0.5)
            .named("judge")
            .await
            .expect("graded");
        assert_eq!(
            (graded.name(), graded.weight(), graded.value()),
            ("judge", 0.5, 1.0)
        );
        let result = Gather::new()
            .add(
                LlmJudge::new("Paris", ["names Paris"])
                    .config(config)
                    .grade(1.0),
            )
            .await
            .expect("gathered");
        assert_eq!(result.reward(), 1.0);
        assert_eq!(server.request_count(), 2);
    }
}

/// A redirect is never followed: following it would re-send the body and every custom header
/// (a gateway token, Azure's `api-key`) to the address the reply names, and take its verdict.
/// It is an error naming that address, tried once.
#[tokio::test]
async fn a_redirect_is_an_error_naming_the_location_and_nothing_reaches_it() {
    let elsewhere = ScriptedServer::start(|_| Reply::verdict("MET", "from elsewhere"));
    let location = format!("{}/chat/completions", elsewhere.base_url());
    for status in [301, 302, 303, 307, 308] {
        let to = location.clone();
        let redirecting = ScriptedServer::start(move |_| {
            Reply::Status(status, vec![("location".into(), to.clone())], String::new())
        });
        let error = judge_error(
            LlmJudge::new("an answer", ["the criterion"])
                .config(config(&redirecting).header("api-key", "azure-secret"))
                .judge()
                .await,
        );
        match &error {
            JudgeError::Transport {
                attempts,
                source:
                    TransportError::Redirected {
                        status: got,
                        location: named,
                    },
                ..
            } => {
                assert_eq!((*attempts, *got), (1, status));
                assert_eq!(named, &location);
            }
            other => panic!("{status}: {other}"),
        }
        assert!(error.to_string().contains(&location), "{error}");
        assert!(!error.to_string().contains("azure-secret"), "{error}");
        assert_eq!(redirecting.request_count(), 1, "{status}: not retried");
    }
    assert_eq!(
        elsewhere.request_count(),
        0,
        "nothing reached the other address"
    );
}
