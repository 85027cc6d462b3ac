//! Templates with state, served: a problem set loaded once is what every task's template
//! receives (`State<T>`), the whole state or a part of it (`FromRef`), each task its own clone;
//! the args schema leaves the state out.
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use grader_env::{Environment, FromRef, ServeConfig, Session, State, template};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;

/// How many times the problem set was loaded.
static LOADS: AtomicUsize = AtomicUsize::new(0);

struct ProblemSet(Vec<(String, String)>);

impl ProblemSet {
    fn load() -> Arc<ProblemSet> {
        LOADS.fetch_add(1, Ordering::SeqCst);
        Arc::new(ProblemSet(
            (1..=20)
                .map(|n| (format!("What is {n} + {n}?"), (2 * n).to_string()))
                .collect(),
        ))
    }
}

#[derive(Clone)]
struct AppState {
    problems: Arc<ProblemSet>,
    /// Each task's count of the answers it graded (a clone per task: never shared).
    graded: u32,
}

impl FromRef<AppState> for Arc<ProblemSet> {
    fn from_ref(state: &AppState) -> Self {
        Arc::clone(&state.problems)
    }
}

/// Answer problem `n`.
#[template(id = "solve")]
async fn solve(
    n: usize,
    State(problems): State<Arc<ProblemSet>>,
    session: Session,
) -> Result<f64, Box<dyn std::error::Error + Send + Sync>> {
    let (question, answer) = problems.0.get(n).ok_or("no such problem")?;
    let given = session.prompt(question.clone()).await?;
    Ok(f64::from(u8::from(given.as_str() == Some(answer.as_str()))))
}

/// Takes the whole state and changes its own clone.
#[template]
async fn count(
    State(mut state): State<AppState>,
    session: Session,
) -> Result<f64, Box<dyn std::error::Error + Send + Sync>> {
    state.graded += 1;
    session
        .prompt(format!(
            "{} problems, graded {}",
            state.problems.0.len(),
            state.graded
        ))
        .await?;
    Ok(1.0)
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
async fn every_task_receives_the_state_loaded_once() {
    let state = AppState {
        problems: ProblemSet::load(),
        graded: 0,
    };
    let env = Environment::new("math")
        .with_state(state)
        .template(Solve::template())
        .unwrap()
        .template(Count::template())
        .unwrap();
    // The state is no argument of the task.
    assert_eq!(
        env.templates()[0].manifest()["args"],
        json!({
            "properties": {"n": {"title": "N", "type": "integer", "minimum": 0}},
            "required": ["n"],
            "type": "object",
            "additionalProperties": false
        })
    );
    let server = env.bind(&ServeConfig::default()).await.unwrap();
    let (read, mut writer) = TcpStream::connect(server.local_addr())
        .await
        .unwrap()
        .into_split();
    let mut reader = BufReader::new(read);
    for n in [0, 7, 19] {
        let prompt = call(
            &mut reader,
            &mut writer,
            "tasks.start",
            json!({"id": "solve", "args": {"n": n}}),
        )
        .await;
        assert_eq!(
            prompt["result"]["prompt"],
            format!("What is {} + {}?", n + 1, n + 1)
        );
        let grade = call(
            &mut reader,
            &mut writer,
            "tasks.grade",
            json!({"answer": (2 * (n + 1)).to_string()}),
        )
        .await;
        assert_eq!(grade["result"]["score"], 1.0);
    }
    let wrong = call(
        &mut reader,
        &mut writer,
        "tasks.start",
        json!({"id": "solve", "args": {"n": 20}}),
    )
    .await;
    assert_eq!(wrong["error"]["message"], "no such problem");
    for _ in 0..2 {
        let prompt = call(
            &mut reader,
            &mut writer,
            "tasks.start",
            json!({"id": "count"}),
        )
        .await;
        // Each task starts from the environment's state, not from the last task's clone.
        assert_eq!(prompt["result"]["prompt"], "20 problems, graded 1");
        call(
            &mut reader,
            &mut writer,
            "tasks.grade",
            json!({"answer": ""}),
        )
        .await;
    }
    server.shutdown().await;
    assert_eq!(LOADS.load(Ordering::SeqCst), 1);
}
