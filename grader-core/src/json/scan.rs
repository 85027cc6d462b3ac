//! A JSON validator without recursion: the grammar `JSON.parse` accepts (ECMA-404: the four
//! whitespace characters, no trailing commas, no comments, any `\u` escape including lone
//! surrogates), with the nesting kept on a heap stack of one byte per level, so a document
//! nested a million deep is read in linear time without touching the call stack.

/// Why a scan stopped without a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The text is not JSON; the byte where that became certain.
    Invalid(usize),
    /// The value did not end within the allowed number of bytes.
    TooLong,
}

/// A value that was read: where it ends and how deeply it nests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scanned {
    pub(crate) end: usize,
    pub(crate) depth: usize,
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// Reads one JSON value starting exactly at `start` (no leading whitespace), reading no byte
/// at or past `start + max_len`.
pub(crate) fn scan_value(text: &str, start: usize, max_len: usize) -> Result<Scanned, Stop> {
    let limit = text.len().min(start.saturating_add(max_len));
    let bytes = &text.as_bytes()[..limit];
    let truncated = limit < text.len();
    let stop = |at: usize| {
        if at >= limit && truncated {
            Stop::TooLong
        } else {
            Stop::Invalid(at)
        }
    };
    let mut stack: Vec<u8> = Vec::new();
    let mut depth = 0;
    let mut at = start;
    // Expecting a value at `at` (after whitespace when inside a container).
    'value: loop {
        match bytes.get(at) {
            Some(b'{') => {
                stack.push(b'{');
                depth = depth.max(stack.len());
                at = skip_ws(bytes, at + 1);
                if bytes.get(at) == Some(&b'}') {
                    stack.pop();
                    at += 1;
                } else {
                    at = key(bytes, at).map_err(stop)?;
                    continue 'value;
                }
            }
            Some(b'[') => {
                stack.push(b'[');
                depth = depth.max(stack.len());
                at = skip_ws(bytes, at + 1);
                if bytes.get(at) == Some(&b']') {
                    stack.pop();
                    at += 1;
                } else {
                    continue 'value;
                }
            }
            Some(b'"') => at = string(bytes, at).map_err(stop)?,
            Some(b't') => at = literal(bytes, at, b"true").map_err(stop)?,
            Some(b'f') => at = literal(bytes, at, b"false").map_err(stop)?,
            Some(b'n') => at = literal(bytes, at, b"null").map_err(stop)?,
            Some(b'-' | b'0'..=b'9') => at = number(bytes, at).map_err(stop)?,
            _ => return Err(stop(at)),
        }
        // After a value: close containers or go on to the next element.
        loop {
            let Some(&open) = stack.last() else {
                return Ok(Scanned { end: at, depth });
            };
            at = skip_ws(bytes, at);
            match (open, bytes.get(at)) {
                (b'{', Some(b',')) => {
                    at = key(bytes, skip_ws(bytes, at + 1)).map_err(stop)?;
                    continue 'value;
                }
                (b'[', Some(b',')) => {
                    at = skip_ws(bytes, at + 1);
                    continue 'value;
                }
                (b'{', Some(b'}')) | (b'[', Some(b']')) => {
                    stack.pop();
                    at += 1;
                }
                _ => return Err(stop(at)),
            }
        }
    }
}

/// A key and its colon at `at`; returns where the value starts (after whitespace).
fn key(bytes: &[u8], at: usize) -> Result<usize, usize> {
    if bytes.get(at) != Some(&b'"') {
        return Err(at);
    }
    let at = skip_ws(bytes, string(bytes, at)?);
    if bytes.get(at) != Some(&b':') {
        return Err(at);
    }
    Ok(skip_ws(bytes, at + 1))
}

/// A string starting with its quote at `at`; returns the byte after the closing quote.
fn string(bytes: &[u8], mut at: usize) -> Result<usize, usize> {
    at += 1;
    loop {
        match bytes.get(at) {
            None => return Err(at),
            Some(b'"') => return Ok(at + 1),
            Some(b'\\') => match bytes.get(at + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => at += 2,
                Some(b'u') => {
                    for i in 0..4 {
                        if !bytes.get(at + 2 + i).is_some_and(u8::is_ascii_hexdigit) {
                            return Err(at + 2 + i);
                        }
                    }
                    at += 6;
                }
                _ => return Err(at + 1),
            },
            Some(&c) if c < 0x20 => return Err(at),
            Some(_) => at += 1,
        }
    }
}

/// `true`, `false` or `null` at `at`; a prefix of one cut by the end of `bytes` fails at the
/// end (so that a limit reads as one).
fn literal(bytes: &[u8], at: usize, word: &[u8]) -> Result<usize, usize> {
    let end = at + word.len();
    match bytes.get(at..end) {
        Some(found) if found == word => Ok(end),
        None if word.starts_with(&bytes[at..]) => Err(bytes.len()),
        _ => Err(at),
    }
}

/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` at `at`.
fn number(bytes: &[u8], mut at: usize) -> Result<usize, usize> {
    let digits = |at: usize| {
        let mut end = at;
        while bytes.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        end
    };
    if bytes.get(at) == Some(&b'-') {
        at += 1;
    }
    match bytes.get(at) {
        Some(b'0') => at += 1,
        Some(b'1'..=b'9') => at = digits(at),
        _ => return Err(at),
    }
    if bytes.get(at) == Some(&b'.') {
        let end = digits(at + 1);
        if end == at + 1 {
            return Err(end);
        }
        at = end;
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let end = digits(at);
        if end == at {
            return Err(end);
        }
        at = end;
    }
    Ok(at)
}

/// Whether the whole of `text` is one JSON value with optional whitespace around it:
/// `JSON.parse(text)` succeeds. Returns the value's depth.
pub(crate) fn whole(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let start = skip_ws(bytes, 0);
    let scanned = scan_value(text, start, usize::MAX).ok()?;
    (skip_ws(bytes, scanned.end) == bytes.len()).then_some(scanned.depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_grammar() {
        for ok in [
            "0",
            "-0",
            "1.5e-3",
            "\"a\\u00e9\\ud800\"",
            "[]",
            "{}",
            " [1, {\"a\": [null, true]}] ",
            "{\"a\":1,\"a\":2}",
        ] {
            assert!(whole(ok).is_some(), "{ok}");
        }
        for bad in [
            "",
            "01",
            "1.",
            ".5",
            "+1",
            "[1,]",
            "{\"a\"}",
            "{a:1}",
            "'a'",
            "\"\t\"",
            "[1] x",
            "NaN",
            "\u{a0}1",
            "{\"a\":1,}",
            "tru",
            "1e",
            "\"\\x\"",
        ] {
            assert!(whole(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn depth_is_counted_without_recursion() {
        let deep = "[".repeat(1_000_000) + &"]".repeat(1_000_000);
        assert_eq!(whole(&deep), Some(1_000_000));
        assert_eq!(whole(&deep[1..]), None);
    }

    #[test]
    fn a_value_may_stop_at_a_limit() {
        assert_eq!(
            scan_value("{\"a\": 1} rest", 0, 8),
            Ok(Scanned { end: 8, depth: 1 })
        );
        assert_eq!(scan_value("{\"a\": 1} rest", 0, 5), Err(Stop::TooLong));
        assert_eq!(scan_value("{\"a\" 1}", 0, 100), Err(Stop::Invalid(5)));
    }
}
