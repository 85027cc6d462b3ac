use std::collections::HashSet;
use std::fmt::Debug;

use grader_core::{Grader, Info, SubScore};
use serde::Serialize;

struct Opaque;

#[derive(Grader)]
#[grader(score = check)]
struct Lifetimes<'a, 'b: 'a> {
    answer: &'a str,
    accepted: &'b HashSet<&'a str>,
    opaque: &'a Opaque,
}

impl Lifetimes<'_, '_> {
    fn check(&self) -> bool {
        let _ = self.opaque;
        self.accepted.contains(self.answer)
    }
}

#[derive(Grader)]
#[grader(score = check, name = "within")]
pub struct Generic<T, const N: usize>
where
    T: PartialOrd + Serialize + Debug,
{
    values: [T; N],
    limit: T,
}

impl<T: PartialOrd + Serialize + Debug, const N: usize> Generic<T, N> {
    fn check(self) -> Result<f64, String> {
        if self.values.iter().all(|value| *value <= self.limit) {
            Ok(1.0)
        } else {
            Err(format!("{:?} exceeds {:?}", self.values, self.limit))
        }
    }
}

#[derive(Grader)]
#[grader(score = async check, skip(client))]
struct AsyncByRef {
    #[grader(skip)]
    api_key: String,
    client: Opaque,
    r#type: String,
}

impl AsyncByRef {
    async fn check(&self) -> (f64, Info) {
        let _ = (&self.api_key, &self.client, &self.r#type);
        (1.0, Info::new())
    }
}

#[derive(Grader)]
#[grader(score = async check)]
struct AsyncByValue {
    answer: String,
}

impl AsyncByValue {
    async fn check(self) -> Result<SubScore, grader_core::ScoreError> {
        SubScore::new("inner", if self.answer.is_empty() { 0.0 } else { 1.0 })
    }
}

#[derive(Grader)]
#[grader(score = always)]
struct Unit;

impl Unit {
    fn always(self) -> f32 {
        1.0
    }
}

fn send<T: Send>(value: T) -> T {
    value
}

fn main() {
    let accepted = HashSet::from(["a"]);
    let lifetimes = Lifetimes { answer: "a", accepted: &accepted, opaque: &Opaque };
    assert_eq!(lifetimes.name(), "lifetimes");
    let generic = Generic { values: [1, 2], limit: 3 };
    assert_eq!(generic.name(), "within");
    let by_ref = AsyncByRef { api_key: "k".into(), client: Opaque, r#type: "t".into() };
    assert_eq!(Grader::parameters(&by_ref).len(), 1);
    let _ = send(Grader::score(by_ref));
    let _ = send(Grader::score(AsyncByValue { answer: "a".into() }));
    let _ = send(Grader::score(lifetimes));
    assert!(Grader::parameters(&Unit).is_empty());
}
