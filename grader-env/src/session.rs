//! The handle a running template holds: it publishes the prompt and receives the agent's
//! answer.

use std::sync::{Mutex, PoisonError};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use crate::pyfmt::py_str;

/// A template's view of its task: [`prompt`](Session::prompt) publishes the prompt (the reply
/// to `tasks.start`) and resolves with the agent's answer (the payload of `tasks.grade`).
///
/// A template prompts once. If the task is cancelled, or its session ends for good, while the
/// template waits, the template's future is dropped: code after the `await` never runs, and
/// what it owns (commands it started included) is dropped with it.
#[derive(Debug)]
pub struct Session {
    task_id: String,
    prompt: Mutex<Option<oneshot::Sender<Value>>>,
    answer: Mutex<Option<oneshot::Receiver<Map<String, Value>>>>,
    #[cfg(feature = "workspace")]
    workspaces: crate::workspace::Attached,
}

/// Why [`Session::prompt`] did not give an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// The template prompted a second time.
    #[error("task {0:?} prompted twice: a template prompts once, then grades")]
    PromptedTwice(String),
    /// The prompt is not JSON.
    #[error("task {task:?}: the prompt is not JSON: {message}")]
    NotJson {
        /// The task.
        task: String,
        /// serde's message.
        message: String,
    },
    /// The server stopped waiting for this task.
    #[error("task {0:?} was cancelled")]
    Cancelled(String),
}

/// The agent's answer parsed into the type the template declared, as the reference's
/// `Answer[T]`: `content` holds the parsed value, or the answer as it came when it does not
/// parse (grade that accordingly); `raw` is always the answer as text.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer<T> {
    /// The parsed answer, or the unparsed one.
    pub content: Result<T, Value>,
    /// The answer as submitted (Python's `str()` of it when it was not a string).
    pub raw: String,
}

impl Session {
    pub(crate) fn new(
        task_id: String,
        prompt: oneshot::Sender<Value>,
        answer: oneshot::Receiver<Map<String, Value>>,
    ) -> Self {
        Session {
            task_id,
            prompt: Mutex::new(Some(prompt)),
            answer: Mutex::new(Some(answer)),
            #[cfg(feature = "workspace")]
            workspaces: crate::workspace::Attached::default(),
        }
    }

    /// The session with the workspaces its environment attached.
    #[cfg(feature = "workspace")]
    pub(crate) fn with_workspaces(mut self, workspaces: crate::workspace::Attached) -> Self {
        self.workspaces = workspaces;
        self
    }

    /// The id of the task this session runs.
    #[must_use]
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// The workspace the environment attached
    /// ([`Environment::workspace`](crate::Environment::workspace)), where this task's agent
    /// works: [`bash`](crate::workspace::WorkspaceHandle::bash) grades a command inside its
    /// sandbox. A template reaches its task's workspace this one way.
    ///
    /// # Errors
    /// [`WorkspaceError::NotAttached`](crate::workspace::WorkspaceError::NotAttached) when the
    /// environment attached none, or several (then name one with
    /// [`workspace_named`](Self::workspace_named)).
    #[cfg(feature = "workspace")]
    pub fn workspace(
        &self,
    ) -> Result<crate::workspace::WorkspaceHandle, crate::workspace::WorkspaceError> {
        self.workspaces.get(&self.task_id, None)
    }

    /// The workspace the environment attached under the capability name `name`
    /// ([`Environment::workspace_with`](crate::Environment::workspace_with)).
    ///
    /// # Errors
    /// [`WorkspaceError::NotAttached`](crate::workspace::WorkspaceError::NotAttached) when
    /// there is none by that name.
    #[cfg(feature = "workspace")]
    pub fn workspace_named(
        &self,
        name: &str,
    ) -> Result<crate::workspace::WorkspaceHandle, crate::workspace::WorkspaceError> {
        self.workspaces.get(&self.task_id, Some(name))
    }

    async fn exchange(&self, prompt: impl Serialize) -> Result<Map<String, Value>, PromptError> {
        let value = serde_json::to_value(prompt).map_err(|e| PromptError::NotJson {
            task: self.task_id.clone(),
            message: e.to_string(),
        })?;
        let sender = self
            .prompt
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let receiver = self
            .answer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let (Some(sender), Some(receiver)) = (sender, receiver) else {
            return Err(PromptError::PromptedTwice(self.task_id.clone()));
        };
        sender
            .send(value)
            .map_err(|_| PromptError::Cancelled(self.task_id.clone()))?;
        receiver
            .await
            .map_err(|_| PromptError::Cancelled(self.task_id.clone()))
    }

    /// Publishes `prompt` and waits for the agent's answer: the `answer` field of the grade
    /// payload, unchanged (`null` when absent), as the reference passes it to a template that
    /// declares no return type.
    ///
    /// A prompt that is a JSON object with a `prompt` key is sent as the whole prompt frame;
    /// anything else is sent as `{"prompt": …}`.
    ///
    /// # Errors
    /// [`PromptError`] when the template prompts twice or the prompt is not JSON.
    pub async fn prompt(&self, prompt: impl Serialize) -> Result<Value, PromptError> {
        let mut payload = self.exchange(prompt).await?;
        Ok(payload.remove("answer").unwrap_or(Value::Null))
    }

    /// As [`prompt`](Self::prompt), with the answer parsed into `T` as the reference parses it
    /// for a template that declares `returns=T`: a string answer is read as JSON text, any
    /// other answer as a JSON value; when that fails, `content` is the answer unparsed.
    ///
    /// # Errors
    /// As [`prompt`](Self::prompt).
    pub async fn prompt_as<T: DeserializeOwned>(
        &self,
        prompt: impl Serialize,
    ) -> Result<Answer<T>, PromptError> {
        let mut payload = self.exchange(prompt).await?;
        let raw = payload
            .remove("answer")
            .unwrap_or_else(|| Value::String(String::new()));
        Ok(parse_answer(raw))
    }
}

pub(crate) fn parse_answer<T: DeserializeOwned>(raw: Value) -> Answer<T> {
    let parsed = match &raw {
        Value::String(text) => serde_json::from_str::<T>(text).ok(),
        other => T::deserialize(other).ok(),
    };
    let text = py_str(&raw);
    Answer {
        content: parsed.ok_or(raw),
        raw: text,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_parse_or_fall_back_to_the_raw_value() {
        let parsed: Answer<Vec<u32>> = parse_answer(json!("[1, 2]"));
        assert_eq!(parsed.content, Ok(vec![1, 2]));
        assert_eq!(parsed.raw, "[1, 2]");
        let value: Answer<Vec<u32>> = parse_answer(json!([3]));
        assert_eq!(value.content, Ok(vec![3]));
        assert_eq!(value.raw, "[3]");
        let unparsed: Answer<u32> = parse_answer(json!("seven"));
        assert_eq!(unparsed.content, Err(json!("seven")));
    }
}
