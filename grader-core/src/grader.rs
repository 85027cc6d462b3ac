//! The [`Grader`] trait: what `#[grader]` types, hand-written graders, `BashGrader` and the
//! tree nodes have in common; [`SyncGrader`] for the synchronous ones; [`BoxGrader`] for lists
//! built at run time; and how a score becomes a [`SubScore`].

use std::borrow::Cow;
use std::fmt::Display;
use std::future::Future;
use std::pin::Pin;

use crate::error::{Failure, GraderError};
use crate::grading::Grading;
use crate::limit::Resource;
use crate::params::ParametersWriter;
use crate::score::{Info, Score, SubScore, is_valid_value, parse_parameters};

pub use crate::params::PARAMETERS_KEY;

/// A reusable check that produces a score: the reference's `Grader` class.
///
/// A grader is a value holding its inputs. [`grade`](Self::grade) is the one grading call for
/// every grader, whatever it is made of: it returns a [`Grading`], which records the inputs under
/// `_parameters`, runs [`score`](Self::score), and packages the outcome as a [`SubScore`] with
/// the grader's name and the weight given. The same grading is awaited on its own, added to a
/// [`Gather`](crate::Gather), or put in a tree ([`any`](crate::any), [`all`](crate::all),
/// [`cascade`](crate::cascade)); a [`SyncGrader`]'s grading can also be run at once with
/// [`Grading::now`], without any runtime.
///
/// Most graders come from `#[grader]` on a function. A grader that holds state (a reference
/// set, a client, thresholds from a config) is a struct that derives the trait and names its
/// scoring method; every field is recorded under `_parameters` unless marked
/// `#[grader(skip)]` (see `grader_macros::Grader` for the options):
///
/// ```
/// use grader_core::Grader;
///
/// /// Passes when the answer mentions the expected city.
/// #[derive(Grader)]
/// #[grader(score = check)] // `score = async check` for an `async fn`
/// struct MentionsCity<'a> {
///     answer: &'a str,
///     city: &'a str,
/// }
///
/// impl MentionsCity<'_> {
///     fn check(&self) -> bool {
///         self.answer.contains(self.city)
///     }
/// }
///
/// let sub = MentionsCity { answer: "It is Paris.", city: "Paris" }.grade(0.5).now()?;
/// assert_eq!((sub.name(), sub.value(), sub.weight()), ("mentions_city", 1.0, 0.5));
/// assert_eq!(sub.info().unwrap()["_parameters"]["city"], "Paris");
/// # Ok::<(), grader_core::GraderError>(())
/// ```
///
/// The same grader written by hand takes three methods (and [`SyncGrader`] for `.now()`):
///
/// ```
/// use std::borrow::Cow;
/// use grader_core::{Failure, Grader, Info, Score};
/// use grader_core::params::json_safe;
///
/// /// Passes when the answer mentions the expected city.
/// struct MentionsCity<'a> {
///     answer: &'a str,
///     city: &'a str,
/// }
///
/// impl Grader for MentionsCity<'_> {
///     fn name(&self) -> Cow<'_, str> {
///         "mentions_city".into()
///     }
///
///     fn parameters(&self) -> Info {
///         let mut params = Info::new();
///         params.insert("answer".into(), json_safe(self.answer, "str"));
///         params.insert("city".into(), json_safe(self.city, "str"));
///         params
///     }
///
///     async fn score(self) -> Result<Score, Failure> {
///         Ok(self.answer.contains(self.city).into())
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let sub = MentionsCity { answer: "It is Paris.", city: "Paris" }.grade(0.5).await?;
/// assert_eq!((sub.name(), sub.value(), sub.weight()), ("mentions_city", 1.0, 0.5));
/// assert_eq!(sub.info().unwrap()["_parameters"]["city"], "Paris");
/// # Ok::<(), grader_core::GraderError>(())
/// # }).unwrap();
/// ```
///
/// # Why it is shaped this way
///
/// - **One call, `grade(weight)`, for every grader.** Sync and async `#[grader]` functions,
///   hand-written graders, `BashGrader` and the judge all return the same [`Grading`], so no
///   caller has to know how a grader does its work: a gather, a tree and an evaluation take
///   any mix. Nothing runs until the grading is awaited (or, for a [`SyncGrader`], run with
///   [`Grading::now`]), so a tree can decide what to run: gates and cascades skip graders.
/// - **The score future is `Send`.** Trees, gathers and evaluations box their children and
///   may run them on any thread of a multi-threaded runtime. Stable Rust cannot say "`Send`
///   when this grader's future is" for a generic grader (return-type notation is not stable),
///   so the trait asks for `Send` outright. A synchronous check is always fine (its future is
///   ready at once); an async check that holds an `Rc` or a `RefCell` borrow across an
///   `.await` does not compile as a grader: keep such values out of the await points, or
///   compute the score yourself and add the finished [`SubScore`] to the tree.
/// - **Parameters are recorded as text.** A grading asks its grader for
///   [`write_parameters`](Grader::write_parameters), the JSON of
///   [`parameters`](Grader::parameters) written straight into a buffer, and keeps that text
///   until the subscore is written out; [`SubScore::info`] parses it only when asked. Building
///   a map of values for every grading cost more than many checks do.
/// - **Synchronous graders need no runtime.** `#[grader]` on a plain `fn` also implements
///   [`SyncGrader`], which is what [`Grading::now`] asks for: calling `.now()` on an async
///   grader is a compile error that says to await it instead.
/// - **A synchronous check in a gather or a tree makes no future.** It says so with
///   [`score_at_once`](Grader::score_at_once), and its parent runs it there and then, as
///   it would run any grading (parameters, panics, policies and names are the same), without
///   a future of its own to allocate and move: in a tree of many small checks, the futures
///   cost more than the checks.
pub trait Grader: Sized {
    /// The subscore's name when the grading is given no other.
    fn name(&self) -> Cow<'_, str>;

    /// A JSON-safe copy of the grader's inputs, recorded under `_parameters`. See
    /// [`params`](crate::params). The default records nothing.
    fn parameters(&self) -> Info {
        Info::new()
    }

    /// Records [`parameters`](Self::parameters) in `out`, as JSON text: the object written
    /// must be the one `parameters` returns, keys in the same order, which is what the
    /// default does (by calling it).
    ///
    /// A grading records its grader's parameters with this method, and keeps them as this
    /// text until the subscore is written out (an evaluation copies it into the line as it
    /// is), so that recording them builds no map. `#[grader]` and `#[derive(Grader)]`
    /// implement it by writing each value's JSON straight into `out`; a hand-written grader
    /// may do the same with [`ParametersWriter::record`].
    ///
    /// ```
    /// use grader_core::params::ParametersWriter;
    /// use grader_core::{Grader, grader};
    ///
    /// #[grader]
    /// fn mentions(answer: &str, word: &str) -> bool {
    ///     answer.contains(word)
    /// }
    ///
    /// let check = Mentions { answer: "Paris \"is\" nice", word: "Paris" };
    /// let mut out = ParametersWriter::new();
    /// check.write_parameters(&mut out);
    /// let text = out.into_string();
    /// assert_eq!(text, serde_json::to_string(&check.parameters())?);
    /// assert_eq!(text, r#"{"answer":"Paris \"is\" nice","word":"Paris"}"#);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    fn write_parameters(&self, out: &mut ParametersWriter) {
        for (key, value) in &self.parameters() {
            out.record_json(key, value);
        }
    }

    /// The class of shared resource a grading of this grader occupies while it runs (see
    /// [`limit`](crate::limit)): `BashGrader` is [`Resource::Commands`]. `None` (the default)
    /// takes no slot.
    fn resource(&self) -> Option<Resource> {
        None
    }

    /// Runs the check. The value is validated when graded: a NaN, an infinity or a value
    /// outside `[0, 1]` becomes a [`Failure::InvalidScore`], never a clamped score.
    fn score(self) -> impl Future<Output = Result<Score, Failure>> + Send;

    /// Runs the check at once when it never awaits, so that a gather or a tree grades it
    /// without making a future for it; otherwise gives the grader back, untouched, to be
    /// scored with [`score`](Self::score). The default gives it back.
    ///
    /// `#[grader]` on a plain `fn` and `#[derive(Grader)]` with a synchronous score method
    /// implement it with [`SyncGrader::score_now`]; a hand-written [`SyncGrader`] may do the
    /// same. What it returns as [`AtOnce::Scored`] must be what awaiting
    /// [`score`](Self::score) would give. The grading runs it as it would run the check: its
    /// parameters recorded first, a panic caught, the value validated. A grading that has to
    /// take a slot of a [`Resource`], or has a time limit or retries, awaits the check instead,
    /// so that the slot, the timer and the attempts work as for any grader.
    ///
    /// ```
    /// use grader_core::grader::AtOnce;
    /// use grader_core::{Grader, grader};
    ///
    /// #[grader]
    /// fn short(answer: &str) -> bool {
    ///     answer.len() < 10
    /// }
    ///
    /// #[grader]
    /// async fn reviewed(answer: &str) -> bool {
    ///     !answer.is_empty()
    /// }
    ///
    /// assert!(matches!(Short { answer: "Paris" }.score_at_once(), AtOnce::Scored(Ok(_))));
    /// assert!(matches!(Reviewed { answer: "Paris" }.score_at_once(), AtOnce::Awaits(_)));
    /// ```
    fn score_at_once(self) -> AtOnce<Self> {
        AtOnce::Awaits(self)
    }

    /// Whether its gradings record `_parameters` in the subscore's info. True by default; the
    /// tree nodes ([`any`](crate::any), …) say no, since their inputs are their children, as
    /// the reference's `any`/`all` record none.
    fn records_parameters(&self) -> bool {
        true
    }

    /// The grading of this grader at `weight` (negative for a penalty): await it, run it with
    /// [`Grading::now`] (synchronous graders), or add it to a gather or a tree. Options such
    /// as another name, a time limit or retries are set on the [`Grading`].
    fn grade<'a>(self, weight: f64) -> Grading<'a, Self>
    where
        Self: 'a,
    {
        Grading::new(self, weight)
    }

    /// This grader behind a type-erased box, for lists of graders of different types built at
    /// run time (from a configuration file, say).
    fn boxed<'a>(self) -> BoxGrader<'a>
    where
        Self: Send + 'a,
    {
        BoxGrader(Box::new(self))
    }
}

/// What [`Grader::score_at_once`] gives: the check's outcome, or the grader back when its
/// check has to be awaited.
#[derive(Debug)]
pub enum AtOnce<G> {
    /// The check ran at once: its outcome, as [`Grader::score`] would give it.
    Scored(Result<Score, Failure>),
    /// The check awaits: the grader, untouched, to score with [`Grader::score`].
    Awaits(G),
}

/// A grader whose check is synchronous, so that its grading can run without a runtime with
/// [`Grading::now`]. `#[grader]` implements it for every non-`async` function, with
/// [`Grader::score_at_once`] calling [`score_now`](Self::score_now), so that gathers and
/// trees run the check without a future of its own: a hand-written one may do the same.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a synchronous grader, so its grading cannot run with `.now()`",
    label = "an asynchronous grader",
    note = "await the grading instead: `grader.grade(weight).await`"
)]
pub trait SyncGrader: Grader {
    /// Runs the check at once.
    ///
    /// # Errors
    /// As [`Grader::score`].
    fn score_now(self) -> Result<Score, Failure>;
}

/// Any grader, behind a box: made by [`Grader::boxed`]. It is itself a [`Grader`], so a
/// `Vec<BoxGrader>` goes in a tree or a gather like any other grader.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use grader_core::text::{Contains, ExactMatch};
/// use grader_core::{BoxGrader, Gather, Grader};
///
/// let answer = "Paris";
/// // Built at run time, say from a configuration file.
/// let checks: Vec<BoxGrader> = vec![
///     ExactMatch { answer, expected: "paris", normalize_text: true }.boxed(),
///     Contains { answer, substring: "Lyon", case_sensitive: false }.boxed(),
/// ];
/// let result = Gather::new().extend(checks).await?;
/// assert_eq!(result.reward(), 0.5);
/// # Ok::<(), grader_core::GatherError>(())
/// # }).unwrap();
/// ```
pub struct BoxGrader<'a>(Box<dyn Erased<'a> + Send + 'a>);

impl std::fmt::Debug for BoxGrader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("BoxGrader").field(&self.0.name()).finish()
    }
}

/// The object-safe part of [`Grader`], behind [`BoxGrader`].
trait Erased<'a> {
    fn name(&self) -> Cow<'_, str>;
    fn parameters(&self) -> Info;
    fn write_parameters(&self, out: &mut ParametersWriter);
    fn resource(&self) -> Option<Resource>;
    fn records_parameters(&self) -> bool;
    fn score(self: Box<Self>) -> Pin<Box<dyn Future<Output = Result<Score, Failure>> + Send + 'a>>;
    fn score_at_once(self: Box<Self>) -> AtOnce<BoxGrader<'a>>;
}

impl<'a, G: Grader + Send + 'a> Erased<'a> for G {
    fn name(&self) -> Cow<'_, str> {
        Grader::name(self)
    }

    fn parameters(&self) -> Info {
        Grader::parameters(self)
    }

    fn write_parameters(&self, out: &mut ParametersWriter) {
        Grader::write_parameters(self, out);
    }

    fn resource(&self) -> Option<Resource> {
        Grader::resource(self)
    }

    fn records_parameters(&self) -> bool {
        Grader::records_parameters(self)
    }

    fn score(self: Box<Self>) -> Pin<Box<dyn Future<Output = Result<Score, Failure>> + Send + 'a>> {
        Box::pin(Grader::score(*self))
    }

    fn score_at_once(self: Box<Self>) -> AtOnce<BoxGrader<'a>> {
        match Grader::score_at_once(*self) {
            AtOnce::Scored(outcome) => AtOnce::Scored(outcome),
            AtOnce::Awaits(grader) => AtOnce::Awaits(BoxGrader(Box::new(grader))),
        }
    }
}

impl Grader for BoxGrader<'_> {
    fn name(&self) -> Cow<'_, str> {
        self.0.name()
    }

    fn parameters(&self) -> Info {
        self.0.parameters()
    }

    fn write_parameters(&self, out: &mut ParametersWriter) {
        self.0.write_parameters(out);
    }

    fn resource(&self) -> Option<Resource> {
        self.0.resource()
    }

    fn records_parameters(&self) -> bool {
        self.0.records_parameters()
    }

    fn score(self) -> impl Future<Output = Result<Score, Failure>> + Send {
        self.0.score()
    }

    /// The boxed grader's own: at once when its check does not await.
    fn score_at_once(self) -> AtOnce<Self> {
        self.0.score_at_once()
    }
}

/// A type a `#[grader]` function may return: `f64`, `f32`, `bool`, `(f64, Info)`, [`SubScore`],
/// [`Score`], or `Result<T, E>` of one of those with `E: Display`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a score a `#[grader]` function can return",
    label = "not a score type",
    note = "a `#[grader]` function returns `f64`, `f32`, `bool`, `(f64, grader_core::Info)`, \
            `grader_core::SubScore`, or a `Result<_, E: Display>` of one of those"
)]
pub trait IntoScore {
    /// Converts into a [`Score`], or the [`Failure`] an `Err` stands for.
    ///
    /// # Errors
    /// [`Failure::Message`] with the error's message for an `Err`.
    fn into_score(self) -> Result<Score, Failure>;
}

macro_rules! into_score_via_from {
    ($($ty:ty),*) => {$(
        impl IntoScore for $ty {
            fn into_score(self) -> Result<Score, Failure> {
                Ok(Score::from(self))
            }
        }
    )*};
}

into_score_via_from!(f64, f32, bool, (f64, Info), SubScore, Score);

impl<T: IntoScore, E: Display> IntoScore for Result<T, E> {
    fn into_score(self) -> Result<Score, Failure> {
        self.map_err(Failure::message)?.into_score()
    }
}

/// Packages a scoring outcome as a subscore: checks the weight and value, and appends
/// `_parameters` to whatever info the score carried.
pub(crate) fn package(
    name: String,
    weight: f64,
    parameters: Info,
    outcome: Result<Score, Failure>,
) -> Result<SubScore, GraderError> {
    let fail = |failure: Failure| GraderError {
        grader: name.clone(),
        weight,
        parameters: Box::new(parameters.clone()),
        failure,
    };
    let score = checked(weight, outcome, fail)?;
    let mut info = score.info.unwrap_or_else(|| Info::with_capacity(1));
    info.insert(PARAMETERS_KEY.to_owned(), parameters.into());
    Ok(SubScore::from_valid_parts(
        name,
        weight,
        score.value,
        score.children,
        Some(info),
    ))
}

/// The score of an outcome at `weight`, checked: a finite weight, a score rather than a
/// failure, a valid value; otherwise the error `fail` makes of what is wrong.
fn checked(
    weight: f64,
    outcome: Result<Score, Failure>,
    fail: impl Fn(Failure) -> GraderError,
) -> Result<Score, GraderError> {
    if !weight.is_finite() {
        return Err(fail(Failure::InvalidWeight { weight }));
    }
    let score = outcome.map_err(&fail)?;
    if !is_valid_value(score.value) {
        return Err(fail(Failure::InvalidScore { value: score.value }));
    }
    Ok(score)
}

/// As [`package`], with the parameters as the JSON text of an object (as
/// [`Grader::write_parameters`] writes it), kept as text in the subscore.
pub(crate) fn package_recorded(
    name: String,
    weight: f64,
    parameters: Vec<u8>,
    outcome: Result<Score, Failure>,
) -> Result<SubScore, GraderError> {
    let fail = |failure: Failure| GraderError {
        grader: name.clone(),
        weight,
        parameters: Box::new(parse_parameters(&parameters)),
        failure,
    };
    let score = checked(weight, outcome, fail)?;
    if score
        .info
        .as_ref()
        .is_some_and(|info| info.contains_key(PARAMETERS_KEY))
    {
        // The score brought `_parameters` of its own, which the recorded ones replace where
        // they stand: the map does that.
        let parameters = parse_parameters(&parameters);
        return package(name, weight, parameters, Ok(score));
    }
    Ok(SubScore::from_valid_parts_with_parameters(
        name,
        weight,
        score.value,
        score.children,
        score.info,
        parameters,
    ))
}

/// Packages a scoring outcome of a grader that records no parameters (a tree node): as
/// [`package`], without `_parameters`.
pub(crate) fn package_bare(
    name: String,
    weight: f64,
    outcome: Result<Score, Failure>,
) -> Result<SubScore, GraderError> {
    let mut sub = package(name, weight, Info::new(), outcome)?;
    let (info, children) = sub.take_parts();
    let info = info.and_then(|mut info| {
        info.remove(PARAMETERS_KEY);
        (!info.is_empty()).then_some(info)
    });
    if let Some(info) = info {
        sub = sub.with_info(info);
    }
    if let Some(children) = children {
        sub = sub.with_children(children);
    }
    Ok(sub)
}
