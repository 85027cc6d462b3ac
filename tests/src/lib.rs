//! Support for the cross-crate tests in `tests/`: the reference's Python SDK, installed on
//! first use into a virtual environment under `target/`.

pub mod python;

/// The README's code compiles: its quick start is a doctest of this crate.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
