//! hud's span files, read as they are: what a rollout's trace says of its grade.
//!
//! hud 0.6.21 writes each rollout's trace as spans, one JSON object a line, to
//! `<HUD_TELEMETRY_LOCAL_DIR>/<trace_id>.jsonl` (`~/.hud/spans` when uploads are off;
//! `hud/telemetry/exporter.py`). A span's attributes carry the run's id
//! (`hud.task_run_id`), a schema tag (`hud.schema`) and a payload (`hud.payload`): for the core
//! step stream (`hud.step.v1`), a step of the run. The task's steps (`source: "task"`) are the
//! two control-channel calls: `setup` (`tasks.start`: its arguments and the prompt frame) and
//! `evaluate` (`tasks.grade`: the answer sent and the grade frame, whose `score` is the
//! reward); a verifier grades again, and its `evaluate` is the one that counts, so the last
//! counts. A step with an `error` records what went wrong (a rollout that failed before launch
//! records only that).
//!
//! Each trace is one record: its last grade, as a result read with its `score` as the reward,
//! its sample the run's id, the prompt its input and the answer sent; or, when the trace has
//! no grade (the rollout failed before launch, was cancelled, or its grading failed), a record
//! with no reward whose error is the trace's last one, never a 0. The spans of a trace are
//! consecutive in its file (one file a trace, or files joined with `cat`); a trace that comes
//! back later in the input is a second record of the same sample, which the commands report
//! as a duplicate or a conflict.

use serde::Deserialize;
use serde_json::{Map, Value};

/// The schema tag of hud's step stream.
pub const STEP_SCHEMA: &str = "hud.step.v1";

/// Whether `bytes` is one of hud's spans: a JSON object whose first key is `"name"` (a span's
/// first field; a result's never is), with a `trace_id` and a `span_id`.
#[must_use]
pub fn is_span(bytes: &[u8]) -> bool {
    let rest = bytes.trim_ascii_start();
    let Some(rest) = rest.strip_prefix(b"{") else {
        return false;
    };
    rest.trim_ascii_start().starts_with(b"\"name\"")
        && memchr::memmem::find(bytes, b"\"span_id\"").is_some()
        && memchr::memmem::find(bytes, b"\"trace_id\"").is_some()
}

/// A span, as hud writes it (the fields read here).
#[derive(Debug, Deserialize)]
pub struct Span {
    /// The span's name (`step.task`, `step.agent`, …).
    pub name: String,
    /// The OpenTelemetry trace id (32 hex digits).
    pub trace_id: String,
    /// When the step started (ISO 8601).
    #[serde(default)]
    pub start_time: Option<String>,
    /// When the step ended.
    #[serde(default)]
    pub end_time: Option<String>,
    /// `OK`, `ERROR` or `UNSET`.
    #[serde(default)]
    pub status_code: Option<String>,
    /// The step's error, when it has one.
    #[serde(default)]
    pub status_message: Option<String>,
    /// `hud.task_run_id`, `hud.schema`, `hud.payload`.
    #[serde(default)]
    pub attributes: Map<String, Value>,
}

impl Span {
    /// The run the span belongs to: its `hud.task_run_id`, else its trace id.
    #[must_use]
    pub fn run_id(&self) -> &str {
        self.attributes
            .get("hud.task_run_id")
            .and_then(Value::as_str)
            .unwrap_or(&self.trace_id)
    }

    /// The step the span carries, when it is one of hud's core step stream.
    fn step(&self) -> Option<&Map<String, Value>> {
        if self.attributes.get("hud.schema").and_then(Value::as_str) != Some(STEP_SCHEMA) {
            return None;
        }
        self.attributes.get("hud.payload")?.as_object()
    }

    /// The task call a task step records: its phase (`setup` or `evaluate`) and the call.
    fn task_call(&self) -> Option<(&str, &Map<String, Value>)> {
        let step = self.step()?;
        if step.get("source").and_then(Value::as_str) != Some("task") {
            return None;
        }
        let call = step.get("task_call")?.as_object()?;
        Some((call.get("phase")?.as_str()?, call))
    }

    /// The error the step records, when it records one.
    fn error(&self) -> Option<String> {
        let from_step = self
            .step()
            .and_then(|step| step.get("error"))
            .and_then(Value::as_str);
        let failed = self.status_code.as_deref() == Some("ERROR");
        from_step
            .or(self.status_message.as_deref().filter(|_| failed))
            .map(str::to_owned)
    }
}

/// What a trace's spans said, gathered while they are read: one trace at a time.
#[derive(Debug, Default)]
pub struct Trace {
    /// The run's id.
    pub run_id: String,
    /// The task's id, from its `setup` step.
    pub task: Option<String>,
    /// The prompt, from the `setup` step's result.
    pub prompt: Option<String>,
    /// The last grade frame (`evaluate`'s result) and the answer sent with it.
    pub grade: Option<(Value, Option<String>)>,
    /// When the last grading started.
    pub graded_at: Option<String>,
    /// The last error a step recorded.
    pub error: Option<String>,
    /// The line of the last grade, else of the trace's last span.
    pub line: u64,
}

/// A text of a JSON value: a string as it is, anything else as JSON.
fn text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        other => Some(other.to_string()),
    }
}

/// Groups consecutive spans into traces.
#[derive(Debug, Default)]
pub struct Traces {
    current: Option<Trace>,
}

impl Traces {
    /// Takes in the span read at `line`; returns the trace before it when this span begins
    /// another.
    pub fn push(&mut self, span: &Span, line: u64) -> Option<Trace> {
        let run_id = span.run_id();
        let finished = match &self.current {
            Some(trace) if trace.run_id != run_id => self.current.take(),
            _ => None,
        };
        let trace = self.current.get_or_insert_with(|| Trace {
            run_id: run_id.to_owned(),
            ..Trace::default()
        });
        if trace.grade.is_none() {
            trace.line = line;
        }
        if let Some(error) = span.error() {
            trace.error = Some(error);
        }
        match span.task_call() {
            Some(("setup", call)) => {
                trace.task = call.get("name").and_then(Value::as_str).map(str::to_owned);
                trace.prompt = call
                    .get("result")
                    .and_then(|result| result.get("prompt"))
                    .and_then(text);
            }
            Some(("evaluate", call)) => {
                let answer = call
                    .get("arguments")
                    .and_then(|arguments| arguments.get("answer"))
                    .and_then(text);
                let frame = call.get("result").cloned().unwrap_or(Value::Null);
                trace.grade = Some((frame, answer));
                trace.graded_at.clone_from(&span.start_time);
                trace.line = line;
            }
            _ => {}
        }
        finished
    }

    /// The last trace, at the end of the input.
    pub fn finish(&mut self) -> Option<Trace> {
        self.current.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(json: &str) -> Span {
        serde_json::from_str(json).expect("a span")
    }

    #[test]
    fn spans_are_told_from_results() {
        assert!(is_span(
            br#"{"name": "step.task", "trace_id": "ab", "span_id": "cd", "attributes": {}}"#
        ));
        assert!(!is_span(
            br#"{"reward": 1.0, "name": "x", "trace_id": "ab", "span_id": "cd"}"#
        ));
        assert!(!is_span(br#"{"name": "tests", "value": 1.0}"#));
    }

    #[test]
    fn the_last_grade_of_a_trace_counts_and_a_new_run_ends_it() {
        let mut traces = Traces::default();
        let setup = span(
            r#"{"name":"step.task","trace_id":"t","span_id":"1","attributes":{"hud.schema":"hud.step.v1","hud.task_run_id":"run-1","hud.payload":{"source":"task","task_call":{"phase":"setup","name":"fix","arguments":{},"result":{"prompt":"Fix it"}}}}}"#,
        );
        let graded = |score: f64| {
            span(&format!(
                r#"{{"name":"step.task","trace_id":"t","span_id":"2","start_time":"2026-01-01T00:00:00Z","attributes":{{"hud.schema":"hud.step.v1","hud.task_run_id":"run-1","hud.payload":{{"source":"task","task_call":{{"phase":"evaluate","name":"fix","arguments":{{"answer":"done"}},"result":{{"score":{score}}}}}}}}}}}"#
            ))
        };
        assert!(traces.push(&setup, 1).is_none());
        assert!(traces.push(&graded(0.5), 2).is_none());
        assert!(traces.push(&graded(1.0), 3).is_none());
        let other = span(
            r#"{"name":"step.system","trace_id":"u","span_id":"3","status_code":"ERROR","status_message":"[provisioning] boom","attributes":{"hud.schema":"hud.step.v1","hud.task_run_id":"run-2","hud.payload":{"source":"system","error":"[provisioning] boom"}}}"#,
        );
        let first = traces.push(&other, 4).expect("run-1 ended");
        assert_eq!(first.run_id, "run-1");
        assert_eq!(first.prompt.as_deref(), Some("Fix it"));
        assert_eq!(
            first
                .grade
                .as_ref()
                .and_then(|(frame, _)| frame["score"].as_f64()),
            Some(1.0)
        );
        assert_eq!(first.line, 3);
        let second = traces.finish().expect("run-2");
        assert!(second.grade.is_none());
        assert_eq!(second.error.as_deref(), Some("[provisioning] boom"));
    }
}
