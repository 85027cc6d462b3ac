//! Writing a [`Line`] as JSON ([`Line::to_json_line`], and `write_line` for the runner's
//! buffers), byte for byte as `serde_json::to_writer` writes it, faster.
//!
//! An evaluation writes a line per grading, and most of a line is strings (the `_parameters`
//! of every subscore) that need no escaping; serde_json looks at each of their bytes through
//! a table. Here a string is checked eight bytes at a time and, when nothing in it needs
//! escaping, copied whole between its quotes. Anything else (a string that needs escaping,
//! every number) is written by serde_json itself, so the output is serde_json's exactly;
//! the tests compare the two on random lines.

use serde_json::Value;

use super::{ErrorKind, Line};
use grader_core::params::{needs_escaping, write_f64};
use grader_core::score::{EvaluationResult, SubScore};

impl Line {
    /// The line as JSON followed by a newline, as it is written to a file.
    ///
    /// # Errors
    /// When the result holds something serde_json cannot write (a map with non-string keys
    /// in `extra`, which parsing never produces).
    pub fn to_json_line(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut bytes = Vec::with_capacity(512);
        write_line(&mut bytes, self)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

/// Appends `line` as JSON (without a newline) to `out`: the bytes
/// `serde_json::to_writer(out, line)` would append. On error `out` may hold part of the line.
///
/// # Errors
/// When serde_json refuses the line (a result whose reward is not finite, which the public
/// API cannot build): its own error.
pub(crate) fn write_line(out: &mut Vec<u8>, line: &Line) -> Result<(), serde_json::Error> {
    if line
        .result
        .as_ref()
        .is_some_and(|r| !r.reward().is_finite())
    {
        // serde_json's error, word for word.
        return serde_json::to_writer(out, line);
    }
    out.extend_from_slice(b"{\"v\":");
    number(out, &line.version)?;
    out.extend_from_slice(b",\"id\":");
    string(out, &line.id)?;
    out.extend_from_slice(b",\"epoch\":");
    number(out, &line.epoch)?;
    out.extend_from_slice(b",\"duration_secs\":");
    number(out, &line.duration_secs)?;
    out.extend_from_slice(b",\"error\":");
    match &line.error {
        None => out.extend_from_slice(b"null"),
        Some(error) => {
            out.extend_from_slice(match error.kind {
                ErrorKind::Failed => b"{\"kind\":\"failed\",\"message\":",
                ErrorKind::Panicked => b"{\"kind\":\"panicked\",\"message\":",
            });
            string(out, &error.message)?;
            out.push(b'}');
        }
    }
    out.extend_from_slice(b",\"result\":");
    match &line.result {
        None => out.extend_from_slice(b"null"),
        Some(result) => write_result(out, result)?,
    }
    for (key, text) in [
        (&b",\"started_at\":"[..], &line.started_at),
        (b",\"input\":", &line.input),
        (b",\"target\":", &line.target),
        (b",\"answer\":", &line.answer),
    ] {
        if let Some(text) = text {
            out.extend_from_slice(key);
            string(out, text)?;
        }
    }
    out.push(b'}');
    Ok(())
}

/// An [`EvaluationResult`] (with a finite reward), as its `Serialize` writes it.
fn write_result(out: &mut Vec<u8>, result: &EvaluationResult) -> Result<(), serde_json::Error> {
    out.extend_from_slice(b"{\"reward\":");
    write_f64(out, result.reward());
    out.extend_from_slice(if result.done {
        b",\"done\":true,\"content\":"
    } else {
        b",\"done\":false,\"content\":"
    });
    match &result.content {
        None => out.extend_from_slice(b"null"),
        Some(content) => string(out, content)?,
    }
    out.extend_from_slice(b",\"info\":");
    object(out, &result.info)?;
    out.extend_from_slice(if result.is_error {
        b",\"isError\":true,\"subscores\":"
    } else {
        b",\"isError\":false,\"subscores\":"
    });
    match &result.subscores {
        None => out.extend_from_slice(b"null"),
        Some(subscores) => write_subscores(out, subscores)?,
    }
    for (key, raw) in result.extra.iter() {
        out.push(b',');
        string(out, key)?;
        out.push(b':');
        out.extend_from_slice(raw.get().as_bytes());
    }
    out.push(b'}');
    Ok(())
}

/// Subscores, as a JSON array of their derived `Serialize`.
fn write_subscores(out: &mut Vec<u8>, subscores: &[SubScore]) -> Result<(), serde_json::Error> {
    out.push(b'[');
    for (i, sub) in subscores.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"name\":");
        string(out, sub.name())?;
        out.extend_from_slice(b",\"weight\":");
        write_f64(out, sub.weight());
        out.extend_from_slice(b",\"value\":");
        write_f64(out, sub.value());
        out.extend_from_slice(b",\"children\":");
        match sub.children() {
            None => out.extend_from_slice(b"null"),
            Some(children) => write_subscores(out, children)?,
        }
        out.extend_from_slice(b",\"info\":");
        match sub.info_parts() {
            (None, None) => out.extend_from_slice(b"null"),
            (Some(info), None) => object(out, info)?,
            // Recorded `_parameters`, kept as serde_json's text of them, are the last key.
            (info, Some(parameters)) => {
                out.push(b'{');
                for (key, value) in info.into_iter().flatten() {
                    string(out, key)?;
                    out.push(b':');
                    write_value(out, value)?;
                    out.push(b',');
                }
                out.extend_from_slice(b"\"_parameters\":");
                out.extend_from_slice(parameters);
                out.push(b'}');
            }
        }
        out.push(b'}');
    }
    out.push(b']');
    Ok(())
}

/// A JSON object of values.
fn object(
    out: &mut Vec<u8>,
    map: &serde_json::Map<String, Value>,
) -> Result<(), serde_json::Error> {
    out.push(b'{');
    for (i, (key, value)) in map.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        string(out, key)?;
        out.push(b':');
        write_value(out, value)?;
    }
    out.push(b'}');
    Ok(())
}

/// A JSON value.
fn write_value(out: &mut Vec<u8>, value: &Value) -> Result<(), serde_json::Error> {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => number(out, n)?,
        Value::String(s) => string(out, s)?,
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item)?;
            }
            out.push(b']');
        }
        Value::Object(map) => object(out, map)?,
    }
    Ok(())
}

/// A number (or anything else serde_json writes without strings), by serde_json.
fn number<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, n: &T) -> Result<(), serde_json::Error> {
    serde_json::to_writer(out, n)
}

/// A string: copied whole between quotes when no byte of it needs escaping, else by
/// serde_json.
fn string(out: &mut Vec<u8>, s: &str) -> Result<(), serde_json::Error> {
    if needs_escaping(s.as_bytes()) {
        return serde_json::to_writer(out, s);
    }
    out.reserve(s.len() + 2);
    out.push(b'"');
    out.extend_from_slice(s.as_bytes());
    out.push(b'"');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use grader_core::score::{Info, Score};
    use grader_core::{Failure, Grader, SyncGrader};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A random string, heavy in what escaping is about.
    fn text(rng: &mut ChaCha8Rng) -> String {
        const PIECES: &[&str] = &[
            "a", "Z", " ", "marbles", "\"", "\\", "\n", "\t", "\u{0}", "\u{1f}", "\u{7f}", "é",
            "\u{2028}", "😀", "/", "'", "<", "0.5", "\u{20}", "\u{1}", "\r",
        ];
        let n = rng.random_range(0..24);
        (0..n)
            .map(|_| PIECES[rng.random_range(0..PIECES.len())])
            .collect()
    }

    fn value(rng: &mut ChaCha8Rng, depth: u32) -> Value {
        match rng.random_range(0..if depth > 2 { 5 } else { 7 }) {
            0 => Value::Null,
            1 => Value::Bool(rng.random()),
            2 => Value::from(rng.random_range(-1000_i64..1000)),
            3 => serde_json::Number::from_f64(
                rng.random::<f64>() * 10f64.powi(rng.random_range(-30..30)),
            )
            .map_or(Value::Null, Value::Number),
            4 => Value::String(text(rng)),
            5 => Value::Array(
                (0..rng.random_range(0..4))
                    .map(|_| value(rng, depth + 1))
                    .collect(),
            ),
            _ => Value::Object(info(rng, depth + 1)),
        }
    }

    fn info(rng: &mut ChaCha8Rng, depth: u32) -> Info {
        (0..rng.random_range(0..4))
            .map(|_| (text(rng), value(rng, depth)))
            .collect()
    }

    /// A grader that scores `value` with `info` and records `parameters`.
    struct Recorded {
        name: String,
        value: f64,
        info: Option<Info>,
        parameters: Info,
    }

    impl Grader for Recorded {
        fn name(&self) -> std::borrow::Cow<'_, str> {
            std::borrow::Cow::Borrowed(&self.name)
        }

        fn parameters(&self) -> Info {
            self.parameters.clone()
        }

        async fn score(self) -> Result<Score, Failure> {
            self.score_now()
        }
    }

    impl SyncGrader for Recorded {
        fn score_now(self) -> Result<Score, Failure> {
            let score = Score::new(self.value);
            Ok(match self.info {
                Some(info) => score.with_info(info),
                None => score,
            })
        }
    }

    fn subscores(rng: &mut ChaCha8Rng, depth: u32) -> Vec<SubScore> {
        (0..rng.random_range(0..4))
            .map(|_| {
                // Whole values (and a negative zero) are written on a path of their own.
                let value = match rng.random_range(0..6) {
                    0 => 0.0,
                    1 => -0.0,
                    2 => 1.0,
                    _ => rng.random::<f64>(),
                };
                let weight = match rng.random_range(0..4) {
                    0 => f64::from(rng.random_range(-3_i8..3)),
                    _ => rng.random_range(-1.0..1.0),
                };
                let mut sub = SubScore::new(text(rng), value)
                    .and_then(|s| s.with_weight(weight))
                    .expect("a valid subscore");
                if rng.random_bool(0.5) {
                    sub = sub.with_info(info(rng, 1));
                }
                if rng.random_bool(0.4) {
                    // Recorded `_parameters`, kept as text after the rest of the info: what a
                    // grading of a grader that records its parameters makes.
                    sub = Recorded {
                        name: sub.name().to_owned(),
                        value: sub.value(),
                        info: sub.info().cloned(),
                        parameters: info(rng, 1),
                    }
                    .grade(sub.weight())
                    .now()
                    .expect("a valid grading");
                }
                if depth < 2 && rng.random_bool(0.3) {
                    sub = sub.with_children(subscores(rng, depth + 1));
                }
                sub
            })
            .collect()
    }

    fn line(rng: &mut ChaCha8Rng) -> Line {
        let id = text(rng);
        let epoch = rng.random_range(0..u32::MAX);
        let secs = rng.random::<f64>() * 100.0;
        if rng.random_bool(0.2) {
            let kind = if rng.random() {
                ErrorKind::Failed
            } else {
                ErrorKind::Panicked
            };
            let mut line = Line::failed(id, epoch, kind, text(rng), secs);
            with_texts(rng, &mut line);
            return line;
        }
        let mut result =
            EvaluationResult::from_reward(rng.random_range(-2.0..1.0)).expect("finite");
        result.done = rng.random();
        result.is_error = rng.random();
        if rng.random() {
            result.content = Some(text(rng));
        }
        result.info = info(rng, 1);
        if rng.random() {
            result.subscores = Some(subscores(rng, 0));
        }
        if rng.random_bool(0.3) {
            let raw: EvaluationResult = serde_json::from_str(
                r#"{"reward": 0.5, "trace_id": 123456789012345678901234567890, "tags": ["a", {"b": null}]}"#,
            )
            .expect("a result");
            result.extra = raw.extra;
        }
        let mut line = Line::graded(id, epoch, result, secs);
        with_texts(rng, &mut line);
        line
    }

    /// Sets some of a line's start time and sample texts, at random.
    fn with_texts(rng: &mut ChaCha8Rng, line: &mut Line) {
        if rng.random() {
            line.started_at = Some("2026-01-02T03:04:05.678901Z".to_owned());
        }
        for field in [&mut line.input, &mut line.target, &mut line.answer] {
            if rng.random() {
                *field = Some(text(rng));
            }
        }
    }

    #[test]
    fn lines_are_written_as_serde_json_writes_them() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut out = Vec::new();
        for _ in 0..5000 {
            let line = line(&mut rng);
            out.clear();
            write_line(&mut out, &line).expect("a line");
            let expected = serde_json::to_vec(&line).expect("serde_json writes it");
            assert_eq!(
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(&expected),
                "{line:?}"
            );
        }
    }

    #[test]
    fn every_byte_is_escaped_or_not_as_serde_json_does() {
        for byte in 0..=0x7f_u8 {
            for at in 0..17 {
                let mut text = "x".repeat(16);
                text.replace_range(at..=at.min(15), &char::from(byte).to_string());
                let mut out = Vec::new();
                string(&mut out, &text).expect("a string");
                assert_eq!(
                    out,
                    serde_json::to_vec(&text).expect("a string"),
                    "{byte:#x} at {at}"
                );
            }
        }
    }
}
