//! `BashGrader` (grader-core's `bash` module): a shell command scored by its exit code, with
//! its limits (time, memory, processes, CPU time, file size, open files), the credentials it
//! does not inherit, and the bubblewrap `Sandbox`.
//!
//! A grade runs on the calling thread with the GIL released, on a runtime of its own: many
//! Python threads grade at once. It returns the subscore as a dict in the wire format, `info`
//! and `_parameters` as Rust writes them. A command that cannot be run (a missing working
//! directory, a sandbox that cannot be made) is a `CommandError`: the grader failed, not the
//! agent.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use grader_core::sandbox::{
    DEFAULT_FILE_SIZE, DEFAULT_MEMORY, DEFAULT_OPEN_FILES, DEFAULT_PROCESSES, Limits, Sandbox,
};
use grader_core::{BashGrader, Failure, GraderError};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyTuple};

use crate::args;
use crate::error::{CommandError, PanicError, guard};

/// `seconds` as a duration: finite and not negative (a `ValueError` naming `name` otherwise).
fn duration(seconds: f64, name: &str) -> PyResult<Duration> {
    Duration::try_from_secs_f64(seconds).map_err(|_| {
        PyValueError::new_err(format!(
            "{name} must be a finite number of seconds, 0 or more, not {seconds}"
        ))
    })
}

/// A count or a size that is 0 or more, or `None` for no limit.
fn amount(value: Option<i64>, name: &str) -> PyResult<Option<u64>> {
    value
        .map(|v| {
            u64::try_from(v).map_err(|_| {
                PyValueError::new_err(format!("{name} must be 0 or more, or None, not {v}"))
            })
        })
        .transpose()
}

/// The Python exception for a grade that failed.
fn to_py(error: &GraderError) -> PyErr {
    match &error.failure {
        Failure::InvalidWeight { .. } | Failure::Environment { .. } => {
            PyValueError::new_err(error.to_string())
        }
        Failure::Panicked { .. } => PanicError::new_err(error.to_string()),
        _ => CommandError::new_err(error.to_string()),
    }
}

/// The bubblewrap sandbox a command runs in (``BashGrader(..., sandbox=Sandbox(...))``; bwrap
/// must be on ``PATH``).
///
/// Inside it the command sees ``/usr``, ``/etc`` and ``/bin``, ``/sbin``, ``/lib*`` read-only,
/// its working directory read-write, a private ``/tmp``, a fresh ``/proc`` and a minimal
/// ``/dev``; nothing else of the host's files but the paths bound ``read_only`` or
/// ``writable``. It has its own PID, IPC and UTS namespaces, no capabilities, and no network
/// (not even the host's ``127.0.0.1``) unless ``network=True``. Where bwrap cannot sandbox,
/// the grade fails with ``CommandError`` unless ``or_unsandboxed=True``, which runs the command
/// without the sandbox and says why in ``info["sandbox"]``.
///
/// >>> Sandbox(read_only=["/opt/data"])
/// Sandbox(network=False, read_only=['/opt/data'], writable=[], or_unsandboxed=False)
#[pyclass(frozen, eq, module = "graderkit", name = "Sandbox")]
#[derive(Clone, PartialEq)]
pub(crate) struct PySandbox {
    sandbox: Sandbox,
}

impl PySandbox {
    fn paths(&self, writable: bool) -> Vec<PathBuf> {
        self.sandbox
            .binds()
            .iter()
            .filter(|(_, w)| *w == writable)
            .map(|(path, _)| path.clone())
            .collect()
    }
}

#[pymethods]
impl PySandbox {
    #[new]
    #[pyo3(
        signature = (*, network = false, read_only = Vec::new(), writable = Vec::new(), or_unsandboxed = false),
        text_signature = "(*, network=False, read_only=(), writable=(), or_unsandboxed=False)"
    )]
    fn new(
        network: bool,
        read_only: Vec<PathBuf>,
        writable: Vec<PathBuf>,
        or_unsandboxed: bool,
    ) -> Self {
        let mut sandbox = Sandbox::new().network(network);
        for path in read_only {
            sandbox = sandbox.read_only(path);
        }
        for path in writable {
            sandbox = sandbox.writable(path);
        }
        if or_unsandboxed {
            sandbox = sandbox.or_unsandboxed();
        }
        Self { sandbox }
    }

    /// Whether the command shares the host's network.
    #[getter]
    fn network(&self) -> bool {
        self.sandbox.allows_network()
    }

    /// The host's paths bound read-only.
    #[getter]
    fn read_only(&self) -> Vec<PathBuf> {
        self.paths(false)
    }

    /// The host's paths bound read-write.
    #[getter]
    fn writable(&self) -> Vec<PathBuf> {
        self.paths(true)
    }

    /// Whether the command runs unsandboxed where bwrap cannot sandbox.
    #[getter]
    fn or_unsandboxed(&self) -> bool {
        self.sandbox.falls_back()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let paths = |paths: Vec<PathBuf>| {
            let shown: Vec<String> = paths
                .iter()
                .map(|path| py_repr(py, &path.display().to_string()))
                .collect();
            format!("[{}]", shown.join(", "))
        };
        format!(
            "Sandbox(network={}, read_only={}, writable={}, or_unsandboxed={})",
            py_bool(self.network()),
            paths(self.read_only()),
            paths(self.writable()),
            py_bool(self.or_unsandboxed()),
        )
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let kwargs = PyDict::new(py);
        kwargs.set_item("network", self.network())?;
        kwargs.set_item("read_only", self.read_only())?;
        kwargs.set_item("writable", self.writable())?;
        kwargs.set_item("or_unsandboxed", self.or_unsandboxed())?;
        Ok((
            partial(py, &py.get_type::<Self>(), &kwargs)?,
            PyTuple::empty(py),
        ))
    }
}

fn py_bool(value: bool) -> &'static str {
    if value { "True" } else { "False" }
}

/// `repr(text)` as Python writes it.
fn py_repr(py: Python<'_>, text: &str) -> String {
    pyo3::types::PyString::new(py, text)
        .repr()
        .map_or_else(|_| format!("{text:?}"), |shown| shown.to_string())
}

/// `repr(list_of_str)` as Python writes it.
fn py_list_repr(py: Python<'_>, items: &[String]) -> String {
    let shown: Vec<String> = items.iter().map(|item| py_repr(py, item)).collect();
    format!("[{}]", shown.join(", "))
}

/// `functools.partial(class, **kwargs)`, which pickles a keyword-only constructor call.
fn partial<'py>(
    py: Python<'py>,
    class: &Bound<'py, pyo3::types::PyType>,
    kwargs: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyAny>> {
    py.import("functools")?
        .getattr("partial")?
        .call((class,), Some(kwargs))
}

/// What a `BashGrader` was made with, as Python gave it: for `__repr__` and pickling.
#[derive(Clone)]
struct Options {
    command: String,
    cwd: Option<PathBuf>,
    env: Vec<(String, String)>,
    timeout: f64,
    output_limit: usize,
    kill_grace: f64,
    login_shell: bool,
    env_clear: bool,
    pass_env: Vec<String>,
    inherit_secrets: bool,
    memory: Option<u64>,
    processes: Option<u64>,
    cpu_time: Option<f64>,
    file_size: Option<u64>,
    open_files: Option<u64>,
    sandbox: Option<PySandbox>,
    launcher: Vec<String>,
}

/// A shell command scored by its exit code (1.0 for 0), as the HUD SDK's ``BashGrader``, with
/// limits, the credentials it does not inherit, and on request a sandbox.
///
/// - ``command`` runs as ``/bin/bash -lc command`` (``login_shell=False``: ``bash --noprofile
///   --norc -c``, no startup file, which an agent that can write to the home directory could
///   use to pass every check), in ``cwd`` (this process's by default) with ``env`` set on top
///   of this process's environment; stdin is ``/dev/null``.
/// - ``timeout`` seconds (600 by default) from the start: then everything the command started
///   gets SIGTERM, SIGKILL ``kill_grace`` seconds later, and the score is 0.0 with
///   ``info["timed_out"]``. Nothing it started outlives the grade, even what left its process
///   group. Each of stdout and stderr keeps ``output_limit`` bytes (4 MiB).
/// - Limits (``None`` for none): ``memory`` bytes (4 GiB), ``processes`` (4 096), ``cpu_time``
///   seconds (none), ``file_size`` bytes (8 GiB), ``open_files`` (4 096); a cgroup per command
///   where the machine offers one, rlimits otherwise. A limit hit scores 0.0 with
///   ``info["limit_exceeded"]`` naming it; ``info["limits"]`` says what enforced each.
/// - Variables that look like credentials (``*_KEY``, ``*_TOKEN``, ``*SECRET*``, ``HUD_*``,
///   ...) are not inherited (``info["env_withheld"]`` names them): ``pass_env`` lets names
///   through, ``env_clear=True`` inherits nothing, ``inherit_secrets=True`` everything.
/// - ``sandbox=True`` (or a ``Sandbox``) runs it under bubblewrap.
///
/// ``grade(weight, name=None)`` runs it with the GIL released (grade from many threads at
/// once; from asyncio, ``await asyncio.to_thread(grader.grade)``) and returns the subscore as
/// a dict in the wire format: ``name``, ``value``, ``weight`` and ``info`` (``exit_code``,
/// ``stdout``, ``stderr``, ``limits``, ... and ``_parameters``). A command that cannot be run
/// (a missing ``cwd``, a sandbox bwrap cannot make) raises ``CommandError``. The grader pickles
/// and works in forked workers. A Ctrl-C in the grading thread takes effect once the grade
/// returns, which its timeout bounds.
///
/// >>> sub = BashGrader("echo hello; exit 3", timeout=30, login_shell=False).grade()
/// >>> sub["value"], sub["info"]["exit_code"], sub["info"]["stdout"]
/// (0.0, 3, 'hello\n')
#[pyclass(frozen, module = "graderkit", name = "BashGrader")]
pub(crate) struct PyBashGrader {
    grader: BashGrader,
    options: Options,
}

/// The pairs of a mapping of `str` to `str` (a `TypeError` naming `env` otherwise).
fn env_pairs(env: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(String, String)>> {
    let Some(env) = env else {
        return Ok(Vec::new());
    };
    let items = env
        .call_method0("items")
        .map_err(|_| PyTypeError::new_err("env must be a mapping of str to str"))?;
    let mut pairs = Vec::new();
    for item in items.try_iter()? {
        let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
        pairs.push((
            args::owned(&key, "each env name")?,
            args::owned(&value, "each env value")?,
        ));
    }
    Ok(pairs)
}

/// `sandbox=`: `False`/`None` for none, `True` for the default sandbox, or a `Sandbox`.
fn sandbox_of(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<PySandbox>> {
    let Some(value) = value else {
        return Ok(None);
    };
    if let Ok(flag) = value.cast::<PyBool>() {
        return Ok(flag.is_true().then(|| PySandbox {
            sandbox: Sandbox::new(),
        }));
    }
    if let Ok(sandbox) = value.cast::<PySandbox>() {
        return Ok(Some(sandbox.get().clone()));
    }
    Err(PyTypeError::new_err(
        "sandbox must be a bool, a graderkit.Sandbox or None",
    ))
}

impl Options {
    /// grader-core's grader, its arguments checked.
    fn grader(&self) -> PyResult<BashGrader> {
        if self.env_clear && self.inherit_secrets {
            return Err(PyValueError::new_err(
                "env_clear=True inherits nothing: it cannot be combined with inherit_secrets=True",
            ));
        }
        let mut limits = Limits::none()
            .memory(self.memory)
            .processes(self.processes)
            .file_size(self.file_size)
            .open_files(self.open_files);
        if let Some(cpu) = self.cpu_time {
            limits = limits.cpu_time(duration(cpu, "cpu_time")?);
        }
        let mut grader = BashGrader::new(self.command.clone())
            .timeout(duration(self.timeout, "timeout")?)
            .kill_grace(duration(self.kill_grace, "kill_grace")?)
            .output_limit(self.output_limit)
            .login_shell(self.login_shell)
            .inherit_secrets(self.inherit_secrets)
            .limits(limits);
        if let Some(cwd) = &self.cwd {
            grader = grader.cwd(cwd.clone());
        }
        for (key, value) in &self.env {
            grader = grader.env(key, value);
        }
        if self.env_clear {
            grader = grader.env_clear();
        }
        for name in &self.pass_env {
            grader = grader.pass_env(OsString::from(name));
        }
        if let Some(sandbox) = &self.sandbox {
            grader = grader.sandbox(sandbox.sandbox.clone());
        }
        if !self.launcher.is_empty() {
            grader = grader.launcher(self.launcher.iter().map(OsString::from));
        }
        Ok(grader)
    }
}

#[pymethods]
impl PyBashGrader {
    #[new]
    #[pyo3(text_signature = "(command, *, cwd=None, env=None, timeout=600.0, \
        output_limit=4194304, kill_grace=1.0, login_shell=True, env_clear=False, pass_env=(), \
        inherit_secrets=False, memory=4294967296, processes=4096, cpu_time=None, \
        file_size=8589934592, open_files=4096, sandbox=None, launcher=None)")]
    #[pyo3(signature = (
        command,
        *,
        cwd = None,
        env = None,
        timeout = 600.0,
        output_limit = grader_core::bash::DEFAULT_OUTPUT_LIMIT,
        kill_grace = 1.0,
        login_shell = true,
        env_clear = false,
        pass_env = Vec::new(),
        inherit_secrets = false,
        memory = Some(DEFAULT_MEMORY as i64),
        processes = Some(DEFAULT_PROCESSES as i64),
        cpu_time = None,
        file_size = Some(DEFAULT_FILE_SIZE as i64),
        open_files = Some(DEFAULT_OPEN_FILES as i64),
        sandbox = None,
        launcher = None,
    ))]
    #[allow(clippy::too_many_arguments, clippy::cast_possible_wrap)]
    fn new(
        command: &Bound<'_, PyAny>,
        cwd: Option<PathBuf>,
        env: Option<&Bound<'_, PyAny>>,
        timeout: f64,
        output_limit: usize,
        kill_grace: f64,
        login_shell: bool,
        env_clear: bool,
        pass_env: Vec<String>,
        inherit_secrets: bool,
        memory: Option<i64>,
        processes: Option<i64>,
        cpu_time: Option<f64>,
        file_size: Option<i64>,
        open_files: Option<i64>,
        sandbox: Option<&Bound<'_, PyAny>>,
        launcher: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let options = Options {
            command: args::owned(command, "command")?,
            cwd,
            env: env_pairs(env)?,
            timeout,
            output_limit,
            kill_grace,
            login_shell,
            env_clear,
            pass_env,
            inherit_secrets,
            memory: amount(memory, "memory")?,
            processes: amount(processes, "processes")?,
            cpu_time,
            file_size: amount(file_size, "file_size")?,
            open_files: amount(open_files, "open_files")?,
            sandbox: sandbox_of(sandbox)?,
            launcher: launcher.unwrap_or_default(),
        };
        let grader = guard(|| options.grader())?;
        Ok(Self { grader, options })
    }

    /// Runs the command and returns its subscore, a dict in the wire format.
    #[pyo3(signature = (weight = 1.0, *, name = None))]
    fn grade<'py>(
        &self,
        py: Python<'py>,
        weight: f64,
        name: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let grader = self.grader.clone();
        let text = guard(|| {
            let sub = py
                .detach(move || grader.grade_blocking(weight))
                .map_err(|e| to_py(&e))?;
            let sub = match name {
                Some(name) => sub.with_name(name),
                None => sub,
            };
            serde_json::to_string(&sub).map_err(|e| PyValueError::new_err(e.to_string()))
        })?;
        py.import("json")?.call_method1("loads", (text,))
    }

    /// The command.
    #[getter]
    fn command(&self) -> &str {
        &self.options.command
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let o = &self.options;
        let mut shown = vec![py_repr(py, &o.command)];
        if let Some(cwd) = &o.cwd {
            shown.push(format!("cwd={}", py_repr(py, &cwd.display().to_string())));
        }
        if !o.env.is_empty() {
            // The names only: the values may be secrets.
            let names: Vec<String> = o.env.iter().map(|(k, _)| k.clone()).collect();
            shown.push(format!("env=<values of {}>", py_list_repr(py, &names)));
        }
        shown.push(format!("timeout={:?}", o.timeout));
        if o.env_clear {
            shown.push("env_clear=True".to_owned());
        }
        if !o.pass_env.is_empty() {
            shown.push(format!("pass_env={}", py_list_repr(py, &o.pass_env)));
        }
        if o.inherit_secrets {
            shown.push("inherit_secrets=True".to_owned());
        }
        if !o.login_shell {
            shown.push("login_shell=False".to_owned());
        }
        let limits = self.grader_limits();
        if !limits.is_empty() {
            shown.push(limits);
        }
        if let Some(sandbox) = &o.sandbox {
            shown.push(format!("sandbox={}", sandbox.__repr__(py)));
        }
        format!("BashGrader({})", shown.join(", "))
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let o = &self.options;
        let kwargs = PyDict::new(py);
        kwargs.set_item("cwd", &o.cwd)?;
        let env = PyDict::new(py);
        for (key, value) in &o.env {
            env.set_item(key, value)?;
        }
        kwargs.set_item("env", env)?;
        kwargs.set_item("timeout", o.timeout)?;
        kwargs.set_item("output_limit", o.output_limit)?;
        kwargs.set_item("kill_grace", o.kill_grace)?;
        kwargs.set_item("login_shell", o.login_shell)?;
        kwargs.set_item("env_clear", o.env_clear)?;
        kwargs.set_item("pass_env", &o.pass_env)?;
        kwargs.set_item("inherit_secrets", o.inherit_secrets)?;
        kwargs.set_item("memory", o.memory)?;
        kwargs.set_item("processes", o.processes)?;
        kwargs.set_item("cpu_time", o.cpu_time)?;
        kwargs.set_item("file_size", o.file_size)?;
        kwargs.set_item("open_files", o.open_files)?;
        kwargs.set_item("sandbox", o.sandbox.clone())?;
        kwargs.set_item("launcher", &o.launcher)?;
        let class = py.get_type::<Self>();
        Ok((
            partial(py, &class, &kwargs)?,
            PyTuple::new(py, [&o.command])?,
        ))
    }
}

impl PyBashGrader {
    /// The limits that differ from the defaults, as keyword arguments.
    fn grader_limits(&self) -> String {
        let o = &self.options;
        let mut shown = Vec::new();
        let mut show = |name: &str, value: Option<u64>, default: Option<u64>| {
            if value != default {
                shown.push(match value {
                    Some(v) => format!("{name}={v}"),
                    None => format!("{name}=None"),
                });
            }
        };
        show("memory", o.memory, Some(DEFAULT_MEMORY));
        show("processes", o.processes, Some(DEFAULT_PROCESSES));
        show("file_size", o.file_size, Some(DEFAULT_FILE_SIZE));
        show("open_files", o.open_files, Some(DEFAULT_OPEN_FILES));
        if let Some(cpu) = o.cpu_time {
            shown.push(format!("cpu_time={cpu:?}"));
        }
        shown.join(", ")
    }
}

/// Adds the classes to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PySandbox>()?;
    module.add_class::<PyBashGrader>()?;
    Ok(())
}
