//! Parameters of every shape become fields; the function itself is unchanged and callable.
use std::collections::HashMap;
use std::fmt::Display;
use std::path::Path;

use grader_core::{Info, SubScore, grader};

pub struct Opaque;

#[grader]
pub fn borrowed(repo: &Path, filter: &str, items: &[u32], opaque: &Opaque, count: &mut u32) -> f64 {
    let _ = (repo, filter, items, opaque);
    *count += 1;
    1.0
}

#[grader]
fn explicit<'a, 'b: 'a>(first: &'a str, second: &'b str, mixed: &'_ HashMap<&'a str, &str>) -> bool {
    first.len() + second.len() + mixed.len() > 0
}

#[grader]
fn generic<T: Display + ?Sized, U, const N: usize>(shown: &T, items: [U; N]) -> f32
where
    U: Clone,
{
    let _ = (shown.to_string(), items.to_vec());
    1.0
}

#[grader]
fn with_impl<'a>(shown: impl Display, many: Vec<impl Into<f64>>, iter: impl Iterator<Item = &'a str>) -> (f64, Info) {
    let _ = (shown, many, iter.count());
    (1.0, Info::new())
}

#[grader]
fn r#match(r#type: &str, r#loop: u8) -> Result<SubScore, grader_core::ScoreError> {
    SubScore::new(r#type, f64::from(r#loop))
}

#[grader]
fn dynamic(check: &dyn Fn(&str) -> bool, boxed: Box<dyn Display + Send>) -> bool {
    check(&boxed.to_string())
}

#[grader]
pub(crate) fn mutable(mut counter: u32) -> bool {
    counter += 1;
    counter > 0
}

fn main() {
    let mut count = 0;
    let _ = Borrowed { repo: Path::new("."), filter: "", items: &[], opaque: &Opaque, count: &mut count }.grade(1.0);
    let map = HashMap::new();
    let _ = Explicit { first: "a", second: "b", mixed: &map }.grade(1.0);
    let _ = Generic { shown: "x", items: [1, 2] }.grade(1.0);
    let _ = WithImpl { shown: 1, many: vec![1.0_f32], iter: ["a"].into_iter() }.grade(1.0);
    let _ = Match { r#type: "t", r#loop: 1 }.grade(1.0);
    let _ = Dynamic { check: &|s: &str| s.is_empty(), boxed: Box::new(1) }.grade(1.0);
    let _ = Mutable { counter: 0 }.grade(1.0);
    assert!(r#match("x", 1).is_ok());
}
