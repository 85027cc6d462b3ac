//! What the server logs: one error-level event per task that fails to start or to grade, naming
//! the task, the session and the error, as the reference logs the exception; and a type error
//! in the args names the argument.
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use grader_env::{Environment, NoArgs, ServeConfig, Session, Template};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

type Events = Arc<Mutex<Vec<(Level, BTreeMap<String, String>)>>>;

/// Records every event's level and fields.
struct Recorder(Events);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.0
            .lock()
            .unwrap()
            .push((*event.metadata().level(), fields));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Count {
    n: u32,
}

async fn call(
    reader: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
    writer: &mut tokio::net::tcp::OwnedWriteHalf,
    method: &str,
    params: Value,
) -> Value {
    let mut line =
        json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    line.push('\n');
    writer.write_all(line.as_bytes()).await.unwrap();
    let mut reply = String::new();
    reader.read_line(&mut reply).await.unwrap();
    serde_json::from_str(&reply).unwrap()
}

#[tokio::test]
async fn each_failed_start_or_grade_is_an_error_event_naming_task_and_session() {
    let events = Events::default();
    tracing::subscriber::set_global_default(Recorder(Arc::clone(&events))).unwrap();
    let env = Environment::new("logged")
        .template(Template::new(
            "count",
            |args: Count, session: Session| async move {
                session.prompt(format!("Count to {}", args.n)).await?;
                Ok::<_, grader_env::PromptError>(1.0)
            },
        ))
        .unwrap()
        .template(Template::new(
            "broken",
            |_: NoArgs, session: Session| async move {
                session.prompt("Anything").await?;
                Err::<f64, Box<dyn std::error::Error + Send + Sync>>(
                    "the checkout is missing: /repo/tests".into(),
                )
            },
        ))
        .unwrap();
    let server = env.bind(&ServeConfig::default()).await.unwrap();
    let (read, mut writer) = TcpStream::connect(server.local_addr())
        .await
        .unwrap()
        .into_split();
    let mut reader = BufReader::new(read);
    let hello = call(&mut reader, &mut writer, "hello", json!({})).await;
    let session = hello["result"]["session_id"].as_str().unwrap().to_owned();

    let reply = call(
        &mut reader,
        &mut writer,
        "tasks.start",
        json!({"id": "count", "args": {"n": "soon"}}),
    )
    .await;
    let bad_args = "task 'count': bad args ['n']: argument 'n': invalid type: string \"soon\", \
                    expected u32";
    assert_eq!(reply["error"], json!({"code": -32000, "message": bad_args}));

    call(
        &mut reader,
        &mut writer,
        "tasks.start",
        json!({"id": "broken"}),
    )
    .await;
    let reply = call(
        &mut reader,
        &mut writer,
        "tasks.grade",
        json!({"answer": 1}),
    )
    .await;
    let broken = "the checkout is missing: /repo/tests";
    assert_eq!(reply["error"], json!({"code": -32000, "message": broken}));
    server.shutdown().await;

    let errors: Vec<BTreeMap<String, String>> = events
        .lock()
        .unwrap()
        .iter()
        .filter(|(level, _)| *level == Level::ERROR)
        .map(|(_, fields)| fields.clone())
        .collect();
    let expected = |task: &str, method: &str, error: &str| {
        BTreeMap::from(
            [
                ("message", "task failed"),
                ("task", task),
                ("session", session.as_str()),
                ("method", method),
                ("error", error),
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned())),
        )
    };
    assert_eq!(
        errors,
        [
            expected("count", "tasks.start", bad_args),
            expected("broken", "tasks.grade", broken),
        ]
    );
}
