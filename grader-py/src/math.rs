//! Math answers (grader-core's `math` module) for Python: math-verify's `parse` and `verify`
//! with its configuration surface, and the batch that every reward function shape stands on.
//!
//! Configurations cross as JSON in grader-core's serde forms (`ParseOptions`, `VerifyOptions`,
//! `ExtractionTarget`); the Python layer (`graderkit/_config.py`) writes them from
//! math-verify's classes. No call uses a signal: the deadlines are checked inside the
//! comparison's loops ([`Budget`]), so they hold on any thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use grader_core::math::{
    self, Budget, ExtractionMode, ExtractionTarget, MathConfig, MathError, ParseOptions, Parsed,
    Semantics, VerifyOptions,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::args::{self, Answer};
use crate::error::{LimitError, guard, panic_error};

/// The most native threads a batch uses by default.
const DEFAULT_MAX_THREADS: usize = 8;

/// The fewest pairs a default thread is started for.
const PAIRS_PER_THREAD: usize = 16;

fn json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> PyResult<T> {
    serde_json::from_str(text).map_err(|error| PyValueError::new_err(format!("{what}: {error}")))
}

/// A math error as Python sees it where the caller asked for errors (`raise_on_error=True`).
fn to_py(error: &MathError) -> PyErr {
    LimitError::new_err(error.to_string())
}

/// What `parse` returned: math-verify's list of (at most) the parsed answer and the extracted
/// text. `len()`, indexing, iteration, `bool()` and `str()` behave as on math-verify's list;
/// the items are the answer's and the text's strings.
#[pyclass(module = "graderkit", name = "Parsed", frozen)]
pub(crate) struct PyParsed {
    inner: Parsed,
    /// What was parsed and how, to pickle by parsing again.
    source: Option<(String, String)>,
}

impl PyParsed {
    fn items(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(expr) = &self.inner.expr {
            out.push(math::expr::show(expr));
        } else if let Some(choice) = &self.inner.choice {
            out.push(choice.clone());
        }
        if let Some(text) = &self.inner.text {
            out.push(text.clone());
        }
        out
    }
}

#[pymethods]
impl PyParsed {
    /// How many items: 0 when nothing was found, else the answer and the extracted text.
    fn __len__(&self) -> usize {
        self.items().len()
    }

    fn __bool__(&self) -> bool {
        !self.items().is_empty()
    }

    /// The item at `index` (negative from the end): the answer's text, then the extracted text.
    fn __getitem__(&self, index: isize) -> PyResult<String> {
        let items = self.items();
        let len = isize::try_from(items.len()).unwrap_or(isize::MAX);
        let at = if index < 0 { index + len } else { index };
        usize::try_from(at)
            .ok()
            .and_then(|at| items.get(at).cloned())
            .ok_or_else(|| pyo3::exceptions::PyIndexError::new_err("Parsed index out of range"))
    }

    /// As math-verify's list prints: `[answer, 'extracted text']`.
    fn __str__(&self) -> String {
        let items = self.items();
        let mut out = String::from("[");
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            if i == 0 && (self.inner.expr.is_some() || self.inner.choice.is_some()) {
                out.push_str(item);
            } else {
                out.push_str(&format!("{item:?}"));
            }
        }
        out.push(']');
        out
    }

    /// `Parsed([...])`.
    fn __repr__(&self) -> String {
        format!("Parsed({})", self.__str__())
    }

    /// Where in the text the answer was found, as `(start, end)` in characters, or `None`.
    #[getter]
    fn span(&self) -> Option<(usize, usize)> {
        let (text, _) = self.source.as_ref()?;
        let span = self.inner.span.clone()?;
        let chars = |bytes: usize| text.get(..bytes).map_or(0, |head| head.chars().count());
        Some((chars(span.start), chars(span.end)))
    }

    fn __reduce__(slf: &Bound<'_, Self>) -> PyResult<(Py<PyAny>, (String, String))> {
        let py = slf.py();
        let me = slf.get();
        let Some((text, options)) = me.source.clone() else {
            return Err(PyTypeError::new_err("this Parsed cannot be pickled"));
        };
        let rebuild = py
            .import("graderkit._native")?
            .getattr("_parsed_from")?
            .unbind();
        Ok((rebuild, (text, options)))
    }
}

fn parse_options(options: &str) -> PyResult<ParseOptions> {
    json(options, "the parse options")
}

fn parse_one(text: &str, options: &ParseOptions, budget: &mut Budget) -> Result<Parsed, MathError> {
    math::parse_in(text, options, budget)
}

/// A budget of the options' `parsing_timeout` (none for `None` or 0).
fn parse_budget(options: &ParseOptions) -> Budget {
    let budget = Budget::new();
    match options.parsing_timeout.filter(|&s| s > 0) {
        Some(seconds) => budget.with_timeout(Duration::from_secs(u64::from(seconds))),
        None => budget,
    }
}

/// `parse(pred, options_json)`: the answer in `pred`. Past a bound or its timeout it is empty,
/// or a `LimitError` where the options say `raise_on_error`.
#[pyfunction]
fn parse(py: Python<'_>, pred: &Bound<'_, PyAny>, options: &str) -> PyResult<PyParsed> {
    let options_json = options.to_owned();
    let options = parse_options(options)?;
    let text = match args::answer(pred, "pred")? {
        Answer::Text(text) => text,
        Answer::Unjudgeable(_) => {
            return Ok(PyParsed {
                inner: Parsed::default(),
                source: None,
            });
        }
    };
    let parsed = guard(|| {
        Ok(py.detach(|| {
            let mut budget = parse_budget(&options);
            parse_one(&text, &options, &mut budget)
        }))
    })?;
    match parsed {
        Ok(inner) => Ok(PyParsed {
            inner,
            source: Some((text, options_json)),
        }),
        Err(error) if options.raise_on_error => Err(to_py(&error)),
        Err(_) => Ok(PyParsed {
            inner: Parsed::default(),
            source: Some((text, options_json)),
        }),
    }
}

/// Unpickles a [`PyParsed`] by parsing its text again.
#[pyfunction]
fn _parsed_from(py: Python<'_>, text: &Bound<'_, PyAny>, options: &str) -> PyResult<PyParsed> {
    parse(py, text, options)
}

/// One side of `verify`: a `Parsed`, or a `str` compared as a string (as math-verify compares
/// a `str` it is given).
fn side(value: &Bound<'_, PyAny>, name: &str) -> PyResult<Parsed> {
    if let Ok(parsed) = value.cast::<PyParsed>() {
        return Ok(parsed.get().inner.clone());
    }
    match args::answer(value, name) {
        Ok(Answer::Text(text)) => Ok(Parsed {
            text: Some(text),
            ..Parsed::default()
        }),
        Ok(Answer::Unjudgeable(_)) => Ok(Parsed::default()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{name} must be what graderkit.parse returned or a str, not {}",
            value
                .get_type()
                .name()
                .map_or_else(|_| "an unknown type".to_owned(), |n| n.to_string())
        ))),
    }
}

/// `verify(gold, target, options_json)`: whether `target`'s answer is `gold`'s. Past a bound
/// or the timeout, `False`, or a `LimitError` where the options say `raise_on_error`.
#[pyfunction]
fn verify(
    py: Python<'_>,
    gold: &Bound<'_, PyAny>,
    target: &Bound<'_, PyAny>,
    options: &str,
) -> PyResult<bool> {
    let options: VerifyOptions = json(options, "the verify options")?;
    let (gold, target) = (side(gold, "gold")?, side(target, "target")?);
    let verdict = guard(|| {
        Ok(py.detach(|| {
            let mut budget = Budget::with_work(options.work);
            if let Some(seconds) = options.timeout_seconds.filter(|&s| s > 0) {
                budget = budget.with_timeout(Duration::from_secs(u64::from(seconds)));
            }
            math::verify_parsed_in(&gold, &target, &options, &mut budget)
        }))
    })?;
    match verdict {
        Ok(verdict) => Ok(verdict),
        Err(error) if options.raise_on_error => Err(to_py(&error)),
        Err(_) => Ok(false),
    }
}

/// The configuration of a batch, as `graderkit._rewards.MathConfig.to_json` writes it.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchConfig {
    preset: String,
    #[serde(default)]
    semantics: Semantics,
    gold_targets: Option<Vec<ExtractionTarget>>,
    answer_targets: Option<Vec<ExtractionTarget>>,
    gold_extraction_mode: Option<ExtractionMode>,
    answer_extraction_mode: Option<ExtractionMode>,
    float_rounding: Option<u32>,
    numeric_precision: Option<u32>,
    strict: Option<bool>,
    allow_set_relation_comp: Option<bool>,
}

fn batch_config(text: &str) -> PyResult<MathConfig> {
    let config: BatchConfig = json(text, "the math configuration")?;
    let mut math = match config.preset.as_str() {
        "math_verify" => MathConfig::math_verify(),
        "trl" => MathConfig::trl_accuracy_reward(),
        "open_r1" => MathConfig::open_r1_accuracy_reward(),
        "verl" => MathConfig::verl_math_verify(),
        other => return Err(PyValueError::new_err(format!("no preset {other:?}"))),
    };
    if config.semantics == Semantics::Parity {
        math = math.parity();
    }
    if let Some(targets) = config.gold_targets {
        math.gold.extraction_config = targets;
    }
    if let Some(targets) = config.answer_targets {
        math.answer.extraction_config = targets;
    }
    if let Some(mode) = config.gold_extraction_mode {
        math.gold.extraction_mode = mode;
    }
    if let Some(mode) = config.answer_extraction_mode {
        math.answer.extraction_mode = mode;
    }
    if let Some(value) = config.float_rounding {
        math.verify.float_rounding = value;
    }
    if let Some(value) = config.numeric_precision {
        math.verify.numeric_precision = value;
    }
    if let Some(value) = config.strict {
        math.verify.strict = value;
    }
    if let Some(value) = config.allow_set_relation_comp {
        math.verify.allow_set_relation_comp = value;
    }
    // The batch's own deadline bounds it: no per-call timeouts on top.
    math.gold.parsing_timeout = None;
    math.answer.parsing_timeout = None;
    math.verify.timeout_seconds = None;
    Ok(math)
}

/// One pair's row: the reward (`None` when not computed), why where it is not a plain verdict,
/// and what each side parsed to.
type Row = (Option<f64>, Option<String>, String, String);

fn shown(parsed: &Parsed) -> String {
    let mut items = Vec::new();
    if let Some(expr) = &parsed.expr {
        items.push(math::expr::show(expr));
    } else if let Some(choice) = &parsed.choice {
        items.push(choice.clone());
    }
    if let Some(text) = &parsed.text {
        items.push(format!("{text:?}"));
    }
    format!("[{}]", items.join(", "))
}

/// Whether a failure is the batch's (its deadline: not computed) rather than the answer's (a
/// bound: 0).
fn is_deadline(error: &MathError) -> bool {
    matches!(
        error,
        MathError::Deadline { .. } | MathError::Cancelled { .. }
    )
}

fn score_pair(gold: &str, answer: &Answer, config: &MathConfig, deadline: Option<Instant>) -> Row {
    let mut budget = Budget::with_work(config.verify.work);
    if let Some(deadline) = deadline {
        budget = budget.with_deadline(deadline);
    }
    let gold = match math::read_gold(gold, config) {
        Ok(gold) => gold,
        Err(error) => {
            return (
                None,
                Some(error.to_string()),
                "[unparseable]".to_owned(),
                String::new(),
            );
        }
    };
    let answer = match answer {
        Answer::Text(text) => text,
        Answer::Unjudgeable(why) => {
            return (
                Some(0.0),
                Some(why.clone()),
                shown(&gold),
                "[unjudgeable]".to_owned(),
            );
        }
    };
    let parsed = match math::parse_in(answer, &config.answer, &mut budget) {
        Ok(parsed) => parsed,
        Err(error) if is_deadline(&error) => {
            return (
                None,
                Some(error.to_string()),
                shown(&gold),
                "[skipped]".to_owned(),
            );
        }
        Err(error) => {
            return (
                Some(0.0),
                Some(error.to_string()),
                shown(&gold),
                "[unjudgeable]".to_owned(),
            );
        }
    };
    let answer_shown = if parsed.is_empty() {
        "[unparseable]".to_owned()
    } else {
        shown(&parsed)
    };
    match math::verify_parsed_in(&gold, &parsed, &config.verify, &mut budget) {
        Ok(verdict) => (
            Some(if verdict { 1.0 } else { 0.0 }),
            None,
            shown(&gold),
            answer_shown,
        ),
        Err(error) if is_deadline(&error) => {
            (None, Some(error.to_string()), shown(&gold), answer_shown)
        }
        Err(error) => (
            Some(0.0),
            Some(error.to_string()),
            shown(&gold),
            answer_shown,
        ),
    }
}

/// The threads a batch of `pairs` uses: `threads`, or by default the machine's cores, at most
/// [`DEFAULT_MAX_THREADS`], one per [`PAIRS_PER_THREAD`] pairs.
fn thread_count(threads: Option<usize>, pairs: usize) -> usize {
    let wanted = threads.unwrap_or_else(|| {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        cores
            .min(DEFAULT_MAX_THREADS)
            .min(pairs.div_ceil(PAIRS_PER_THREAD))
    });
    wanted.clamp(1, pairs.max(1))
}

/// `math_rewards(golds, answers, config_json, threads, deadline)`: one [`Row`] per pair,
/// computed on native threads without the GIL. The threads are the call's own and have all
/// ended when it returns; past `deadline` (seconds from the call) the pairs still running
/// stop at their next check and those not started are not computed.
#[pyfunction]
#[pyo3(signature = (golds, answers, config, threads = None, deadline = None))]
fn math_rewards(
    py: Python<'_>,
    golds: &Bound<'_, PyAny>,
    answers: &Bound<'_, PyAny>,
    config: &str,
    threads: Option<usize>,
    deadline: Option<f64>,
) -> PyResult<Vec<Row>> {
    let config = batch_config(config)?;
    let golds = golds
        .cast::<PyList>()
        .map_err(|_| PyTypeError::new_err("golds must be a list of str"))?;
    let answers = answers
        .cast::<PyList>()
        .map_err(|_| PyTypeError::new_err("answers must be a list of str"))?;
    if golds.len() != answers.len() {
        return Err(PyValueError::new_err(format!(
            "{} golds for {} answers: give one gold for each answer",
            golds.len(),
            answers.len()
        )));
    }
    let golds: Vec<String> = golds
        .iter()
        .enumerate()
        .map(|(i, gold)| args::owned(&gold, &format!("gold {i}")))
        .collect::<PyResult<_>>()?;
    let answers: Vec<Answer> = answers
        .iter()
        .enumerate()
        .map(|(i, answer)| args::answer(&answer, &format!("answer {i}")))
        .collect::<PyResult<_>>()?;
    if threads == Some(0) {
        return Err(PyValueError::new_err("threads must be at least 1, not 0"));
    }
    let deadline = match deadline {
        None => None,
        Some(seconds) if seconds.is_finite() && seconds > 0.0 => {
            Some(Instant::now() + Duration::from_secs_f64(seconds.min(1e9)))
        }
        Some(seconds) => {
            return Err(PyValueError::new_err(format!(
                "deadline must be a positive number of seconds, not {seconds}"
            )));
        }
    };
    let count = thread_count(threads, golds.len());
    let rows = py.detach(|| run_batch(&golds, &answers, &config, deadline, count));
    rows.into_iter()
        .map(|row| row.map_err(|payload| panic_error(&*payload)))
        .collect()
}

type Caught = Box<dyn std::any::Any + Send>;

/// Scores every pair on `threads` scoped threads, each taking the next pair until none is
/// left; a pair that panics is that pair's [`Caught`] panic, the others are unaffected.
fn run_batch(
    golds: &[String],
    answers: &[Answer],
    config: &MathConfig,
    deadline: Option<Instant>,
    threads: usize,
) -> Vec<Result<Row, Caught>> {
    let next = Arc::new(AtomicUsize::new(0));
    let mut rows: Vec<Option<Result<Row, Caught>>> = (0..golds.len()).map(|_| None).collect();
    let work = |next: &AtomicUsize| {
        let mut mine = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            if index >= golds.len() {
                return mine;
            }
            let row = if deadline.is_some_and(|d| Instant::now() >= d) {
                Ok((
                    None,
                    Some("math: the deadline passed before this pair started".to_owned()),
                    String::new(),
                    String::new(),
                ))
            } else {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    score_pair(&golds[index], &answers[index], config, deadline)
                }))
            };
            mine.push((index, row));
        }
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads)
            .map(|_| {
                let next = Arc::clone(&next);
                scope.spawn(move || work(&next))
            })
            .collect();
        let mut done = work(&next);
        for handle in handles {
            // A worker's own panics are caught per pair: joining cannot fail.
            done.extend(handle.join().unwrap_or_default());
        }
        for (index, row) in done {
            rows[index] = Some(row);
        }
    });
    rows.into_iter()
        .map(|row| row.unwrap_or_else(|| Err(Box::new("a pair was never scored"))))
        .collect()
}

/// `math_semantics_version(semantics)`: the number recorded in `info` by the graders that
/// use these semantics (`"exact"` or `"parity"`).
#[pyfunction]
fn math_semantics_version(semantics: &str) -> PyResult<u32> {
    match semantics {
        "exact" => Ok(Semantics::Exact.version()),
        "parity" => Ok(Semantics::Parity.version()),
        other => Err(PyValueError::new_err(format!(
            "semantics must be 'exact' or 'parity', not {other:?}"
        ))),
    }
}

/// Adds the functions and the `Parsed` class to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyParsed>()?;
    module.add_function(wrap_pyfunction!(parse, module)?)?;
    module.add_function(wrap_pyfunction!(_parsed_from, module)?)?;
    module.add_function(wrap_pyfunction!(verify, module)?)?;
    module.add_function(wrap_pyfunction!(math_rewards, module)?)?;
    module.add_function(wrap_pyfunction!(math_semantics_version, module)?)?;
    Ok(())
}
