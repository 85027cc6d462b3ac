//! Score values that are not numbers, read as numbers: Inspect AI's `value_to_float`
//! (`inspect_ai/scorer/_metric.py`), for letter-graded (`"C"`, `"I"`, `"P"`, `"N"`), yes/no and
//! string-valued scores.
//!
//! ```
//! use grader_eval::value::{value_to_float, ValueToFloat};
//! use serde_json::json;
//!
//! assert_eq!(value_to_float(&json!("C"))?, 1.0);
//! assert_eq!(value_to_float(&json!("P"))?, 0.5);
//! assert_eq!(value_to_float(&json!("Yes"))?, 1.0);
//! assert_eq!(value_to_float(&json!(" 2.5e-1 "))?, 0.25);
//! assert_eq!(value_to_float(&json!(true))?, 1.0);
//! assert!(value_to_float(&json!("maybe")).is_err()); // Inspect AI warns and reads 0.0
//!
//! // Other sentinels, as `value_to_float(correct="A", incorrect="F")`:
//! let letters = ValueToFloat::new().correct("A").incorrect("F");
//! assert_eq!(letters.convert(&json!("A"))?, 1.0);
//! assert_eq!(letters.convert(&json!("F"))?, 0.0);
//! # Ok::<(), grader_eval::value::NotAScore>(())
//! ```

use serde_json::{Number, Value};

use grader_core::text::pychar;

/// A value [`ValueToFloat`] cannot read as a number.
///
/// Inspect AI logs a warning ("Unable to convert value to float") and reads such a value as
/// 0.0; here it is an error, so that a score nobody could read never counts as a failure
/// silently.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "cannot read score value {value} as a number (not a number, a numeric string, yes/no, true/false or a sentinel)"
)]
pub struct NotAScore {
    /// The value, as given.
    pub value: Value,
}

/// Inspect AI's `value_to_float(correct, incorrect, partial, noanswer)`: the converter with its
/// four sentinels, `"C"`, `"I"`, `"P"` and `"N"` by default.
///
/// A value is read, in this order, as:
/// 1. 1.0 if it equals `correct`, 0.5 if it equals `partial`, 0.0 if it equals `incorrect` or
///    `noanswer`, with Python's `==` (so `true`, `1` and `1.0` are equal, and a numeric
///    sentinel maps numbers);
/// 2. the number itself for a number, 1.0 or 0.0 for a boolean;
/// 3. for a string, lowercased: 1.0 for `yes`/`true`, 0.0 for `no`/`false`, and otherwise its
///    value if Python's `float()` reads it as a finite number (surrounding whitespace,
///    `_` between digits, and any Unicode decimal digits allowed, as there);
/// 4. anything else (`null`, an array, an object, other text) is a [`NotAScore`] error.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueToFloat {
    correct: Value,
    incorrect: Value,
    partial: Value,
    noanswer: Value,
}

impl Default for ValueToFloat {
    fn default() -> Self {
        ValueToFloat {
            correct: Value::from("C"),
            incorrect: Value::from("I"),
            partial: Value::from("P"),
            noanswer: Value::from("N"),
        }
    }
}

impl ValueToFloat {
    /// The converter with Inspect AI's default sentinels (`"C"`, `"I"`, `"P"`, `"N"`).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The value read as 1.0.
    #[must_use]
    pub fn correct(mut self, value: impl Into<Value>) -> Self {
        self.correct = value.into();
        self
    }

    /// A value read as 0.0.
    #[must_use]
    pub fn incorrect(mut self, value: impl Into<Value>) -> Self {
        self.incorrect = value.into();
        self
    }

    /// The value read as 0.5.
    #[must_use]
    pub fn partial(mut self, value: impl Into<Value>) -> Self {
        self.partial = value.into();
        self
    }

    /// Another value read as 0.0 (a refusal to answer).
    #[must_use]
    pub fn noanswer(mut self, value: impl Into<Value>) -> Self {
        self.noanswer = value.into();
        self
    }

    /// Reads `value` as a number.
    ///
    /// # Errors
    /// [`NotAScore`] for a value none of the rules reads (Inspect AI: 0.0 and a warning).
    pub fn convert(&self, value: &Value) -> Result<f64, NotAScore> {
        if py_eq(value, &self.correct) {
            return Ok(1.0);
        }
        if py_eq(value, &self.partial) {
            return Ok(0.5);
        }
        if py_eq(value, &self.incorrect) || py_eq(value, &self.noanswer) {
            return Ok(0.0);
        }
        let read = match value {
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            Value::Number(n) => n.as_f64(),
            Value::String(text) => {
                let text = pychar::lower(text);
                match text.as_ref() {
                    "yes" | "true" => Some(1.0),
                    "no" | "false" => Some(0.0),
                    other => pychar::parse_float(other).filter(|x| x.is_finite()),
                }
            }
            _ => None,
        };
        read.ok_or_else(|| NotAScore {
            value: value.clone(),
        })
    }
}

/// [`ValueToFloat::convert`] with Inspect AI's default sentinels.
///
/// # Errors
/// [`NotAScore`] for a value it cannot read.
pub fn value_to_float(value: &Value) -> Result<f64, NotAScore> {
    ValueToFloat::default().convert(value)
}

/// Python's `==` between the values `json.loads` makes: numbers and booleans compare by
/// value (exactly, integers against floats too), strings by content, containers item by item.
fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| py_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, x)| y.get(key).is_some_and(|y| py_eq(x, y)))
        }
        (Value::Bool(_) | Value::Number(_), Value::Bool(_) | Value::Number(_)) => {
            numeric(a) == numeric(b)
        }
        _ => false,
    }
}

/// A number or boolean as Python compares it: an exact integer where it is one.
#[derive(PartialEq)]
enum Numeric {
    Int(i128),
    Float(f64),
}

fn numeric(value: &Value) -> Numeric {
    let of_number = |n: &Number| {
        if let Some(i) = n.as_i64() {
            Numeric::Int(i128::from(i))
        } else if let Some(u) = n.as_u64() {
            Numeric::Int(i128::from(u))
        } else {
            let x = n.as_f64().unwrap_or(f64::NAN);
            // A float equal to an integer compares as that integer (exactly, as Python does).
            if x.fract() == 0.0 && x.abs() < 1e38 {
                Numeric::Int(x as i128)
            } else {
                Numeric::Float(x)
            }
        }
    };
    match value {
        Value::Bool(b) => Numeric::Int(i128::from(*b)),
        Value::Number(n) => of_number(n),
        _ => Numeric::Float(f64::NAN),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn sentinels_first_then_numbers_then_strings() {
        let read = |v: Value| value_to_float(&v);
        assert_eq!(read(json!("C")), Ok(1.0));
        assert_eq!(read(json!("I")), Ok(0.0));
        assert_eq!(read(json!("N")), Ok(0.0));
        assert_eq!(read(json!("c")), Err(NotAScore { value: json!("c") }));
        assert_eq!(read(json!(false)), Ok(0.0));
        assert_eq!(read(json!(-3)), Ok(-3.0));
        assert_eq!(read(json!("NO")), Ok(0.0));
        assert_eq!(read(json!("1_000")), Ok(1000.0));
        assert_eq!(read(json!("\u{663}.\u{665}")), Ok(3.5));
        assert_eq!(read(json!("\u{2003}1\x0b")), Ok(1.0));
        for unit_separator in ["\x1c1", "1\x1f"] {
            assert!(read(json!(unit_separator)).is_err(), "{unit_separator:?}");
        }
        for bad in [
            json!(null),
            json!([1]),
            json!({"a": 1}),
            json!("inf"),
            json!("1__0"),
        ] {
            assert_eq!(read(bad.clone()), Err(NotAScore { value: bad }));
        }
    }

    #[test]
    fn numeric_sentinels_compare_as_python() {
        let ones = ValueToFloat::new().correct(1).incorrect(0.0);
        assert_eq!(ones.convert(&json!(true)), Ok(1.0));
        assert_eq!(ones.convert(&json!(1.0)), Ok(1.0));
        assert_eq!(ones.convert(&json!(0)), Ok(0.0));
        assert_eq!(ones.convert(&json!(0.5)), Ok(0.5)); // a number, not a sentinel
        let halves = ValueToFloat::new().partial(json!([1, "x"]));
        assert_eq!(halves.convert(&json!([1.0, "x"])), Ok(0.5));
        assert!(py_eq(
            &json!(9007199254740993_u64),
            &json!(9007199254740993_i64)
        ));
        assert!(!py_eq(
            &json!(9007199254740993_u64),
            &json!(9007199254740992.0)
        ));
    }
}
