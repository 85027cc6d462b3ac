//! Support for the cross-crate tests in `tests/`: the reference's Python SDK, installed on
//! first use into a virtual environment under `target/`.

pub mod python;
