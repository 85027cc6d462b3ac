//! Many sessions at once against an in-process server: each gets its own prompt and grade,
//! and a session whose template fails or panics does not disturb the others.
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

use std::time::Duration;

use grader_env::{Environment, ServeConfig, Session, Template};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Args {
    n: u64,
}

async fn square(args: Args, session: Session) -> Result<f64, String> {
    if args.n % 50 == 7 {
        return Err(format!("refusing {}", args.n));
    }
    let answer = session
        .prompt(format!("square {}", args.n))
        .await
        .map_err(|e| e.to_string())?;
    if args.n % 50 == 13 {
        panic!("panicking on {}", args.n);
    }
    // Yield to the scheduler so sessions interleave.
    tokio::time::sleep(Duration::from_millis(1)).await;
    Ok(if answer.as_u64() == Some(args.n * args.n) {
        1.0
    } else {
        0.0
    })
}

struct Client {
    reader: BufReader<tokio::net::tcp::OwnedReadHalf>,
    writer: tokio::net::tcp::OwnedWriteHalf,
}

impl Client {
    async fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        let mut line =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await.unwrap();
        let mut reply = String::new();
        self.reader.read_line(&mut reply).await.unwrap();
        let reply: Value = serde_json::from_str(&reply).unwrap();
        assert_eq!(reply["id"], id);
        reply
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_sessions() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        if !message.starts_with("panicking on") {
            report(info);
        }
    }));
    let env = Environment::new("squares")
        .template(Template::new("square", square))
        .unwrap();
    let server = env.bind(&ServeConfig::default()).await.unwrap();
    let address = server.local_addr();
    let mut clients = tokio::task::JoinSet::new();
    for n in 0..200u64 {
        clients.spawn(async move {
            let (read, writer) = TcpStream::connect(address).await.unwrap().into_split();
            let mut client = Client {
                reader: BufReader::new(read),
                writer,
            };
            let hello = client.call(1, "hello", json!({})).await;
            let session = hello["result"]["session_id"].as_str().unwrap().to_owned();
            let start = client
                .call(2, "tasks.start", json!({"id": "square", "args": {"n": n}}))
                .await;
            if n % 50 == 7 {
                assert_eq!(start["error"]["message"], format!("refusing {n}"));
                return (n, session, None);
            }
            assert_eq!(start["result"]["prompt"], format!("square {n}"));
            let answer = if n % 2 == 0 { n * n } else { n * n + 1 };
            let grade = client
                .call(3, "tasks.grade", json!({"answer": answer}))
                .await;
            if n % 50 == 13 {
                assert_eq!(grade["error"]["message"], format!("panicking on {n}"));
                return (n, session, None);
            }
            let bye = client.call(4, "bye", json!({})).await;
            assert_eq!(bye["result"]["goodbye"], true);
            (n, session, grade["result"]["score"].as_f64())
        });
    }
    let mut sessions = std::collections::HashSet::new();
    let mut graded = 0;
    while let Some(done) = clients.join_next().await {
        let (n, session, score) = done.unwrap();
        assert!(sessions.insert(session), "session ids are unique");
        if let Some(score) = score {
            graded += 1;
            assert_eq!(score, if n % 2 == 0 { 1.0 } else { 0.0 }, "session {n}");
        }
    }
    assert_eq!(sessions.len(), 200);
    assert_eq!(graded, 200 - 8);
    assert_eq!(server.held_tasks(), 0, "no task left behind");
    server.shutdown().await;
}

#[tokio::test]
async fn a_second_task_call_while_one_runs_is_refused_and_the_first_still_answers() {
    async fn slow(_: grader_env::NoArgs, session: Session) -> Result<f64, String> {
        tokio::time::sleep(Duration::from_millis(300)).await;
        session.prompt("slow").await.map_err(|e| e.to_string())?;
        Ok(1.0)
    }
    let env = Environment::new("slow")
        .template(Template::new("slow", slow))
        .unwrap();
    let server = env.bind(&ServeConfig::default()).await.unwrap();
    let (read, mut writer) = TcpStream::connect(server.local_addr())
        .await
        .unwrap()
        .into_split();
    let mut reader = BufReader::new(read);
    let frames = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks.start\",\"params\":{\"id\":\"slow\"}}\n\
                  {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tasks.start\",\"params\":{\"id\":\"slow\"}}\n";
    writer.write_all(frames.as_bytes()).await.unwrap();
    let mut line = String::new();
    reader.read_line(&mut line).await.unwrap();
    let refused: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        refused["error"],
        json!({"code": -32600, "message": "tasks.start: a task call is still running"})
    );
    line.clear();
    reader.read_line(&mut line).await.unwrap();
    let started: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(started["id"], 1);
    assert_eq!(started["result"]["prompt"], "slow");
    server.shutdown().await;
}
