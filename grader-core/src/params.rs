//! Recording a grader's arguments as JSON under `_parameters`.
//!
//! A value with a JSON form (anything that implements `serde::Serialize`) is recorded as that
//! JSON; one without becomes the string `"<TypeName: not serializable>"`, as the reference
//! records it. Non-finite floats become `null`. Recording never fails a grade: a value whose
//! serialization fails at run time (a map whose keys are not strings, say) gets the placeholder.
//!
//! `#[grader]` records every parameter with these functions; a hand-written
//! [`Grader`](crate::Grader) can call them from its
//! [`parameters`](crate::Grader::parameters):
//!
//! ```
//! use grader_core::params::{json_safe, placeholder};
//!
//! assert_eq!(json_safe(&vec![1.0, f64::NAN], "Vec<f64>"), serde_json::json!([1.0, null]));
//! assert_eq!(placeholder("Client"), "<Client: not serializable>");
//! ```
//!
//! # As text
//!
//! A grading records the parameters as JSON text, with
//! [`write_parameters`](crate::Grader::write_parameters) into a [`ParametersWriter`], and
//! keeps that text until the subscore is written out, so that recording costs no map, no
//! [`Value`] and no allocation per value. The writer records each value as the JSON text of
//! what [`json_safe`] or [`placeholder`] returns, byte for byte:
//!
//! ```
//! use grader_core::params::ParametersWriter;
//!
//! let mut params = ParametersWriter::new();
//! params.record("scores", &vec![1.5, f64::INFINITY], "Vec<f64>");
//! params.record("note", "tab\there", "str");
//! params.record_placeholder("client", "Client");
//! assert_eq!(
//!     params.into_string(),
//!     r#"{"scores":[1.5,null],"note":"tab\there","client":"<Client: not serializable>"}"#,
//! );
//! ```

use std::collections::HashSet;
use std::fmt;
use std::hash::BuildHasher as _;

use foldhash::fast::FixedState;

use serde::Serialize;
use serde::ser::{self, Impossible};
use serde_json::Value;
use serde_json::ser::{CompactFormatter, Formatter as _};

/// The key under which a grade records its grader's arguments in the subscore's info.
pub const PARAMETERS_KEY: &str = "_parameters";

/// The JSON form of `value`, or the placeholder for `type_name` if serializing it fails.
pub fn json_safe<T: Serialize + ?Sized>(value: &T, type_name: &str) -> Value {
    serde_json::to_value(value).unwrap_or_else(|_| placeholder(type_name))
}

/// The string recorded for a value with no JSON form: `"<TypeName: not serializable>"`.
#[must_use]
pub fn placeholder(type_name: &str) -> Value {
    Value::String(format!("<{type_name}: not serializable>"))
}

/// A grader's parameters being written as the JSON text of an object, for
/// [`Grader::write_parameters`](crate::Grader::write_parameters): each key with the JSON of
/// its value, in the order recorded. What it holds is always a JSON object.
///
/// ```
/// use grader_core::params::{ParametersWriter, json_safe};
///
/// let mut params = ParametersWriter::new();
/// params.record("tolerance", &0.5, "f64");
/// params.record_json("expected", &json_safe(&[1, 2], "[i32; 2]"));
/// assert_eq!(params.into_string(), r#"{"tolerance":0.5,"expected":[1,2]}"#);
/// ```
#[derive(Clone)]
pub struct ParametersWriter {
    /// The object so far, without its closing brace.
    out: Vec<u8>,
}

impl fmt::Debug for ParametersWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ParametersWriter")
            .field(&String::from_utf8_lossy(&self.out))
            .finish()
    }
}

impl Default for ParametersWriter {
    fn default() -> Self {
        ParametersWriter::new()
    }
}

impl ParametersWriter {
    /// An empty object.
    #[must_use]
    pub fn new() -> Self {
        let mut out = Vec::with_capacity(128);
        out.push(b'{');
        ParametersWriter { out }
    }

    /// Records `value` under `key` as the JSON text of [`json_safe`]`(value, type_name)`,
    /// without building that [`Value`].
    ///
    /// The value is written as it serializes. Where writing it directly could differ from
    /// going through a [`Value`] (a map that gives a key twice, which a [`Value`] keeps once;
    /// a `serde_json` raw value, which a [`Value`] reformats) or serializing fails, what was
    /// written is taken back and the value goes through [`json_safe`] instead, so the text is
    /// always the same; such a value's `Serialize` then runs twice.
    pub fn record<T: Serialize + ?Sized>(&mut self, key: &str, value: &T, type_name: &str) {
        self.key(key);
        write_json_safe(&mut self.out, value, type_name);
    }

    /// Records the [`placeholder`] for `type_name` under `key`.
    pub fn record_placeholder(&mut self, key: &str, type_name: &str) {
        self.key(key);
        write_placeholder(&mut self.out, type_name);
    }

    /// Records `value` under `key`.
    pub fn record_json(&mut self, key: &str, value: &Value) {
        self.key(key);
        write_value(&mut self.out, value);
    }

    /// The object's JSON text.
    #[must_use]
    pub fn into_string(self) -> String {
        let out = self.into_bytes();
        // Only strings and JSON's own ASCII are ever written, so this is text.
        String::from_utf8(out)
            .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
    }

    /// The object's JSON text as bytes (UTF-8).
    pub(crate) fn into_bytes(mut self) -> Vec<u8> {
        self.out.push(b'}');
        self.out
    }

    /// A comma unless this is the first key, then `key` and a colon.
    fn key(&mut self, key: &str) {
        self.comma();
        write_str(&mut self.out, key);
        self.out.push(b':');
    }

    fn comma(&mut self) {
        if self.out.len() > 1 {
            self.out.push(b',');
        }
    }

    /// As [`record`](Self::record), with the key given as its JSON text and a colon (what
    /// `#[grader]` writes for an identifier, which needs no escaping).
    pub(crate) fn record_keyed<T: Serialize + ?Sized>(
        &mut self,
        json_key: &str,
        value: &T,
        type_name: &str,
    ) {
        self.comma();
        self.out.extend_from_slice(json_key.as_bytes());
        write_json_safe(&mut self.out, value, type_name);
    }

    /// As [`record_placeholder`](Self::record_placeholder), with the key given as in
    /// [`record_keyed`](Self::record_keyed).
    pub(crate) fn record_placeholder_keyed(&mut self, json_key: &str, type_name: &str) {
        self.comma();
        self.out.extend_from_slice(json_key.as_bytes());
        write_placeholder(&mut self.out, type_name);
    }
}

/// Appends the JSON text of [`json_safe`]`(value, type_name)` to `out`: see
/// [`ParametersWriter::record`].
fn write_json_safe<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T, type_name: &str) {
    let start = out.len();
    if value.serialize(Direct { out }).is_err() {
        out.truncate(start);
        write_value(out, &json_safe(value, type_name));
    }
}

/// Appends the JSON text of [`placeholder`]`(type_name)` to `out`.
fn write_placeholder(out: &mut Vec<u8>, type_name: &str) {
    write_str(out, &format!("<{type_name}: not serializable>"));
}

/// A JSON string, as `serde_json` escapes it. Most strings need no escaping, and are copied
/// whole between their quotes.
fn write_str(out: &mut Vec<u8>, text: &str) {
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
fn write_value(out: &mut Vec<u8>, value: &Value) {
    // A JSON value always serializes, and writing to a `Vec` cannot fail.
    let _ = serde_json::to_writer(out, value);
}

/// Why writing directly stopped: the caller takes back what was written and goes through a
/// [`Value`], which gives the right answer whatever the reason.
#[derive(Debug)]
struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not written directly")
    }
}

impl std::error::Error for Stop {}

impl ser::Error for Stop {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Stop
    }
}

/// The name `serde_json`'s raw value serializes as a struct under.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// The struct name under which serde_json (with `arbitrary_precision`) serializes a `Number`.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// Writes a value as the JSON of `serde_json::to_value` of it would be written, or stops (see
/// [`Stop`]) where that is not certain.
struct Direct<'a> {
    out: &'a mut Vec<u8>,
}

/// The formatter's writes go to a `Vec`, which cannot fail.
fn fmt_ok(_: std::io::Result<()>) {}

impl Direct<'_> {
    fn null(self) -> Result<(), Stop> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
}

impl<'a> ser::Serializer for Direct<'a> {
    type Ok = ();
    type Error = Stop;
    type SerializeSeq = Seq<'a>;
    type SerializeTuple = Seq<'a>;
    type SerializeTupleStruct = Seq<'a>;
    type SerializeTupleVariant = Seq<'a>;
    type SerializeMap = Object<'a>;
    type SerializeStruct = Object<'a>;
    type SerializeStructVariant = Object<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Stop> {
        fmt_ok(CompactFormatter.write_bool(self.out, v));
        Ok(())
    }

    fn serialize_i8(self, v: i8) -> Result<(), Stop> {
        self.serialize_i64(i64::from(v))
    }

    fn serialize_i16(self, v: i16) -> Result<(), Stop> {
        self.serialize_i64(i64::from(v))
    }

    fn serialize_i32(self, v: i32) -> Result<(), Stop> {
        self.serialize_i64(i64::from(v))
    }

    fn serialize_i64(self, v: i64) -> Result<(), Stop> {
        fmt_ok(CompactFormatter.write_i64(self.out, v));
        Ok(())
    }

    fn serialize_i128(self, v: i128) -> Result<(), Stop> {
        // A `Value` holds 64-bit integers only: a wider one fails there.
        match i64::try_from(v) {
            Ok(v) => self.serialize_i64(v),
            Err(_) => self.serialize_u128(u128::try_from(v).map_err(|_| Stop)?),
        }
    }

    fn serialize_u8(self, v: u8) -> Result<(), Stop> {
        self.serialize_u64(u64::from(v))
    }

    fn serialize_u16(self, v: u16) -> Result<(), Stop> {
        self.serialize_u64(u64::from(v))
    }

    fn serialize_u32(self, v: u32) -> Result<(), Stop> {
        self.serialize_u64(u64::from(v))
    }

    fn serialize_u64(self, v: u64) -> Result<(), Stop> {
        fmt_ok(CompactFormatter.write_u64(self.out, v));
        Ok(())
    }

    fn serialize_u128(self, v: u128) -> Result<(), Stop> {
        self.serialize_u64(u64::try_from(v).map_err(|_| Stop)?)
    }

    fn serialize_f32(self, v: f32) -> Result<(), Stop> {
        // As a `Value` holds it: the `f64` it converts to, or (with serde_json's
        // `arbitrary_precision`, which another crate of the build may turn on) its own
        // shortest text.
        write_value(self.out, &Value::from(v));
        Ok(())
    }

    fn serialize_f64(self, v: f64) -> Result<(), Stop> {
        write_f64(self.out, v);
        Ok(())
    }

    fn serialize_char(self, v: char) -> Result<(), Stop> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result<(), Stop> {
        write_str(self.out, v);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Stop> {
        self.out.push(b'[');
        for (i, byte) in v.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            fmt_ok(CompactFormatter.write_u8(self.out, *byte));
        }
        self.out.push(b']');
        Ok(())
    }

    fn serialize_none(self) -> Result<(), Stop> {
        self.null()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Stop> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Stop> {
        self.null()
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Stop> {
        self.null()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Stop> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.push(b':');
        value.serialize(Direct {
            out: &mut *self.out,
        })?;
        self.out.push(b'}');
        Ok(())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Seq<'a>, Stop> {
        self.out.push(b'[');
        Ok(Seq {
            out: self.out,
            first: true,
            variant: false,
        })
    }

    fn serialize_tuple(self, len: usize) -> Result<Seq<'a>, Stop> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Seq<'a>, Stop> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Seq<'a>, Stop> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.extend_from_slice(b":[");
        Ok(Seq {
            out: self.out,
            first: true,
            variant: true,
        })
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Object<'a>, Stop> {
        self.out.push(b'{');
        Ok(Object {
            out: self.out,
            keys: HashSet::with_hasher(KEY_HASHER),
            variant: false,
            pending: false,
        })
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Object<'a>, Stop> {
        if name == RAW_VALUE_TOKEN || name == NUMBER_TOKEN {
            // A `Value` parses the text and writes it back in its own form (a number held as
            // text, under `arbitrary_precision`, is written as the number).
            return Err(Stop);
        }
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Object<'a>, Stop> {
        self.out.push(b'{');
        write_str(self.out, variant);
        self.out.extend_from_slice(b":{");
        Ok(Object {
            out: self.out,
            keys: HashSet::with_hasher(KEY_HASHER),
            variant: true,
            pending: false,
        })
    }
}

/// An array being written (inside a one-key object for a tuple variant).
struct Seq<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
    variant: bool,
}

impl Seq<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        value.serialize(Direct {
            out: &mut *self.out,
        })
    }

    fn close(self) -> Result<(), Stop> {
        self.out.push(b']');
        if self.variant {
            self.out.push(b'}');
        }
        Ok(())
    }
}

impl ser::SerializeSeq for Seq<'_> {
    type Ok = ();
    type Error = Stop;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        self.element(value)
    }

    fn end(self) -> Result<(), Stop> {
        self.close()
    }
}

impl ser::SerializeTuple for Seq<'_> {
    type Ok = ();
    type Error = Stop;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        self.element(value)
    }

    fn end(self) -> Result<(), Stop> {
        self.close()
    }
}

impl ser::SerializeTupleStruct for Seq<'_> {
    type Ok = ();
    type Error = Stop;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        self.element(value)
    }

    fn end(self) -> Result<(), Stop> {
        self.close()
    }
}

impl ser::SerializeTupleVariant for Seq<'_> {
    type Ok = ();
    type Error = Stop;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        self.element(value)
    }

    fn end(self) -> Result<(), Stop> {
        self.close()
    }
}

/// An object being written (inside a one-key object for a struct variant). The hashes of the
/// keys written so far are kept, to stop at a key given twice: a `Value` keeps such a key
/// once, in its first place, with its last value.
struct Object<'a> {
    out: &'a mut Vec<u8>,
    keys: HashSet<u64, FixedState>,
    variant: bool,
    /// A key written and its value not yet: a `Serialize` that writes a value without a key,
    /// two keys in a row or a key without a value stops (a `Value` drops a key without a value
    /// and panics at a value without a key).
    pending: bool,
}

/// Hashes the keys of an [`Object`].
const KEY_HASHER: FixedState = FixedState::with_seed(0x5eed);

impl Object<'_> {
    fn key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Stop> {
        if self.pending {
            return Err(Stop);
        }
        self.pending = true;
        if !self.keys.is_empty() {
            self.out.push(b',');
        }
        let start = self.out.len();
        key.serialize(Key {
            out: &mut *self.out,
        })?;
        // Equal keys are written as equal text (serde_json escapes a string one way only), so
        // equal text hashes the same; two keys that merely hash the same stop too, which
        // costs time, never correctness.
        let hash = KEY_HASHER.hash_one(&self.out[start..]);
        if !self.keys.insert(hash) {
            return Err(Stop);
        }
        self.out.push(b':');
        Ok(())
    }

    fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        if !self.pending {
            return Err(Stop);
        }
        self.pending = false;
        value.serialize(Direct {
            out: &mut *self.out,
        })
    }

    fn close(self) -> Result<(), Stop> {
        if self.pending {
            return Err(Stop);
        }
        self.out.push(b'}');
        if self.variant {
            self.out.push(b'}');
        }
        Ok(())
    }
}

impl ser::SerializeMap for Object<'_> {
    type Ok = ();
    type Error = Stop;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Stop> {
        self.key(key)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        self.value(value)
    }

    fn end(self) -> Result<(), Stop> {
        self.close()
    }
}

impl ser::SerializeStruct for Object<'_> {
    type Ok = ();
    type Error = Stop;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        self.key(key)?;
        self.value(value)
    }

    fn end(self) -> Result<(), Stop> {
        self.close()
    }
}

impl ser::SerializeStructVariant for Object<'_> {
    type Ok = ();
    type Error = Stop;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        self.key(key)?;
        self.value(value)
    }

    fn end(self) -> Result<(), Stop> {
        self.close()
    }
}

/// Writes an object key as a `Value`'s map keeps it: strings, characters, unit variants,
/// booleans and numbers (finite floats) as strings; anything else stops, as it fails there.
struct Key<'a> {
    out: &'a mut Vec<u8>,
}

impl Key<'_> {
    /// A key written as the formatter writes the value, between quotes.
    fn quoted(self, write: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> Result<(), Stop> {
        self.out.push(b'"');
        fmt_ok(write(self.out));
        self.out.push(b'"');
        Ok(())
    }
}

impl ser::Serializer for Key<'_> {
    type Ok = ();
    type Error = Stop;
    type SerializeSeq = Impossible<(), Stop>;
    type SerializeTuple = Impossible<(), Stop>;
    type SerializeTupleStruct = Impossible<(), Stop>;
    type SerializeTupleVariant = Impossible<(), Stop>;
    type SerializeMap = Impossible<(), Stop>;
    type SerializeStruct = Impossible<(), Stop>;
    type SerializeStructVariant = Impossible<(), Stop>;

    fn serialize_bool(self, v: bool) -> Result<(), Stop> {
        self.quoted(|out| CompactFormatter.write_bool(out, v))
    }

    fn serialize_i8(self, v: i8) -> Result<(), Stop> {
        self.serialize_i64(i64::from(v))
    }

    fn serialize_i16(self, v: i16) -> Result<(), Stop> {
        self.serialize_i64(i64::from(v))
    }

    fn serialize_i32(self, v: i32) -> Result<(), Stop> {
        self.serialize_i64(i64::from(v))
    }

    fn serialize_i64(self, v: i64) -> Result<(), Stop> {
        self.quoted(|out| CompactFormatter.write_i64(out, v))
    }

    fn serialize_i128(self, v: i128) -> Result<(), Stop> {
        self.quoted(|out| CompactFormatter.write_i128(out, v))
    }

    fn serialize_u8(self, v: u8) -> Result<(), Stop> {
        self.serialize_u64(u64::from(v))
    }

    fn serialize_u16(self, v: u16) -> Result<(), Stop> {
        self.serialize_u64(u64::from(v))
    }

    fn serialize_u32(self, v: u32) -> Result<(), Stop> {
        self.serialize_u64(u64::from(v))
    }

    fn serialize_u64(self, v: u64) -> Result<(), Stop> {
        self.quoted(|out| CompactFormatter.write_u64(out, v))
    }

    fn serialize_u128(self, v: u128) -> Result<(), Stop> {
        self.quoted(|out| CompactFormatter.write_u128(out, v))
    }

    fn serialize_f32(self, v: f32) -> Result<(), Stop> {
        if !v.is_finite() {
            return Err(Stop);
        }
        self.quoted(|out| CompactFormatter.write_f32(out, v))
    }

    fn serialize_f64(self, v: f64) -> Result<(), Stop> {
        if !v.is_finite() {
            return Err(Stop);
        }
        self.quoted(|out| CompactFormatter.write_f64(out, v))
    }

    fn serialize_char(self, v: char) -> Result<(), Stop> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result<(), Stop> {
        write_str(self.out, v);
        Ok(())
    }

    fn serialize_bytes(self, _v: &[u8]) -> Result<(), Stop> {
        Err(Stop)
    }

    fn serialize_none(self) -> Result<(), Stop> {
        Err(Stop)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<(), Stop> {
        Err(Stop)
    }

    fn serialize_unit(self) -> Result<(), Stop> {
        Err(Stop)
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Stop> {
        Err(Stop)
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Stop> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Stop> {
        Err(Stop)
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Stop> {
        Err(Stop)
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Stop> {
        Err(Stop)
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Stop> {
        Err(Stop)
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Stop> {
        Err(Stop)
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Stop> {
        Err(Stop)
    }

    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Stop> {
        Err(Stop)
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Stop> {
        Err(Stop)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use serde::ser::{SerializeMap as _, SerializeStruct as _};
    use serde_json::json;
    use serde_json::value::RawValue;

    use super::*;

    /// What recording `value` writes, and what the map path (`json_safe` into a map, then
    /// serialized) writes.
    fn both<T: Serialize + ?Sized>(value: &T) -> (String, String) {
        let mut writer = ParametersWriter::new();
        writer.record("first", &1, "i32");
        writer.record("value", value, "Thing");
        let mut map = serde_json::Map::new();
        map.insert("first".into(), json_safe(&1, "i32"));
        map.insert("value".into(), json_safe(value, "Thing"));
        (
            writer.into_string(),
            serde_json::to_string(&map).expect("a map serializes"),
        )
    }

    fn same<T: Serialize + ?Sized>(value: &T) -> String {
        let (written, mapped) = both(value);
        assert_eq!(written, mapped);
        written
    }

    #[derive(Serialize)]
    enum Shape {
        Unit,
        Newtype(f64),
        Tuple(u8, &'static str),
        Struct { side: f32, tags: Vec<&'static str> },
    }

    #[derive(Serialize)]
    struct Nested {
        name: &'static str,
        shape: Shape,
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        unit: (),
        list: Vec<Option<f64>>,
    }

    /// Serializing fails at run time, after writing part of the value.
    struct FailsHalfway;

    impl Serialize for FailsHalfway {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(None)?;
            map.serialize_entry("ok", &[1, 2])?;
            Err(serde::ser::Error::custom("no"))
        }
    }

    /// A map that gives a key twice: a `Value` keeps it once, in its first place, last value.
    struct TwiceKeyed(&'static str);

    impl Serialize for TwiceKeyed {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(Some(3))?;
            map.serialize_entry(self.0, &1)?;
            map.serialize_entry("other", &2)?;
            map.serialize_entry(self.0, &3)?;
            map.end()
        }
    }

    /// A struct that gives a field twice.
    struct TwiceField;

    impl Serialize for TwiceField {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut fields = serializer.serialize_struct("TwiceField", 2)?;
            fields.serialize_field("a", &1)?;
            fields.serialize_field("a", &2)?;
            fields.end()
        }
    }

    /// Bytes, which serde_json writes as an array of numbers.
    struct Bytes(&'static [u8]);

    impl Serialize for Bytes {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_bytes(self.0)
        }
    }

    /// A value written with `collect_str`.
    struct Shown(f64);

    impl Serialize for Shown {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_str(&format_args!("{:.2} \"units\"", self.0))
        }
    }

    /// Whether serde_json's `arbitrary_precision` is on in this build (`.ci/run` also runs
    /// these tests with it).
    fn arbitrary_precision() -> bool {
        serde_json::to_string(&Value::from(0.1_f32)).is_ok_and(|text| text == "0.1")
    }

    #[test]
    fn scalars_are_written_as_their_values_would_be() {
        assert_eq!(same(&true), r#"{"first":1,"value":true}"#);
        same(&());
        same(&None::<i32>);
        same(&Some('x'));
        same(&'\u{0}');
        same(&-7_i8);
        same(&u64::MAX);
        same(&i64::MIN);
        same(&i128::from(u64::MAX));
        same(&i128::from(i64::MIN));
        same(&u128::from(u64::MAX));
        // Beyond 64 bits a `Value` has no number (unless serde_json's `arbitrary_precision` is
        // on): the placeholder, both ways.
        let beyond = [
            same(&(i128::from(i64::MIN) - 1)),
            same(&(u128::from(u64::MAX) + 1)),
        ];
        for text in beyond {
            assert_eq!(
                text.contains("<Thing: not serializable>"),
                !arbitrary_precision(),
                "{text}"
            );
        }
        same(&Bytes(b"\x00ab\xff"));
        same(&Shown(2.0 / 3.0));
    }

    #[test]
    fn floats_are_written_as_their_values_would_be() {
        for v in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.1,
            1.5e300,
            -2.5e-300,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::EPSILON,
            123_456_789.0,
            999_999_999_999_999.0,
            1e15,
            1e16,
            -1e15,
            9_007_199_254_740_993.0,
        ] {
            same(&v);
        }
        // Not finite: null.
        assert_eq!(same(&f64::NAN), r#"{"first":1,"value":null}"#);
        same(&f64::INFINITY);
        same(&f64::NEG_INFINITY);
        // An `f32` is kept by a `Value` as the `f64` it converts to (as its own shortest text
        // under `arbitrary_precision`).
        let expected = if arbitrary_precision() {
            r#"{"first":1,"value":0.1}"#
        } else {
            r#"{"first":1,"value":0.10000000149011612}"#
        };
        assert_eq!(same(&0.1_f32), expected);
        same(&f32::NAN);
        same(&f32::MAX);
        same(&vec![1.0, f64::NAN, f64::INFINITY]);
    }

    #[test]
    fn whole_floats_are_written_as_serde_json_writes_them() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let check = |v: f64| {
            let mut out = Vec::new();
            write_f64(&mut out, v);
            assert_eq!(
                String::from_utf8_lossy(&out),
                serde_json::to_string(&v).expect("a float"),
                "{v:e}"
            );
        };
        for exponent in 0..=17 {
            let power = 10_f64.powi(exponent);
            for v in [power, power - 1.0, power + 1.0, -power, power / 2.0] {
                check(v);
            }
        }
        for bits in 0..=60 {
            check((1_u64 << bits) as f64);
        }
        // The values a line's weights, values and reward take most, and the edges.
        for v in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            1.0 - f64::EPSILON,
            f64::MIN_POSITIVE,
            1e-7,
            1e21,
            f64::NAN,
            f64::INFINITY,
        ] {
            check(v);
        }
        for _ in 0..20_000 {
            check(rng.random_range(-1e15..1e15_f64).trunc());
            check(f64::from_bits(rng.random()));
            check(f64::from(rng.random::<i32>()));
        }
    }

    #[test]
    fn strings_are_escaped_as_their_values_would_be() {
        for text in [
            "",
            "plain",
            "quote \" backslash \\ slash /",
            "tab\there\nnewline\r\u{0}\u{1f}\u{7f}",
            "é 😀 \u{2028}",
            "exactly8",
            "sixteen bytes!!!",
        ] {
            same(text);
            same(&text.to_owned());
        }
        // Keys are escaped too.
        let mut writer = ParametersWriter::new();
        writer.record("a \"key\"\n", "v", "str");
        assert_eq!(writer.into_string(), r#"{"a \"key\"\n":"v"}"#);
    }

    #[test]
    fn compound_values_are_written_as_their_values_would_be() {
        same(&Shape::Unit);
        same(&Shape::Newtype(f64::NAN));
        same(&Shape::Tuple(3, "three"));
        same(&Shape::Struct {
            side: 0.5,
            tags: vec!["a", "b\"c"],
        });
        same(&Nested {
            name: "n",
            shape: Shape::Tuple(0, ""),
            note: None,
            unit: (),
            list: vec![Some(1.0), None, Some(f64::INFINITY)],
        });
        same(&(1, "two", [3.0_f64; 2], ((), Some(false))));
        same::<[i32]>(&[]);
        same(&Vec::<String>::new());
        let nested: BTreeMap<&str, BTreeMap<&str, Vec<i32>>> =
            BTreeMap::from([("outer", BTreeMap::from([("inner", vec![1, 2])]))]);
        same(&nested);
        same(&json!({"z": [1, {"y": null}], "a": "b", "m": {}}));
    }

    #[test]
    fn map_keys_are_written_as_a_value_keeps_them() {
        same(&BTreeMap::from([(1, "a"), (-2, "b")]));
        same(&BTreeMap::from([(u128::MAX, 1)]));
        same(&BTreeMap::from([(i128::MIN, 1)]));
        same(&BTreeMap::from([(true, 1), (false, 2)]));
        same(&BTreeMap::from([('k', 1)]));
        same(&HashMap::from([("only", 1)]));
        same(&BTreeMap::from([("é\n\"", 1)]));
        #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
        enum Key {
            Left,
        }
        same(&BTreeMap::from([(Key::Left, 1)]));
        #[derive(Serialize, PartialEq, Eq, PartialOrd, Ord)]
        struct Id(u32);
        same(&BTreeMap::from([(Id(7), 1)]));
        // Float keys: finite ones as text, others refused (the placeholder).
        struct FloatKeys(f64, f32);
        impl Serialize for FloatKeys {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry(&self.0, &1)?;
                map.serialize_entry(&self.1, &2)?;
                map.end()
            }
        }
        assert!(same(&FloatKeys(0.1, 0.25)).contains(r#"{"0.1":1,"0.25":2}"#));
        // The same key written by an `f64` and an `f32`: kept once.
        assert!(same(&FloatKeys(0.1, 0.1)).contains(r#"{"0.1":2}"#));
        assert!(same(&FloatKeys(f64::NAN, 1.0)).contains("<Thing: not serializable>"));
        // Keys that are not strings fail, both ways.
        assert!(same(&BTreeMap::from([(vec![1], "x")])).contains("<Thing: not serializable>"));
        assert!(same(&BTreeMap::from([((), "x")])).contains("<Thing: not serializable>"));
        assert!(same(&BTreeMap::from([(Some(1), "x")])).contains("<Thing: not serializable>"));
    }

    #[test]
    fn a_key_given_twice_is_kept_once_as_a_value_keeps_it() {
        assert_eq!(
            same(&TwiceKeyed("k")),
            r#"{"first":1,"value":{"k":3,"other":2}}"#
        );
        same(&TwiceKeyed("\u{e9}\n"));
        assert_eq!(same(&TwiceField), r#"{"first":1,"value":{"a":2}}"#);
        // Equal keys at different depths are not the same key.
        same(&json!({"a": {"a": {"a": 1}}, "b": {"a": 2}}));
    }

    #[test]
    fn a_value_that_fails_to_serialize_gets_the_placeholder() {
        assert_eq!(
            same(&FailsHalfway),
            r#"{"first":1,"value":"<Thing: not serializable>"}"#
        );
        same(&vec![json!(1), json!(2)]);
        // Failing deep inside.
        same(&(1, [FailsHalfway]));
    }

    #[test]
    fn a_raw_value_is_written_as_a_value_rewrites_it() {
        let raw = RawValue::from_string(r#"{ "b" : 1.0e3, "a" : [ 1 , 2 ], "b": 5 }"#.into())
            .expect("json");
        assert_eq!(same(&raw), r#"{"first":1,"value":{"b":5,"a":[1,2]}}"#);
    }

    #[test]
    fn the_placeholder_and_json_are_recorded_as_given() {
        let mut writer = ParametersWriter::new();
        assert_eq!(writer.clone().into_string(), "{}");
        writer.record_placeholder("client", "Client<\"x\">");
        writer.record_json("v", &json!({"a": [1.5, null]}));
        assert_eq!(
            writer.into_string(),
            r#"{"client":"<Client<\"x\">: not serializable>","v":{"a":[1.5,null]}}"#
        );
    }

    /// Random JSON-like values through both paths.
    #[test]
    fn random_values_are_written_as_their_values_would_be() {
        fn value(rng: &mut ChaCha8Rng, depth: u32) -> Value {
            const TEXTS: &[&str] = &["", "a", "\"", "\\", "\n", "é", "😀", "\u{1f}", "k"];
            match rng.random_range(0..if depth > 2 { 6 } else { 8 }) {
                0 => Value::Null,
                1 => Value::Bool(rng.random()),
                2 => Value::from(rng.random::<i64>()),
                3 => Value::from(rng.random::<u64>()),
                4 => serde_json::Number::from_f64(f64::from_bits(rng.random()))
                    .map_or(Value::Null, Value::Number),
                5 => Value::String(
                    (0..rng.random_range(0..12))
                        .map(|_| TEXTS[rng.random_range(0..TEXTS.len())])
                        .collect(),
                ),
                6 => Value::Array(
                    (0..rng.random_range(0..4))
                        .map(|_| value(rng, depth + 1))
                        .collect(),
                ),
                _ => Value::Object(
                    (0..rng.random_range(0..4))
                        .map(|_| {
                            let key = TEXTS[rng.random_range(0..TEXTS.len())].to_owned();
                            (key, value(rng, depth + 1))
                        })
                        .collect(),
                ),
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for _ in 0..3000 {
            same(&value(&mut rng, 0));
        }
    }
}
