//! Serving-time state: one suspended task per session, keyed by session id, and the set of
//! sessions with a live connection. A task whose session has no live connection is parked,
//! waiting for a resume (`hello` with its id) or, when it is the only one, a plain
//! `tasks.grade` from any connection, as in the reference's `_ControlChannel`.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher as _, Hasher as _, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::{Map, Value};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::environment::Environment;
use crate::grade::{GradeError, grade_message};
use crate::session::Session;
use crate::template::Template;

/// One task between `tasks.start` and `tasks.grade`: the template's running future (a tokio
/// task) and the channel its answer goes through. Dropping it aborts the template.
pub(crate) struct Runner {
    pub(crate) task_id: String,
    /// The session that started it (whose task it is, whichever connection grades it).
    pub(crate) session: String,
    handle: Option<JoinHandle<Result<Map<String, Value>, GradeError>>>,
    prompt: Option<oneshot::Receiver<Value>>,
    answer: Option<oneshot::Sender<Map<String, Value>>>,
}

impl Drop for Runner {
    fn drop(&mut self) {
        if let Some(handle) = &self.handle {
            handle.abort();
        }
    }
}

fn panic_message(error: tokio::task::JoinError) -> String {
    match error.try_into_panic() {
        Ok(payload) => payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the template panicked".to_owned()),
        Err(_) => "the template was cancelled".to_owned(),
    }
}

impl Runner {
    /// Waits for the prompt frame, or for the template to end without one.
    pub(crate) async fn wait_prompt(&mut self) -> Result<Map<String, Value>, String> {
        let prompt = match self.prompt.take() {
            Some(receiver) => receiver.await.ok(),
            None => None,
        };
        if let Some(prompt) = prompt {
            return Ok(match prompt {
                Value::Object(map) if map.contains_key("prompt") => map,
                other => {
                    let mut frame = Map::new();
                    frame.insert("prompt".to_owned(), other);
                    frame
                }
            });
        }
        let Some(handle) = self.handle.take() else {
            return Err(format!("task {:?} is not running", self.task_id));
        };
        Err(match handle.await {
            Ok(Ok(_)) => format!(
                "task {} finished without a prompt",
                crate::pyfmt::py_str_repr(&self.task_id)
            ),
            Ok(Err(error)) => grade_message(&self.task_id, &error),
            Err(error) => panic_message(error),
        })
    }

    /// Sends the answer payload and waits for the grade frame.
    pub(crate) async fn grade(
        &mut self,
        payload: Map<String, Value>,
    ) -> Result<Map<String, Value>, String> {
        if let Some(sender) = self.answer.take() {
            // The template may already be gone; its result says why.
            let _ = sender.send(payload);
        }
        let Some(handle) = self.handle.as_mut() else {
            return Err("task not started".to_owned());
        };
        let outcome = handle.await;
        self.handle = None;
        match outcome {
            Ok(Ok(frame)) => Ok(frame),
            Ok(Err(error)) => Err(grade_message(&self.task_id, &error)),
            Err(error) => Err(panic_message(error)),
        }
    }

    /// Stops the template (dropping its future and what it owns) and waits until it is gone.
    async fn stop(&mut self) {
        if let Some(handle) = self.handle.take() {
            handle.abort();
            let _ = handle.await;
        }
    }
}

/// Why a grade found no task to grade; answered with -32600.
#[derive(Debug)]
pub(crate) struct NoTask(pub(crate) String);

#[derive(Default)]
struct State {
    runners: HashMap<String, Runner>,
    live: HashSet<String>,
}

/// The result of a `hello` asking to resume a session.
pub(crate) enum Resume {
    Resumed,
    Live,
    Unknown,
}

pub(crate) struct Channel {
    pub(crate) env: Arc<Environment>,
    state: Mutex<State>,
    counter: AtomicU64,
    random: RandomState,
}

impl Channel {
    pub(crate) fn new(env: Arc<Environment>) -> Self {
        Channel {
            env,
            state: Mutex::new(State::default()),
            counter: AtomicU64::new(0),
            random: RandomState::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A fresh session id (`sess-` and 8 hex digits, as the reference's), marked live.
    pub(crate) fn open_session(&self) -> String {
        loop {
            let mut hasher = self.random.build_hasher();
            hasher.write_u64(self.counter.fetch_add(1, Ordering::Relaxed));
            let id = format!("sess-{:08x}", hasher.finish() as u32);
            let mut state = self.state();
            if !state.live.contains(&id) && !state.runners.contains_key(&id) {
                state.live.insert(id.clone());
                return id;
            }
        }
    }

    /// The connection of `id` is gone; its task, if any, stays parked.
    pub(crate) fn close_session(&self, id: &str) {
        self.state().live.remove(id);
    }

    /// Makes the connection speaking as `current` speak as the parked session `requested`.
    pub(crate) fn resume(&self, current: &str, requested: &str) -> Resume {
        let mut state = self.state();
        if state.live.contains(requested) {
            return Resume::Live;
        }
        if !state.runners.contains_key(requested) {
            return Resume::Unknown;
        }
        state.live.remove(current);
        state.live.insert(requested.to_owned());
        Resume::Resumed
    }

    /// Starts `template` for a session: its args are checked and parsed, then its future is
    /// spawned. Nothing of the template runs when the args are bad.
    pub(crate) fn begin(
        &self,
        session_id: &str,
        template: &Template,
        args: Map<String, Value>,
    ) -> Result<Runner, String> {
        let (prompt_tx, prompt_rx) = oneshot::channel();
        let (answer_tx, answer_rx) = oneshot::channel();
        let session = Session::new(template.id().to_owned(), prompt_tx, answer_rx);
        #[cfg(feature = "workspace")]
        let session = session.with_workspaces(self.env.workspaces.clone());
        let future = template.begin(args, session)?;
        Ok(Runner {
            task_id: template.id().to_owned(),
            session: session_id.to_owned(),
            handle: Some(tokio::spawn(future)),
            prompt: Some(prompt_rx),
            answer: Some(answer_tx),
        })
    }

    /// Keeps a started task for the session's grade.
    pub(crate) fn hold(&self, session: &str, runner: Runner) {
        let previous = self.state().runners.insert(session.to_owned(), runner);
        drop(previous);
    }

    /// The task a grade on `session` grades: its own, or the only parked one.
    pub(crate) fn take_for_grade(&self, session: &str) -> Result<Runner, NoTask> {
        let mut state = self.state();
        if let Some(runner) = state.runners.remove(session) {
            return Ok(runner);
        }
        let mut parked: Vec<String> = state
            .runners
            .keys()
            .filter(|id| !state.live.contains(*id))
            .cloned()
            .collect();
        parked.sort();
        match parked.as_slice() {
            [] => Err(NoTask("no task in progress".to_owned())),
            [one] => state
                .runners
                .remove(one)
                .ok_or_else(|| NoTask("no task in progress".to_owned())),
            many => Err(NoTask(format!(
                "{} parked sessions ({}); resume one by sending hello with its session_id",
                many.len(),
                many.join(", ")
            ))),
        }
    }

    /// Ends a task: stops its template, ends what is its session's (its workspace key and
    /// connections), and runs the teardown hooks.
    pub(crate) async fn finish(&self, mut runner: Runner) {
        runner.stop().await;
        self.env.task_ended(&runner.session).await;
        self.env.run_teardown().await;
    }

    /// Cancels the session's task, if it has one.
    pub(crate) async fn cancel(&self, session: &str) {
        let runner = self.state().runners.remove(session);
        if let Some(runner) = runner {
            self.finish(runner).await;
        }
    }

    /// Cancels every task (server shutdown).
    pub(crate) async fn cancel_all(&self) {
        let runners: Vec<Runner> = self.state().runners.drain().map(|(_, r)| r).collect();
        for runner in runners {
            self.finish(runner).await;
        }
    }

    /// Whether a task is held for `session` (started, awaiting its grade).
    pub(crate) fn holds(&self, session: &str) -> bool {
        self.state().runners.contains_key(session)
    }

    /// How many tasks are held (running or parked).
    pub(crate) fn held(&self) -> usize {
        self.state().runners.len()
    }
}
