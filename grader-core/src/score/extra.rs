//! [`Extra`], the fields of an [`EvaluationResult`](super::EvaluationResult) that it does not
//! know, each kept as its exact JSON text, and the reading that keeps that text through
//! `serde_json` and through deserializers that buffer their input.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// The JSON names of [`EvaluationResult`]'s own fields, in the order they are written.
///
/// [`EvaluationResult`]: super::EvaluationResult
pub(super) const RESULT_FIELDS: [&str; 6] =
    ["reward", "done", "content", "info", "isError", "subscores"];

/// The fields of an [`EvaluationResult`] that it does not know, in the order they came, each as
/// its exact JSON text (whitespace outside strings removed).
///
/// Keeping the text rather than a [`Value`] is what keeps, say, a 30-digit integer exact:
/// `serde_json` reads a number that does not fit 64 bits as a float. [`get`](Self::get) parses a
/// field into a [`Value`] (with that loss) for convenience; [`get_raw`](Self::get_raw) gives the
/// text.
///
/// The exact text is kept when the result is read with `serde_json` directly
/// (`from_str`, `from_slice`, `from_reader`, `from_value`). Where serde buffers the input first
/// (an `EvaluationResult` inside a `#[serde(flatten)]` field or an untagged enum), each unknown
/// field still parses, but goes through a [`Value`] on the way.
///
/// ```
/// use grader_core::EvaluationResult;
///
/// let mut result = EvaluationResult::default();
/// result.extra.insert("trace_id", "abc")?;
/// result.extra.insert("attempt", 2)?;
/// assert_eq!(result.extra.get("attempt"), Some(serde_json::json!(2)));
/// assert_eq!(result.extra.keys().collect::<Vec<_>>(), ["trace_id", "attempt"]);
/// assert!(result.extra.insert("reward", 1.0).is_err()); // a field of its own
/// # Ok::<(), grader_core::score::ExtraError>(())
/// ```
///
/// [`EvaluationResult`]: super::EvaluationResult
#[derive(Clone, Default)]
pub struct Extra {
    pub(super) fields: indexmap::IndexMap<String, Box<RawValue>>,
}

/// A field that cannot be added to [`Extra`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExtraError {
    /// The key is one of [`EvaluationResult`]'s own fields (`reward`, `isError`, …): set that
    /// field instead, or the JSON written would have the key twice.
    ///
    /// [`EvaluationResult`]: super::EvaluationResult
    #[error("`{key}` is a field of EvaluationResult itself, not an extra field")]
    KnownField {
        /// The key.
        key: String,
    },
    /// The value has no JSON form.
    #[error("extra field `{key}`: {source}")]
    Json {
        /// The key.
        key: String,
        /// Why it could not be serialized.
        #[source]
        source: serde_json::Error,
    },
}

impl Extra {
    /// No fields.
    #[must_use]
    pub fn new() -> Self {
        Extra::default()
    }

    /// How many fields there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The field `key` parsed as a [`Value`] (an integer beyond 64 bits becomes a float; see
    /// [`get_raw`](Self::get_raw) for the exact text).
    #[must_use]
    pub fn get(&self, key: &str) -> Option<Value> {
        serde_json::from_str(self.fields.get(key)?.get()).ok()
    }

    /// The field `key` as its exact JSON text.
    #[must_use]
    pub fn get_raw(&self, key: &str) -> Option<&RawValue> {
        self.fields.get(key).map(AsRef::as_ref)
    }

    /// Whether there is a field `key`.
    #[must_use]
    pub fn contains_key(&self, key: &str) -> bool {
        self.fields.contains_key(key)
    }

    /// Sets the field `key` to the JSON form of `value`, keeping its place if it was there.
    ///
    /// # Errors
    /// [`ExtraError::KnownField`] when `key` is one of [`EvaluationResult`]'s own fields;
    /// [`ExtraError::Json`] when `value` fails to serialize.
    ///
    /// [`EvaluationResult`]: super::EvaluationResult
    pub fn insert<T: Serialize>(
        &mut self,
        key: impl Into<String>,
        value: T,
    ) -> Result<(), ExtraError> {
        let key = key.into();
        match serde_json::value::to_raw_value(&value) {
            Ok(raw) => self.insert_raw(key, raw),
            Err(source) => Err(ExtraError::Json { key, source }),
        }
    }

    /// Sets the field `key` to this JSON text, keeping its place if it was there.
    ///
    /// # Errors
    /// [`ExtraError::KnownField`] when `key` is one of [`EvaluationResult`]'s own fields.
    ///
    /// [`EvaluationResult`]: super::EvaluationResult
    pub fn insert_raw(
        &mut self,
        key: impl Into<String>,
        raw: Box<RawValue>,
    ) -> Result<(), ExtraError> {
        let key = key.into();
        if RESULT_FIELDS.contains(&key.as_str()) {
            return Err(ExtraError::KnownField { key });
        }
        self.fields.insert(key, compact(raw));
        Ok(())
    }

    /// Removes the field `key`, keeping the others in order; returns its text if it was there.
    pub fn remove(&mut self, key: &str) -> Option<Box<RawValue>> {
        self.fields.shift_remove(key)
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.fields.keys().map(String::as_str)
    }

    /// The fields, in order, each with its JSON text.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &RawValue)> {
        self.fields.iter().map(|(key, raw)| (key.as_str(), &**raw))
    }
}

impl PartialEq for Extra {
    /// The same keys with the same JSON text (in any order, as for [`Info`]).
    ///
    /// [`Info`]: super::Info
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .fields
                .iter()
                .all(|(key, raw)| other.fields.get(key).is_some_and(|o| o.get() == raw.get()))
    }
}

impl std::fmt::Debug for Extra {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.fields.iter().map(|(key, raw)| (key, raw.get())))
            .finish()
    }
}

/// `raw` without whitespace outside strings (the JSON text is otherwise unchanged).
fn compact(raw: Box<RawValue>) -> Box<RawValue> {
    let text = raw.get();
    let mut in_string = false;
    let mut escaped = false;
    let has_space = text.bytes().any(|byte| {
        let space = !in_string && matches!(byte, b' ' | b'\t' | b'\n' | b'\r');
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
        } else if byte == b'"' {
            in_string = true;
        }
        space
    });
    if !has_space {
        return raw;
    }
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else if matches!(c, ' ' | '\t' | '\n' | '\r') {
            continue;
        }
        out.push(c);
    }
    // Removing insignificant whitespace from valid JSON leaves valid JSON.
    RawValue::from_string(out).unwrap_or(raw)
}

/// Reads one value as raw JSON text. Directly from `serde_json` this is the exact text; from a
/// deserializer that buffered its input (serde's `flatten`, untagged enums), which cannot give
/// raw text, the value is read as a [`Value`] and written back out.
pub(super) struct RawSeed;

impl<'de> serde::de::DeserializeSeed<'de> for RawSeed {
    type Value = Box<RawValue>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        let raw = Box::<RawValue>::deserialize(BufferedFallback(deserializer))?;
        Ok(compact(raw))
    }
}

/// Passes everything to the deserializer inside, except that when asked for `serde_json`'s raw
/// value by a deserializer that does not know it (it answers `visit_newtype_struct`), it reads a
/// [`Value`] and hands its text to the raw value's visitor as `serde_json` itself would.
struct BufferedFallback<D>(D);

impl<'de, D: serde::Deserializer<'de>> serde::Deserializer<'de> for BufferedFallback<D> {
    type Error = D::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(visitor)
    }

    fn deserialize_newtype_struct<V: serde::de::Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0
            .deserialize_newtype_struct(name, FallbackVisitor { name, visitor })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

struct FallbackVisitor<V> {
    name: &'static str,
    visitor: V,
}

impl<'de, V: serde::de::Visitor<'de>> serde::de::Visitor<'de> for FallbackVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.visitor.expecting(f)
    }

    /// `serde_json`'s own answer: the raw text, handed over as a one-entry map.
    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(map)
    }

    /// A buffering deserializer's answer: the value itself.
    fn visit_newtype_struct<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<V::Value, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let entry = std::iter::once((self.name, value.to_string()));
        self.visitor
            .visit_map(serde::de::value::MapDeserializer::new(entry))
    }
}
