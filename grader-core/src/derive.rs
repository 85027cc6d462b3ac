//! Run-time support for `#[derive(Grader)]`: turning what the user's score method returns into
//! a score, with compile errors in the derive's own words when it returns something else.
//! Reached only through [`__private`](crate::__private).

use std::future::Future;

use crate::error::Failure;
use crate::grader::IntoScore;
use crate::score::Score;

/// What a synchronous score method may return: anything a `#[grader]` function may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a score a `#[derive(Grader)]` score method can return",
    label = "not a score type",
    note = "a score method returns `f64`, `f32`, `bool`, `(f64, grader_core::Info)`, \
            `grader_core::SubScore`, or a `Result<_, E: Display>` of one of those",
    note = "an `async fn` score method is named with `async`: `#[grader(score = async method)]`"
)]
pub trait ScoreMethodOutput {
    /// Converts into a score, or the failure an `Err` stands for.
    ///
    /// # Errors
    /// As [`IntoScore::into_score`].
    fn into_method_score(self) -> Result<Score, Failure>;
}

impl<T: IntoScore> ScoreMethodOutput for T {
    #[inline]
    fn into_method_score(self) -> Result<Score, Failure> {
        self.into_score()
    }
}

/// What an `async` score method may return: a future of a score.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a future: the score method is named with `async` but is not an \
               `async fn`",
    label = "not a future",
    note = "a synchronous score method is named without `async`: `#[grader(score = method)]`"
)]
pub trait AsyncScoreMethodOutput: Future<Output = Self::Value> {
    /// What the future resolves to.
    type Value: IntoScore;
}

impl<F: Future> AsyncScoreMethodOutput for F
where
    F::Output: IntoScore,
{
    type Value = F::Output;
}

/// Converts what a synchronous score method returned.
///
/// # Errors
/// As [`IntoScore::into_score`].
#[inline]
pub fn score_method<T: ScoreMethodOutput>(value: T) -> Result<Score, Failure> {
    value.into_method_score()
}

/// Awaits what an `async` score method returned and converts it.
///
/// # Errors
/// As [`IntoScore::into_score`].
pub async fn score_method_async<F: AsyncScoreMethodOutput>(future: F) -> Result<Score, Failure> {
    future.await.into_score()
}
