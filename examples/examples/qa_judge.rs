//! A question-answering environment graded by an LLM judge, one verdict per criterion, with a
//! penalty criterion for a common misconception.
//!
//! Two agents answer "Why does Earth have seasons?". `LlmJudge` asks the judge model about each
//! criterion (concurrently, with the reference's prompts); the verdicts become the judge's
//! children and its value; a `#[grader]` length check is combined with it into the reward.
//!
//! Which model judges: `GRADER_JUDGE_BASE_URL` (with `GRADER_JUDGE_API_KEY` or `HUD_API_KEY`,
//! and optionally `GRADER_JUDGE_MODEL`) for any OpenAI-compatible endpoint; otherwise
//! `HUD_GATEWAY_URL` and `HUD_API_KEY`, as the reference reads them, or else `OPENAI_API_KEY`
//! (with `OPENAI_BASE_URL` if set, and `GRADER_JUDGE_MODEL`), as the judge reads them when the
//! `HUD_` variables are unset. With none of these set, the
//! example starts a scripted OpenAI-compatible server on 127.0.0.1 inside this process, whose
//! "verdicts" are keyword rules, and says so on its first line.
//!
//! Run it with `cargo run -p grader-examples --example qa_judge`.

use std::error::Error;
use std::net::SocketAddr;

use axum::Json;
use axum::Router;
use axum::routing::post;
use grader_core::judge::{Criterion, JudgeConfig, LlmJudge};
use grader_core::{Grade, grader};
use serde_json::{Value, json};

const QUESTION: &str = "Why does Earth have seasons?";

const CAREFUL: &str = "Earth's axis is tilted about 23.5 degrees relative to its orbit. As Earth \
    goes around the Sun, each hemisphere in turn leans toward the Sun and gets more direct \
    sunlight and longer days: that is its summer. The hemispheres have opposite seasons.";

const CONFUSED: &str = "Seasons happen because Earth's orbit is an ellipse: in summer we are \
    closer to the Sun, and in winter we are farther away. The axis is tilted a little too, but \
    distance is what matters.";

/// The criteria, with a penalty (negative weight) for the distance misconception.
fn criteria() -> Vec<Criterion> {
    vec![
        Criterion::weighted(
            "Explains that Earth's axis is tilted relative to its orbit",
            2.0,
        ),
        Criterion::new("Says the tilt changes how directly sunlight strikes each hemisphere"),
        Criterion::new("Notes that the two hemispheres have opposite seasons"),
        Criterion::weighted(
            "Claims that seasons are caused by Earth's changing distance from the Sun",
            -1.0,
        ),
    ]
}

/// Answers of at most 80 words pass. (Async only so that every grade here reads the same.)
#[grader]
async fn concise(answer: &str) -> bool {
    answer.split_whitespace().count() <= 80
}

/// The judge's endpoint from the environment, or `None` for the scripted server.
fn configured_endpoint() -> Option<(JudgeConfig, String, String)> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    if let Some(base) = var("GRADER_JUDGE_BASE_URL") {
        let key = var("GRADER_JUDGE_API_KEY")
            .or_else(|| var("HUD_API_KEY"))
            .unwrap_or_default();
        let model = var("GRADER_JUDGE_MODEL").unwrap_or_else(|| "gpt-4o-mini".to_owned());
        let config = JudgeConfig::new().base_url(&base).api_key(key);
        return Some((config, model, base));
    }
    if let (Some(base), Some(_)) = (var("HUD_GATEWAY_URL"), var("HUD_API_KEY")) {
        let model = grader_core::judge::DEFAULT_MODEL.to_owned();
        return Some((JudgeConfig::new(), model, base));
    }
    if var("OPENAI_API_KEY").is_some() && var("HUD_API_KEY").is_none() {
        // The judge reads the key and `OPENAI_BASE_URL` itself.
        let base = var("OPENAI_BASE_URL")
            .unwrap_or_else(|| grader_core::judge::OPENAI_DEFAULT_BASE_URL.to_owned());
        let model = var("GRADER_JUDGE_MODEL").unwrap_or_else(|| "gpt-4o-mini".to_owned());
        return Some((JudgeConfig::new(), model, base));
    }
    None
}

/// The scripted judge: MET when the response has every keyword of the criterion's rule.
async fn scripted_completion(Json(request): Json<Value>) -> Json<Value> {
    let prompt = request["messages"][1]["content"].as_str().unwrap_or("");
    let between = |open: &str, close: &str| {
        prompt
            .split_once(open)
            .and_then(|(_, rest)| rest.split_once(close))
            .map_or(String::new(), |(inside, _)| inside.to_lowercase())
    };
    let criterion = between("<criterion>\n", "\n</criterion>");
    let response = between("<response>\n", "\n</response>");
    let rule: &[&str] = if criterion.contains("changing distance") {
        &["closer to the sun"]
    } else if criterion.contains("directly") {
        &["direct"]
    } else if criterion.contains("opposite") {
        &["opposite seasons"]
    } else {
        &["tilted"]
    };
    let met = rule.iter().all(|keyword| response.contains(keyword));
    let verdict = json!({
        "criterion_status": if met { "MET" } else { "UNMET" },
        "explanation": format!("keyword rule {rule:?} {}", if met { "found" } else { "not found" }),
    });
    Json(json!({
        "object": "chat.completion",
        "model": request["model"],
        "choices": [{"index": 0, "message": {"role": "assistant", "content": verdict.to_string()}}],
        "usage": {"prompt_tokens": prompt.len() / 4, "completion_tokens": 20},
    }))
}

/// Starts the scripted server on a free port of 127.0.0.1; it stops with the runtime.
async fn start_scripted_server() -> Result<SocketAddr, Box<dyn Error>> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let app = Router::new().route("/v1/chat/completions", post(scripted_completion));
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(address)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let scripted = configured_endpoint().is_none();
    let (config, model) = if let Some((config, model, base)) = configured_endpoint() {
        println!("judge: {model} at {base}");
        (config, model)
    } else {
        let address = start_scripted_server().await?;
        let base = format!("http://{address}/v1");
        println!(
            "judge: no GRADER_JUDGE_BASE_URL, HUD_GATEWAY_URL or OPENAI_API_KEY set, so a scripted \
             OpenAI-compatible server on {base} judges by keyword rules (not a model)"
        );
        let config = JudgeConfig::new().base_url(base).api_key("scripted");
        (config, "scripted-judge".to_owned())
    };
    let config = config.record_usage(true);
    println!("question: {QUESTION}\n");

    let mut rewards = Vec::new();
    for (agent, answer) in [("careful agent", CAREFUL), ("confused agent", CONFUSED)] {
        let judged = LlmJudge::new(answer, criteria())
            .question(QUESTION)
            .model(&model)
            .config(config.clone())
            .grade(0.8)
            .await?;
        let short = Concise { answer }.grade(0.2).await?;
        let result = Grade::from_subscores(vec![judged, short])?;
        println!("== {agent}: {answer}\n{result}");
        if agent == "confused agent" {
            println!("== as JSON:\n{}", serde_json::to_string_pretty(&result)?);
        }
        rewards.push(result.reward());
    }

    if scripted {
        // careful: (2 + 1 + 1) / 4 = 1 → 0.8 + 0.2 = 1.0; confused: tilt only and the penalty
        // fires, (2 - 1) / 4 = 0.25 → 0.8 × 0.25 + 0.2 = 0.4.
        let expected = [1.0, 0.4];
        if rewards
            .iter()
            .zip(expected)
            .any(|(got, want)| (got - want).abs() > 1e-9)
        {
            return Err(format!("expected rewards {expected:?}, got {rewards:?}").into());
        }
    }
    Ok(())
}
