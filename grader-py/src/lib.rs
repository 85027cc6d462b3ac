//! graderkit's native module, `graderkit._native`: grader-core's graders for Python.
//!
//! This crate holds no grading logic of its own. Each function converts its arguments, releases
//! the GIL around the Rust call ([`Python::detach`]), and maps what comes back: a verdict, a
//! score, or an error of the package's own classes (the module `error`), never a Rust panic
//! escaping as PyO3's `PanicException` (a `BaseException` a trainer's `except Exception` lets
//! through).
//! The Python package (`python/graderkit/`) re-exports these and adds the trainers' reward
//! function shapes, which are plain Python over the batch functions here.

mod args;
mod bash;
mod error;
mod format;
mod inspect;
mod json;
mod math;
mod result;
mod similarity;
mod text;

use pyo3::prelude::*;

/// The extension's own allocations go through mimalloc, whose per-thread heaps let a batch's
/// threads allocate without meeting in glibc's arenas (`verify_many` on two threads: see
/// BENCHMARKS.md); Python's own objects keep Python's allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The module `graderkit._native`.
#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    error::register(module)?;
    result::register(module)?;
    text::register(module)?;
    similarity::register(module)?;
    format::register(module)?;
    inspect::register(module)?;
    json::register(module)?;
    math::register(module)?;
    bash::register(module)?;
    Ok(())
}
