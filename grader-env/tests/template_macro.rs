//! `#[template]` end to end: the manifest it declares, args parsed before any of the
//! function runs, and the function's grade, through a served environment.
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

use std::sync::atomic::{AtomicUsize, Ordering};

use grader_core::{EvaluationResult, Grade, SubScore};
use grader_env::{Environment, ServeConfig, Session, template};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;

static RAN: AtomicUsize = AtomicUsize::new(0);

/// Count to a number.
#[template(id = "count-to", returns = Vec<u32>)]
async fn count_to(
    n: u32,
    label: Option<String>,
    session: Session,
) -> Result<EvaluationResult, Box<dyn std::error::Error + Send + Sync>> {
    RAN.fetch_add(1, Ordering::SeqCst);
    let answer = session
        .prompt_as::<Vec<u32>>(format!("Count to {n} ({})", label.unwrap_or_default()))
        .await?;
    let right = answer.content.as_ref().ok() == Some(&(1..=n).collect::<Vec<_>>());
    Ok(Grade::from_subscores(vec![SubScore::new(
        "counted",
        if right { 1.0 } else { 0.0 },
    )?])?)
}

async fn call(
    reader: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
    writer: &mut tokio::net::tcp::OwnedWriteHalf,
    id: u64,
    method: &str,
    params: Value,
) -> Value {
    let mut line =
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    line.push('\n');
    writer.write_all(line.as_bytes()).await.unwrap();
    let mut reply = String::new();
    reader.read_line(&mut reply).await.unwrap();
    serde_json::from_str(&reply).unwrap()
}

#[tokio::test]
async fn a_macro_template_is_listed_checked_and_graded() {
    let env = Environment::new("counting")
        .template(CountTo::template())
        .unwrap();
    let server = env.bind(&ServeConfig::default()).await.unwrap();
    let (read, mut writer) = TcpStream::connect(server.local_addr())
        .await
        .unwrap()
        .into_split();
    let mut reader = BufReader::new(read);

    let list = call(&mut reader, &mut writer, 1, "tasks.list", json!({})).await;
    let entry = &list["result"]["tasks"][0];
    assert_eq!(entry["id"], "count-to");
    assert_eq!(entry["description"], "Count to a number.");
    assert_eq!(entry["args"]["required"], json!(["n"]));
    assert_eq!(entry["args"]["properties"]["n"]["title"], "N");
    assert_eq!(entry["args"]["additionalProperties"], false);
    assert_eq!(
        entry["returns"],
        json!({"type": "array", "items": {"type": "integer", "minimum": 0}})
    );

    // Bad args are refused before any of the function runs.
    for (args, message) in [
        (
            json!({}),
            "task 'count-to': bad args []: missing a required argument: 'n'",
        ),
        (
            json!({"n": 3, "colour": "red"}),
            "task 'count-to': bad args ['colour', 'n']: got an unexpected keyword argument 'colour'",
        ),
        (
            json!({"n": "three"}),
            "task 'count-to': bad args ['n']: argument 'n': invalid type: string \"three\", expected u32",
        ),
    ] {
        let reply = call(
            &mut reader,
            &mut writer,
            2,
            "tasks.start",
            json!({"id": "count-to", "args": args}),
        )
        .await;
        assert_eq!(reply["error"], json!({"code": -32000, "message": message}));
    }
    assert_eq!(RAN.load(Ordering::SeqCst), 0);

    let start = call(
        &mut reader,
        &mut writer,
        3,
        "tasks.start",
        json!({"id": "count-to", "args": {"n": 3, "label": "go"}}),
    )
    .await;
    assert_eq!(start["result"], json!({"prompt": "Count to 3 (go)"}));
    let grade = call(
        &mut reader,
        &mut writer,
        4,
        "tasks.grade",
        json!({"answer": "[1, 2, 3]"}),
    )
    .await;
    assert_eq!(grade["result"]["score"], 1.0);
    assert_eq!(grade["result"]["subscores"][0]["name"], "counted");
    assert_eq!(RAN.load(Ordering::SeqCst), 1);
    server.shutdown().await;
}

/// Clone and test a repository.
#[template]
async fn checkout(
    /// The repository URL
    repo: String,
    #[arg(default = 60)] timeout: i64,
    #[arg(default)] tags: Vec<String>,
    #[arg(description = "The branch", default = "main".to_owned())] branch: String,
    session: Session,
) -> Result<f64, grader_env::PromptError> {
    let prompt = format!("{repo} {timeout} {tags:?} {branch}");
    session.prompt(&prompt).await?;
    Ok(1.0)
}

/// pydantic's schema for the same parameters, printed by hud 0.6.21:
/// `repo: Annotated[str, Field(description="The repository URL")], timeout: int = 60,
/// tags: list[str] = [], branch: Annotated[str, Field(description="The branch")] = "main"`.
const PYDANTIC_CHECKOUT: &str = r#"{"properties": {"repo": {"description": "The repository URL", "title": "Repo", "type": "string"}, "timeout": {"default": 60, "title": "Timeout", "type": "integer"}, "tags": {"default": [], "items": {"type": "string"}, "title": "Tags", "type": "array"}, "branch": {"default": "main", "description": "The branch", "title": "Branch", "type": "string"}}, "required": ["repo"], "type": "object", "additionalProperties": false}"#;

#[tokio::test]
async fn arg_attributes_describe_and_default_arguments_as_pydantic_does() {
    let template = Checkout::template();
    let theirs: Value = serde_json::from_str(PYDANTIC_CHECKOUT).unwrap();
    assert_eq!(template.args_schema(), &theirs);

    let env = Environment::new("checkout").template(template).unwrap();
    let server = env.bind(&ServeConfig::default()).await.unwrap();
    let (read, mut writer) = TcpStream::connect(server.local_addr())
        .await
        .unwrap()
        .into_split();
    let mut reader = BufReader::new(read);
    let start = call(
        &mut reader,
        &mut writer,
        1,
        "tasks.start",
        json!({"id": "checkout", "args": {"repo": "r"}}),
    )
    .await;
    assert_eq!(start["result"], json!({"prompt": "r 60 [] main"}));
    server.shutdown().await;
}
