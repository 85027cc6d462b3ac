//! What JSON text costs once parsed: a bound on the memory `serde_json::Value` takes for it,
//! counted from the text alone, before parsing it, so that a reader can refuse a line or a
//! frame that would take more than it may hold.
//!
//! The text's bytes are not what bounds it: a value takes about 140 bytes in a `Value` (80 for
//! the value with ordered maps, and the slack of the vector or map holding it while it grows),
//! so 60 MB of tiny numbers (`[0,0,0,…]`, 30 million values) took 4.2 GB to parse, where 60 MB
//! of text in one string takes 60 MB. [`parsed_cost`] counts the text's bytes and
//! [`VALUE_COST`] for each value in it. The environment server (`grader-env`) counts every
//! large frame with it against its budget of buffered bytes, and the `grader` command
//! (`grader-cli`) refuses a line beyond its `--max-parsed` budget with [`check`].
//!
//! ```
//! use grader_core::cost::{VALUE_COST, check, parsed_cost};
//!
//! // A string costs about its length; many small values cost far more than theirs.
//! let text = format!("{{\"stdout\":\"{}\"}}", "x".repeat(10_000));
//! assert!(parsed_cost(text.as_bytes()) < 10_500);
//! let zeros = format!("[{}0]", "0,".repeat(10_000));
//! assert!(parsed_cost(zeros.as_bytes()) > 10_000 * VALUE_COST);
//!
//! let error = check(zeros.as_bytes(), 1 << 20).unwrap_err();
//! assert_eq!(error.budget, 1 << 20);
//! assert!(error.to_string().contains("10002 values"), "{error}");
//! assert!(check(text.as_bytes(), 1 << 20).is_ok());
//! ```

/// What one JSON value may cost once parsed, at most, beyond its text: the `Value` itself (80
/// bytes with ordered maps) with the slack of the vector or map that holds it while it grows
/// (measured: a 16 MiB array of zeros peaks at 1.2 GB, 140 bytes an element).
pub const VALUE_COST: usize = 160;

/// An upper bound of what the JSON text `bytes` costs once parsed into a `serde_json::Value`:
/// its bytes and [`VALUE_COST`] for each value in it (counted by the openings of arrays and
/// objects and the commas between elements, outside strings). The count is one pass over the
/// bytes, with no allocation; it is an upper bound for any JSON text, valid or not.
#[must_use]
pub fn parsed_cost(bytes: &[u8]) -> usize {
    bytes
        .len()
        .saturating_add(values(bytes).saturating_mul(VALUE_COST))
}

/// How many values the JSON text holds, at most: one, and one more for each opening of an
/// array or object and each comma outside strings.
#[must_use]
pub fn values(bytes: &[u8]) -> usize {
    let (mut values, mut in_string, mut escaped) = (1usize, false, false);
    for &byte in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
        } else {
            match byte {
                b'"' => in_string = true,
                b'[' | b'{' | b',' => values += 1,
                _ => {}
            }
        }
    }
    values
}

/// JSON text that would cost more than a reader's budget once parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "{cost} bytes once parsed ({values} values in {bytes} bytes of JSON), more than the budget \
     of {budget} bytes"
)]
pub struct CostError {
    /// What it would cost parsed ([`parsed_cost`]).
    pub cost: usize,
    /// How many values it holds, at most ([`values`]).
    pub values: usize,
    /// Its length in bytes.
    pub bytes: usize,
    /// The budget it passes.
    pub budget: usize,
}

/// Whether `bytes` costs at most `budget` once parsed ([`parsed_cost`]): `Ok` without counting
/// when even a value per byte would fit (any line under 1.6 MB for a budget of 256 MiB), so that
/// the count costs nothing on the lines that could never pass it.
///
/// # Errors
/// [`CostError`] when the cost passes the budget.
pub fn check(bytes: &[u8], budget: usize) -> Result<(), CostError> {
    if bytes.len().saturating_mul(VALUE_COST + 1) <= budget {
        return Ok(());
    }
    let values = values(bytes);
    let cost = bytes
        .len()
        .saturating_add(values.saturating_mul(VALUE_COST));
    if cost > budget {
        return Err(CostError {
            cost,
            values,
            bytes: bytes.len(),
            budget,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_outside_strings_are_counted() {
        assert_eq!(values(b"1"), 1);
        assert_eq!(values(br#"{"a":[1,2,3]}"#), 5);
        // Separators inside strings, escaped quotes included, are text.
        assert_eq!(values(br#"["a,b,[c]", "d\",{e"]"#), 3);
        assert_eq!(values(b""), 1);
    }

    #[test]
    fn a_line_that_cannot_pass_the_budget_is_not_counted_and_one_that_can_is() {
        // 100 values in 200 bytes: under a budget of 200 × 161 bytes without counting.
        let zeros = "0,".repeat(100);
        assert!(check(zeros.as_bytes(), 200 * (VALUE_COST + 1)).is_ok());
        // The same under a budget it passes once counted.
        assert!(check(zeros.as_bytes(), 100 * VALUE_COST).is_err());
        // A string of the same size costs about its length: within a budget a little over it.
        let text = format!("\"{}\"", "x".repeat(198));
        assert!(check(text.as_bytes(), 200 + 2 * VALUE_COST).is_ok());
    }

    #[test]
    fn the_cost_never_overflows() {
        assert_eq!(parsed_cost(&[b','; 64]), 64 + 65 * VALUE_COST);
        let error = check(b"[0,0]", 10).expect_err("over the budget");
        assert_eq!((error.values, error.bytes), (3, 5));
    }
}
