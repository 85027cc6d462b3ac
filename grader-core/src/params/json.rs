//! JSON text written as `serde_json` writes it: strings, floats and whole values, appended to a
//! byte buffer.

use serde::ser;
use serde_json::Value;
use serde_json::ser::{CompactFormatter, Formatter as _};

/// A JSON string, as `serde_json` escapes it. Most strings need no escaping, and are copied
/// whole between their quotes.
pub(super) fn write_str(out: &mut Vec<u8>, text: &str) {
    if needs_escaping(text.as_bytes()) {
        // Writing to a `Vec` cannot fail.
        let _ = ser::Serializer::serialize_str(&mut serde_json::Serializer::new(out), text);
        return;
    }
    out.reserve(text.len() + 2);
    out.push(b'"');
    out.extend_from_slice(text.as_bytes());
    out.push(b'"');
}

/// A float, as `serde_json` writes it (`null` when it is not finite). A whole number below
/// 10¹⁵ in magnitude (a score of 0 or 1, a count) is written as its digits and `.0`, as
/// `serde_json` writes it, without the general shortest-representation algorithm.
pub fn write_f64(out: &mut Vec<u8>, v: f64) {
    const LIMIT: f64 = 1e15;
    if !v.is_finite() {
        out.extend_from_slice(b"null");
        return;
    }
    if v.abs() < LIMIT {
        // Exact: every whole number below the limit is an `i64`, and converts back unchanged.
        #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
        let whole = v as i64;
        #[allow(clippy::cast_precision_loss, clippy::float_cmp)]
        if whole as f64 == v && !(whole == 0 && v.is_sign_negative()) {
            fmt_ok(CompactFormatter.write_i64(out, whole));
            out.extend_from_slice(b".0");
            return;
        }
    }
    fmt_ok(CompactFormatter.write_f64(out, v));
}

/// Whether any byte is one serde_json escapes: a control character below 0x20, `"` or `\`.
/// (serde_json writes everything else, DEL and non-ASCII included, as it is.)
pub fn needs_escaping(bytes: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    /// A byte of `x` is zero: the classic test, exact when used only to say whether any is.
    fn has_zero(x: u64) -> bool {
        x.wrapping_sub(ONES) & !x & HIGHS != 0
    }
    /// A byte of `x` is below 0x20 (exact for any, as `has_zero`).
    fn has_below_space(x: u64) -> bool {
        x.wrapping_sub(ONES * 0x20) & !x & HIGHS != 0
    }
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0_u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_ne_bytes(word);
        if has_below_space(x)
            || has_zero(x ^ (ONES * u64::from(b'"')))
            || has_zero(x ^ (ONES * u64::from(b'\\')))
        {
            return true;
        }
    }
    let rest = chunks.remainder();
    if rest.is_empty() {
        return false;
    }
    // The last bytes, padded with spaces (which need no escaping) to a word.
    let mut word = [b' '; 8];
    word[..rest.len()].copy_from_slice(rest);
    let x = u64::from_ne_bytes(word);
    has_below_space(x)
        || has_zero(x ^ (ONES * u64::from(b'"')))
        || has_zero(x ^ (ONES * u64::from(b'\\')))
}

/// A JSON value, as `serde_json` writes it.
pub(super) fn write_value(out: &mut Vec<u8>, value: &Value) {
    // A JSON value always serializes, and writing to a `Vec` cannot fail.
    let _ = serde_json::to_writer(out, value);
}

/// The formatter's writes go to a `Vec`, which cannot fail.
pub(super) fn fmt_ok(_: std::io::Result<()>) {}
