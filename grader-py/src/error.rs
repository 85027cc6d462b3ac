//! The package's exceptions, and the guard that turns a Rust panic into one of them.
//!
//! Every class derives from `GraderError`, which derives from `Exception`: a trainer that
//! catches `Exception` around a reward call catches each of them.

use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    graderkit,
    GraderError,
    PyException,
    "The base class of every error graderkit raises."
);
create_exception!(
    graderkit,
    PanicError,
    GraderError,
    "A bug in graderkit's native code: it stopped where it should have answered. The message \
     says where; the call had no effect and the process goes on."
);
create_exception!(
    graderkit,
    LimitError,
    GraderError,
    "An input past one of the bounds that keep every call short (a text's length, nesting, \
     digits, nodes, the work of a comparison), where the caller asked for an error rather than \
     a score of 0 (`raise_on_error=True`)."
);

create_exception!(
    graderkit,
    CommandError,
    GraderError,
    "A command could not be run (`BashGrader`: a missing working directory, a sandbox that \
     cannot be made, a process that cannot be started): the grader failed, not the agent, so \
     there is no score. The message names the grader and what was wrong."
);

/// Panics inside [`guard`]: the test suite's way to check that a panic in native code reaches
/// Python as a [`PanicError`] that `except Exception` catches.
#[pyfunction]
fn _panic_for_tests() -> PyResult<()> {
    guard(|| panic!("a panic injected by the test suite"))
}

/// Adds the exception classes to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add_function(wrap_pyfunction!(_panic_for_tests, module)?)?;
    module.add("GraderError", py.get_type::<GraderError>())?;
    module.add("PanicError", py.get_type::<PanicError>())?;
    module.add("LimitError", py.get_type::<LimitError>())?;
    module.add("CommandError", py.get_type::<CommandError>())?;
    Ok(())
}

/// Runs `work`, turning a panic into a [`PanicError`] that carries the panic's message.
pub(crate) fn guard<T>(work: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(work)).unwrap_or_else(|payload| Err(panic_error(&*payload)))
}

/// The [`PanicError`] for a caught panic's payload.
pub(crate) fn panic_error(payload: &(dyn std::any::Any + Send)) -> PyErr {
    let message = payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    PanicError::new_err(format!("graderkit's native code panicked: {message}"))
}
