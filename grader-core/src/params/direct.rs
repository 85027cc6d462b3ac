//! The serializer that writes a value's JSON text directly, as `serde_json::to_value` of it
//! would be written, and stops wherever that is not certain (the writer then goes through a
//! [`Value`]).

use std::collections::HashSet;
use std::fmt;
use std::hash::BuildHasher as _;

use foldhash::fast::FixedState;

use serde::Serialize;
use serde::ser::{self, Impossible};
use serde_json::Value;
use serde_json::ser::{CompactFormatter, Formatter as _};

use super::json::{fmt_ok, write_f64, write_str, write_value};
use super::value::json_safe;

/// Appends the JSON text of [`json_safe`]`(value, type_name)` to `out`: see
/// [`ParametersWriter::record`].
///
/// [`ParametersWriter::record`]: super::ParametersWriter::record
pub(super) fn write_json_safe<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
    type_name: &str,
) {
    let start = out.len();
    if value.serialize(Direct { out }).is_err() {
        out.truncate(start);
        write_value(out, &json_safe(value, type_name));
    }
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
