//! Reading a frame's bytes as the reference's `json.loads(line)` reads them, where serde_json
//! alone would refuse what Python accepts:
//!
//! - a UTF-8 byte-order mark before the frame is skipped (Python decodes bytes as
//!   `utf-8-sig`);
//! - a lone surrogate (`"\ud800"`, or one encoded in UTF-8, which Python decodes with
//!   `surrogatepass`) becomes U+FFFD, the replacement character: a Rust string cannot hold a
//!   lone surrogate, Python's can;
//! - nesting deeper than serde_json's 128 levels is read up to [`MAX_DEPTH`], about where
//!   Python's recursion limit stops `json.loads` (deeper, both close the connection);
//! - a request id that is an integer beyond 64 bits is kept as written, so it goes back
//!   exactly as sent (Python's integers have no size limit).

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::budget::{Budget, Held};
use super::error::FrameError;
use crate::pyfmt::py_type_name;
use grader_core::cost::{VALUE_COST, parsed_cost};

/// The deepest nesting a frame may have (the frame's own object is level 1). The reference
/// reads about 980 levels, the rest of Python's recursion limit of 1000.
pub const MAX_DEPTH: usize = 980;

/// The stack a thread gets to read a frame nested deeper than serde_json's default limit.
const DEEP_STACK: usize = 64 << 20;

/// The parsed cost below which a frame is not counted in the budget: what a connection may
/// hold without asking, so that a small request is served even when the budget is spent.
const UNCOUNTED: usize = 64 << 10;

/// A request's id, written back in replies as the reference writes it.
#[derive(Debug, Clone)]
pub(crate) enum Id {
    /// An id serde_json holds exactly (a float is written as Python's `repr`).
    Json(Value),
    /// An integer beyond 64 bits, as written.
    Raw(Box<RawValue>),
}

impl Id {
    /// No id: the frame is a notification, or a reply that cannot name its request.
    pub(crate) const NULL: Id = Id::Json(Value::Null);

    /// Whether the id is null (or absent).
    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Id::Json(Value::Null))
    }

    /// Appends the id's JSON text.
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        match self {
            Id::Raw(raw) => out.extend_from_slice(raw.get().as_bytes()),
            Id::Json(Value::Number(number)) if number.is_f64() => {
                let text = number
                    .as_f64()
                    .map_or_else(|| number.to_string(), crate::pyfmt::py_float);
                out.extend_from_slice(text.as_bytes());
            }
            Id::Json(value) => {
                // Writing a `Value` into a `Vec` cannot fail.
                let _ = serde_json::to_writer(&mut *out, value);
            }
        }
    }
}

/// A frame read as a JSON object, with its id.
#[derive(Debug)]
pub(crate) struct Request {
    /// The frame.
    pub(crate) msg: Map<String, Value>,
    /// `msg["id"]`, exact.
    pub(crate) id: Id,
    /// What the parsed frame is counted as in the budget, until its request is handled.
    pub(crate) held: Held,
}

/// Reads one frame (its newline included or not), counting what it costs parsed in `budget`
/// when that is more than a small frame's.
pub(crate) fn request(line: &[u8], budget: &Budget) -> Result<Request, FrameError> {
    let cost = if line.len().saturating_mul(VALUE_COST) > UNCOUNTED {
        parsed_cost(line)
    } else {
        0
    };
    let held = if cost > UNCOUNTED {
        Held::take(budget, cost).ok_or(FrameError::Busy {
            received: line.len(),
            budget: budget.growth_limit(),
        })?
    } else {
        Held::nothing()
    };
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let (value, text) = match value(line) {
        Ok(value) => (value, std::borrow::Cow::Borrowed(line)),
        Err(error) => {
            let cleaned = replace_lone_surrogates(line).ok_or_else(|| malformed(&error))?;
            let value = self::value(&cleaned).map_err(|_| malformed(&error))?;
            (value, std::borrow::Cow::Owned(cleaned))
        }
    };
    let Value::Object(msg) = value else {
        return Err(FrameError::Malformed(format!(
            "a frame must be a JSON object, got {}",
            py_type_name(&value)
        )));
    };
    let id = match msg.get("id") {
        None => Id::NULL,
        Some(Value::Number(number)) if number.is_f64() => {
            raw_integer(&text).unwrap_or_else(|| Id::Json(Value::Number(number.clone())))
        }
        Some(other) => Id::Json(other.clone()),
    };
    Ok(Request { msg, id, held })
}

fn malformed(error: &serde_json::Error) -> FrameError {
    FrameError::Malformed(error.to_string())
}

/// The JSON value, read deeper than serde_json's default limit when the nesting allows.
fn value(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    match serde_json::from_slice::<Value>(bytes) {
        Err(error) if error.to_string().starts_with("recursion limit exceeded") => {
            if depth(bytes) > MAX_DEPTH {
                return Err(error);
            }
            // serde_json recurses once per level: give it a stack of its own for this frame.
            std::thread::scope(|scope| {
                std::thread::Builder::new()
                    .name("grader-env-deep-frame".to_owned())
                    .stack_size(DEEP_STACK)
                    .spawn_scoped(scope, || {
                        let mut reader = serde_json::Deserializer::from_slice(bytes);
                        reader.disable_recursion_limit();
                        let value = Value::deserialize(&mut reader)?;
                        reader.end()?;
                        Ok(value)
                    })
                    .map_err(|_| error)?
                    .join()
                    .unwrap_or_else(|_| {
                        Err(serde::de::Error::custom("reading a deep frame failed"))
                    })
            })
        }
        other => other,
    }
}

/// The deepest nesting of arrays and objects in the JSON text (strings skipped).
fn depth(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &byte in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

fn hex(bytes: &[u8]) -> Option<u16> {
    let text = std::str::from_utf8(bytes).ok()?;
    u16::from_str_radix(text, 16).ok()
}

/// The text with every lone surrogate (a `\uD800`–`\uDFFF` escape not part of a pair, or a
/// surrogate encoded in UTF-8) replaced by U+FFFD, as an escape or in UTF-8 (the same length
/// either way); `None` when there is none, so the original error stands.
fn replace_lone_surrogates(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = bytes.to_vec();
    let mut changed = false;
    let mut at = 0;
    while at < out.len() {
        match out[at] {
            b'\\' if out.get(at + 1) == Some(&b'u') => {
                let Some(unit) = out.get(at + 2..at + 6).and_then(hex) else {
                    at += 2;
                    continue;
                };
                if (0xD800..0xDC00).contains(&unit) {
                    let low = (out.get(at + 6..at + 8) == Some(b"\\u"))
                        .then(|| out.get(at + 8..at + 12).and_then(hex))
                        .flatten();
                    if low.is_some_and(|low| (0xDC00..0xE000).contains(&low)) {
                        at += 12;
                        continue;
                    }
                }
                if (0xD800..0xE000).contains(&unit) {
                    out[at + 2..at + 6].copy_from_slice(b"fffd");
                    changed = true;
                }
                at += 6;
            }
            b'\\' => at += 2,
            0xED if out.get(at + 1).is_some_and(|b| (0xA0..=0xBF).contains(b))
                && out.get(at + 2).is_some_and(|b| (0x80..=0xBF).contains(b)) =>
            {
                out[at..at + 3].copy_from_slice("\u{FFFD}".as_bytes());
                changed = true;
                at += 3;
            }
            _ => at += 1,
        }
    }
    changed.then_some(out)
}

/// The frame's `id` as written, when it is an integer literal (one beyond 64 bits: serde_json
/// holds it as a float).
fn raw_integer(text: &[u8]) -> Option<Id> {
    #[derive(Deserialize)]
    struct IdOnly<'a> {
        #[serde(borrow)]
        id: &'a RawValue,
    }
    let only: IdOnly<'_> = serde_json::from_slice(text).ok()?;
    let digits = only.id.get();
    let unsigned = digits.strip_prefix('-').unwrap_or(digits);
    if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(Id::Raw(only.id.to_owned()))
}

/// The length the reference's `json.dumps` gives these UTF-8 bytes of compact JSON: it escapes
/// every character outside printable ASCII (`é` is six bytes, `\u00e9`, and a character
/// beyond the Basic Multilingual Plane twelve), so its frame limit counts those.
pub(crate) fn python_length(bytes: &[u8]) -> usize {
    bytes.len()
        + bytes
            .iter()
            .map(|&b| match b {
                0x7F => 5,
                0xC0..=0xDF => 4,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 8,
                _ => 0,
            })
            .sum::<usize>()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;

    fn request(line: &[u8]) -> Result<Request, FrameError> {
        super::request(line, &Budget::unlimited())
    }

    fn id_text(line: &str) -> String {
        let mut out = Vec::new();
        request(line.as_bytes()).unwrap().id.write(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn ids_go_back_as_python_writes_them() {
        assert_eq!(
            id_text(r#"{"id":123456789012345678901234567890}"#),
            "123456789012345678901234567890"
        );
        assert_eq!(
            id_text(r#"{"id":-98765432109876543210}"#),
            "-98765432109876543210"
        );
        assert_eq!(id_text(r#"{"id":1e16}"#), "1e+16");
        assert_eq!(id_text(r#"{"id":1.5}"#), "1.5");
        assert_eq!(id_text(r#"{"id":"x"}"#), r#""x""#);
        assert_eq!(id_text(r#"{"method":"m"}"#), "null");
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let read = request(b"\xEF\xBB\xBF{\"id\":1}\n").unwrap();
        assert_eq!(read.msg["id"], 1);
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let read =
            request(br#"{"a":"\ud800","b":"\udc00x","c":"\ud83d\ude00","d":"\\ud800"}"#).unwrap();
        assert_eq!(read.msg["a"], "\u{FFFD}");
        assert_eq!(read.msg["b"], "\u{FFFD}x");
        assert_eq!(read.msg["c"], "\u{1F600}");
        assert_eq!(read.msg["d"], "\\ud800");
        let read = request(b"{\"a\":\"\xED\xA0\x80\"}").unwrap();
        assert_eq!(read.msg["a"], "\u{FFFD}");
        assert!(request(b"{\"a\":\"\xFF\"}").is_err());
    }

    #[test]
    fn nesting_is_read_to_the_reference_s_depth() {
        let nested = |levels: usize| {
            format!(
                "{{\"a\":{}{}}}",
                "[".repeat(levels - 1),
                "]".repeat(levels - 1)
            )
        };
        assert!(request(nested(200).as_bytes()).is_ok());
        assert!(request(nested(MAX_DEPTH).as_bytes()).is_ok());
        assert!(request(nested(MAX_DEPTH + 1).as_bytes()).is_err());
    }

    #[test]
    fn a_frame_is_counted_at_what_it_costs_parsed() {
        let budget = Budget::new(4 << 20, 0);
        let zeros = format!("{{\"a\":[{}0]}}", "0,".repeat(10_000));
        let read = super::request(zeros.as_bytes(), &budget).unwrap();
        assert!(budget.used() > 10_000 * VALUE_COST, "{}", budget.used());
        drop(read);
        assert_eq!(budget.used(), 0);
        let text = format!("{{\"a\":\"{}\"}}", "x".repeat(100_000));
        let read = super::request(text.as_bytes(), &budget).unwrap();
        assert!(budget.used() < 101_000, "{}", budget.used());
        drop(read);
        let small = Budget::new(0, 0);
        assert!(super::request(br#"{"id":1}"#, &small).is_ok());
        let error = super::request(zeros.as_bytes(), &small).unwrap_err();
        assert!(matches!(error, FrameError::Busy { .. }), "{error}");
    }

    #[test]
    fn lengths_count_python_s_escapes() {
        assert_eq!(python_length("aé€😀\u{7f}".as_bytes()), 1 + 6 + 6 + 12 + 6);
    }
}
