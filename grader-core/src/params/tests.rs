//! Recording as text checked against the map path: what a [`ParametersWriter`] writes is what
//! [`json_safe`] into a map, serialized, writes; and floats as `serde_json` writes them.

use std::collections::{BTreeMap, HashMap};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use serde::ser::{SerializeMap as _, SerializeStruct as _};
use serde_json::Value;
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
    let raw =
        RawValue::from_string(r#"{ "b" : 1.0e3, "a" : [ 1 , 2 ], "b": 5 }"#.into()).expect("json");
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
