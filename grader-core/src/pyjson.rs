//! JSON as Python's `json.loads` reads it, and Python's `str()` and `repr()` of what it
//! returns: what the reference does with a judge reply that holds a JSON object, and how its
//! error messages print the values they quote.
//!
//! `json.loads` is not `serde_json`: it accepts `NaN`, `Infinity` and `-Infinity`, reads a
//! number without a fraction or exponent as an integer of any size (refusing more than 4 300
//! digits, CPython's limit on integer strings), reads `1e400` as `inf`, keeps an object's keys in
//! the order they first appear with the last value given, and fails on control characters inside
//! strings. The reference prints an explanation with `str()`, so `NaN` reads `nan` and
//! `12345678901234567890123` keeps every digit.
//!
//! One difference: a `\ud800`-style escape of a lone surrogate, which Python keeps as is, becomes
//! U+FFFD here (a Rust string cannot hold it).

// The reader serves the judge (feature `judge`); the printers serve everyone.
#![cfg_attr(not(feature = "judge"), allow(dead_code))]

use serde_json::Value;

/// A value as `json.loads` returns it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PyValue {
    /// `None`.
    None,
    /// `True` or `False`.
    Bool(bool),
    /// An `int`, as its decimal digits (with a `-` when negative, never `-0`).
    Int(String),
    /// A `float`.
    Float(f64),
    /// A `str`.
    Str(String),
    /// A `list`.
    List(Vec<PyValue>),
    /// A `dict`: keys in the order they first appear, each with its last value.
    Dict(Vec<(String, PyValue)>),
}

/// Why `json.loads` would not return a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LoadError {
    /// Python raises `ValueError` (`JSONDecodeError`, or an integer over the digit limit).
    Invalid,
    /// Nested deeper than [`MAX_DEPTH`]; Python raises `RecursionError` near 1 000 levels.
    TooDeep,
}

/// How deep arrays and objects may nest.
pub(crate) const MAX_DEPTH: usize = 512;

/// CPython's default limit on the digits of an integer read from a string.
const MAX_INT_DIGITS: usize = 4300;

/// `json.loads(text)`.
pub(crate) fn loads(text: &str) -> Result<PyValue, LoadError> {
    let mut parser = Parser {
        bytes: text.as_bytes(),
        text,
        at: 0,
        depth: 0,
    };
    parser.skip_space();
    let value = parser.value()?;
    parser.skip_space();
    if parser.at == parser.bytes.len() {
        Ok(value)
    } else {
        Err(LoadError::Invalid)
    }
}

struct Parser<'a> {
    bytes: &'a [u8],
    text: &'a str,
    at: usize,
    depth: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while matches!(self.bytes.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, literal: &str) -> bool {
        if self.bytes[self.at..].starts_with(literal.as_bytes()) {
            self.at += literal.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<PyValue, LoadError> {
        match self.bytes.get(self.at) {
            Some(b'{') => self.nested(Self::dict),
            Some(b'[') => self.nested(Self::list),
            Some(b'"') => self.string().map(PyValue::Str),
            Some(b'n') if self.eat("null") => Ok(PyValue::None),
            Some(b't') if self.eat("true") => Ok(PyValue::Bool(true)),
            Some(b'f') if self.eat("false") => Ok(PyValue::Bool(false)),
            Some(b'N') if self.eat("NaN") => Ok(PyValue::Float(f64::NAN)),
            Some(b'I') if self.eat("Infinity") => Ok(PyValue::Float(f64::INFINITY)),
            Some(b'-') if self.eat("-Infinity") => Ok(PyValue::Float(f64::NEG_INFINITY)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(LoadError::Invalid),
        }
    }

    fn nested(
        &mut self,
        read: fn(&mut Self) -> Result<PyValue, LoadError>,
    ) -> Result<PyValue, LoadError> {
        if self.depth >= MAX_DEPTH {
            return Err(LoadError::TooDeep);
        }
        self.depth += 1;
        let value = read(self);
        self.depth -= 1;
        value
    }

    fn dict(&mut self) -> Result<PyValue, LoadError> {
        self.at += 1; // `{`
        let mut pairs: Vec<(String, PyValue)> = Vec::new();
        self.skip_space();
        if self.eat("}") {
            return Ok(PyValue::Dict(pairs));
        }
        loop {
            if self.bytes.get(self.at) != Some(&b'"') {
                return Err(LoadError::Invalid);
            }
            let key = self.string()?;
            self.skip_space();
            if !self.eat(":") {
                return Err(LoadError::Invalid);
            }
            self.skip_space();
            let value = self.value()?;
            match pairs.iter_mut().find(|(k, _)| *k == key) {
                Some(pair) => pair.1 = value,
                None => pairs.push((key, value)),
            }
            self.skip_space();
            if self.eat("}") {
                return Ok(PyValue::Dict(pairs));
            }
            if !self.eat(",") {
                return Err(LoadError::Invalid);
            }
            self.skip_space();
        }
    }

    fn list(&mut self) -> Result<PyValue, LoadError> {
        self.at += 1; // `[`
        let mut items = Vec::new();
        self.skip_space();
        if self.eat("]") {
            return Ok(PyValue::List(items));
        }
        loop {
            items.push(self.value()?);
            self.skip_space();
            if self.eat("]") {
                return Ok(PyValue::List(items));
            }
            if !self.eat(",") {
                return Err(LoadError::Invalid);
            }
            self.skip_space();
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`: an `int` without fraction and
    /// exponent, a `float` otherwise.
    fn number(&mut self) -> Result<PyValue, LoadError> {
        let start = self.at;
        let digits = |parser: &mut Self| {
            let from = parser.at;
            while parser.bytes.get(parser.at).is_some_and(u8::is_ascii_digit) {
                parser.at += 1;
            }
            parser.at - from
        };
        let negative = self.eat("-");
        let int_start = self.at;
        match self.bytes.get(self.at) {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return Err(LoadError::Invalid),
        }
        let int_digits = self.at - int_start;
        let mut is_float = false;
        if self.bytes.get(self.at) == Some(&b'.')
            && self.bytes.get(self.at + 1).is_some_and(u8::is_ascii_digit)
        {
            self.at += 1;
            digits(self);
            is_float = true;
        }
        if matches!(self.bytes.get(self.at), Some(b'e' | b'E')) {
            let mark = self.at;
            self.at += 1;
            if matches!(self.bytes.get(self.at), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if digits(self) == 0 {
                self.at = mark; // not an exponent: the number ends before the `e`
            } else {
                is_float = true;
            }
        }
        let text = &self.text[start..self.at];
        if is_float {
            return text
                .parse::<f64>()
                .map(PyValue::Float)
                .map_err(|_| LoadError::Invalid);
        }
        if int_digits > MAX_INT_DIGITS {
            return Err(LoadError::Invalid);
        }
        let magnitude = &self.text[int_start..self.at];
        Ok(PyValue::Int(if negative && magnitude != "0" {
            format!("-{magnitude}")
        } else {
            magnitude.to_owned()
        }))
    }

    /// A string literal; strict, as `json.loads` is by default: no control characters.
    fn string(&mut self) -> Result<String, LoadError> {
        self.at += 1; // `"`
        let mut out = String::new();
        loop {
            let rest = &self.text[self.at..];
            let plain = rest
                .find(|c: char| c == '"' || c == '\\' || c < ' ')
                .ok_or(LoadError::Invalid)?;
            out.push_str(&rest[..plain]);
            self.at += plain;
            match self.bytes[self.at] {
                b'"' => {
                    self.at += 1;
                    return Ok(out);
                }
                b'\\' => {
                    self.at += 1;
                    self.escape(&mut out)?;
                }
                _ => return Err(LoadError::Invalid),
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), LoadError> {
        let c = *self.bytes.get(self.at).ok_or(LoadError::Invalid)?;
        self.at += 1;
        let simple = match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4()?;
                let code = if (0xd800..0xdc00).contains(&unit)
                    && self.bytes[self.at..].starts_with(b"\\u")
                {
                    let mark = self.at;
                    self.at += 2;
                    let low = self.hex4()?;
                    if (0xdc00..0xe000).contains(&low) {
                        0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)
                    } else {
                        self.at = mark; // not a pair: the next escape stands alone
                        unit
                    }
                } else {
                    unit
                };
                char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
            }
            _ => return Err(LoadError::Invalid),
        };
        out.push(simple);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, LoadError> {
        let digits = self
            .bytes
            .get(self.at..self.at + 4)
            .ok_or(LoadError::Invalid)?;
        let mut value = 0;
        for &d in digits {
            value = value * 16 + char::from(d).to_digit(16).ok_or(LoadError::Invalid)?;
        }
        self.at += 4;
        Ok(value)
    }
}

impl PyValue {
    /// `dict.get(key)`; `None` for anything but a dict.
    pub(crate) fn get(&self, key: &str) -> Option<&PyValue> {
        match self {
            PyValue::Dict(pairs) => pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Python's `str()`: a string as itself, anything else as its `repr()`.
    pub(crate) fn to_py_str(&self) -> String {
        match self {
            PyValue::Str(text) => text.clone(),
            other => other.repr(),
        }
    }

    /// Python's `repr()`.
    pub(crate) fn repr(&self) -> String {
        match self {
            PyValue::None => "None".to_owned(),
            PyValue::Bool(true) => "True".to_owned(),
            PyValue::Bool(false) => "False".to_owned(),
            PyValue::Int(digits) => digits.clone(),
            PyValue::Float(x) => py_float(*x),
            PyValue::Str(text) => py_str_repr(text),
            PyValue::List(items) => {
                let items: Vec<String> = items.iter().map(PyValue::repr).collect();
                format!("[{}]", items.join(", "))
            }
            PyValue::Dict(pairs) => {
                let items: Vec<String> = pairs
                    .iter()
                    .map(|(key, value)| format!("{}: {}", py_str_repr(key), value.repr()))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
        }
    }
}

impl From<&Value> for PyValue {
    /// The value Python would hold for this JSON: integers stay integers.
    fn from(value: &Value) -> Self {
        match value {
            Value::Null => PyValue::None,
            Value::Bool(b) => PyValue::Bool(*b),
            Value::Number(number) => match number.as_f64() {
                Some(x) if number.is_f64() => PyValue::Float(x),
                _ => PyValue::Int(number.to_string()),
            },
            Value::String(text) => PyValue::Str(text.clone()),
            Value::Array(items) => PyValue::List(items.iter().map(PyValue::from).collect()),
            Value::Object(map) => PyValue::Dict(
                map.iter()
                    .map(|(k, v)| (k.clone(), PyValue::from(v)))
                    .collect(),
            ),
        }
    }
}

/// Python's `repr(float)`: the shortest digits that read back, in fixed notation for
/// exponents from -4 to 15 and scientific (`1e+16`, `1.5e-05`) otherwise; `nan`, `inf`, `-inf`.
#[must_use]
pub fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_owned();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    let scientific = format!("{:e}", x.abs());
    let (mantissa, exponent) = scientific
        .split_once('e')
        .unwrap_or((scientific.as_str(), "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let digits = half_to_even(x.abs(), digits, exponent);
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if !(-4..16).contains(&exponent) {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        return format!("{sign}{first}{fraction}e{exp_sign}{:02}", exponent.abs());
    }
    let point = exponent + 1; // digits before the decimal point
    if point <= 0 {
        let zeros = "0".repeat(usize::try_from(-point).unwrap_or(0));
        return format!("{sign}0.{zeros}{digits}");
    }
    let point = usize::try_from(point).unwrap_or(0);
    if digits.len() <= point {
        format!("{sign}{digits}{}.0", "0".repeat(point - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..point], &digits[point..])
    }
}

/// Where `x` lies exactly halfway between two shortest digit strings that both read back as
/// it, Rust's shortest formatting rounds the tie up and Python's `repr` rounds it to the even
/// digit: the digits Python prints. `digits` are Rust's, with `exponent` the power of ten of
/// the first.
fn half_to_even(x: f64, digits: String, exponent: i32) -> String {
    if !digits.ends_with(['1', '3', '5', '7', '9']) {
        return digits; // an even last digit is already Python's choice
    }
    // The exact value's digits: every double's decimal expansion ends within 1 100 places.
    let exact = format!("{x:.1100e}");
    let Some((mantissa, exact_exponent)) = exact.split_once('e') else {
        return digits;
    };
    if exact_exponent.parse::<i32>().ok() != Some(exponent) {
        return digits;
    }
    let exact: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exact = exact.trim_end_matches('0');
    let n = digits.len();
    if exact.len() != n + 1 || !exact.ends_with('5') {
        return digits;
    }
    // A tie between `below` (the exact digits cut) and the string one above it.
    let below = &exact[..n];
    let even = if below.ends_with(['0', '2', '4', '6', '8']) {
        below.to_owned()
    } else {
        let mut bytes = below.as_bytes().to_vec();
        let Some(last) = bytes.last_mut() else {
            return digits;
        };
        if *last == b'9' {
            return digits; // a carry would make a shorter string: not a tie of this length
        }
        *last += 1;
        String::from_utf8(bytes).unwrap_or_else(|_| digits.clone())
    };
    let reads_back = format!("{}.{}e{exponent}", &even[..1], &even[1..])
        .parse::<f64>()
        .is_ok_and(|y| y == x);
    if reads_back { even } else { digits }
}

/// Python's `str()` of the value `json.loads` makes of this JSON: a string as itself, anything
/// else as its `repr()` (an integer with all its digits).
///
/// ```
/// use grader_core::pyjson::{py_repr, py_str};
///
/// assert_eq!(py_str(&serde_json::json!("it's")), "it's");
/// assert_eq!(py_repr(&serde_json::json!(["it's", null, 1.0])), "[\"it's\", None, 1.0]");
/// ```
#[must_use]
pub fn py_str(value: &Value) -> String {
    PyValue::from(value).to_py_str()
}

/// Python's `repr()` of the value `json.loads` makes of this JSON.
#[must_use]
pub fn py_repr(value: &Value) -> String {
    PyValue::from(value).repr()
}

/// Python's `repr(str)`: single quotes unless the text has a `'` and no `"`; backslash escapes
/// for the quote, backslashes, control characters and other unprintable characters.
#[must_use]
pub fn py_str_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if u32::from(c) < 0x20 || (0x7f..0xa1).contains(&u32::from(c)) => {
                out.push_str(&format!("\\x{:02x}", u32::from(c)));
            }
            c if !c.is_ascii() && !is_printable(c) => {
                let code = u32::from(c);
                if code <= 0xffff {
                    out.push_str(&format!("\\u{code:04x}"));
                } else {
                    out.push_str(&format!("\\U{code:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Python's `str.isprintable()` for a non-ASCII character, approximately: not a separator
/// other than the space, not a format or control character. (Unassigned code points, which
/// Python also escapes, are kept.)
fn is_printable(c: char) -> bool {
    !(c.is_control()
        || (c.is_whitespace() && c != ' ')
        || matches!(u32::from(c), 0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x180e
            | 0x200b..=0x200f | 0x202a..=0x202e | 0x2060..=0x2064 | 0x2066..=0x206f
            | 0xfeff | 0xfff9..=0xfffb | 0xe000..=0xf8ff | 0xf0000..))
}
