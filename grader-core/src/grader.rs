//! The [`Grader`] trait: what `#[grader]` types, hand-written graders and
//! `BashGrader` have in common, and how a score becomes a [`SubScore`].

use std::borrow::Cow;
use std::fmt::Display;
use std::future::Future;

use crate::error::{Failure, GraderError};
use crate::score::{Info, Score, SubScore, is_valid_value};

/// The key under which a grade records its grader's arguments in the subscore's info.
pub const PARAMETERS_KEY: &str = "_parameters";

/// A reusable check that produces a score: the reference's `Grader` class.
///
/// A grader is a value holding its inputs. [`grade`](Self::grade) records them under
/// `_parameters` (before the check runs), runs [`score`](Self::score), and packages the outcome
/// as a [`SubScore`] with the grader's name and the weight given. Most graders come from
/// `#[grader]` on a function; writing one by hand takes a struct with named fields and three
/// methods:
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
/// The futures returned by [`grade`](Self::grade) are `Send` whenever the grader's
/// [`score`](Self::score) future is, which the compiler knows for every concrete grader.
pub trait Grader: Sized {
    /// The subscore's name when [`grade`](Self::grade) is given no other.
    fn name(&self) -> Cow<'_, str>;

    /// A JSON-safe copy of the grader's inputs, recorded under `_parameters`. See
    /// [`params`](crate::params). The default records nothing.
    fn parameters(&self) -> Info {
        Info::new()
    }

    /// Runs the check. The value is validated by [`grade`](Self::grade): a NaN, an infinity or
    /// a value outside `[0, 1]` becomes a [`Failure::InvalidScore`], never a clamped score.
    fn score(self) -> impl Future<Output = Result<Score, Failure>>;

    /// Runs the grader and packages its outcome as a [`SubScore`] named after the grader.
    ///
    /// # Errors
    /// A [`GraderError`] naming the grader when the check fails, returns an invalid value, or
    /// `weight` is not finite.
    fn grade(self, weight: f64) -> impl Future<Output = Result<SubScore, GraderError>> {
        let name = self.name().into_owned();
        self.grade_named(weight, name)
    }

    /// As [`grade`](Self::grade), under another name (the reference's `name=` override).
    ///
    /// # Errors
    /// As [`grade`](Self::grade).
    fn grade_named(
        self,
        weight: f64,
        name: impl Into<String>,
    ) -> impl Future<Output = Result<SubScore, GraderError>> {
        let name = name.into();
        let parameters = self.parameters();
        let scoring = self.score();
        async move { package(name, weight, parameters, scoring.await) }
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
    if !weight.is_finite() {
        return Err(fail(Failure::InvalidWeight { weight }));
    }
    let score = match outcome {
        Ok(score) => score,
        Err(failure) => return Err(fail(failure)),
    };
    if !is_valid_value(score.value) {
        return Err(fail(Failure::InvalidScore { value: score.value }));
    }
    let mut info = score.info.unwrap_or_default();
    info.insert(PARAMETERS_KEY.to_owned(), parameters.into());
    Ok(SubScore::from_valid_parts(
        name,
        weight,
        score.value,
        score.children,
        Some(info),
    ))
}
