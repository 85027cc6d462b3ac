//! Where making a normal form stops: the bound on a number's size, the exponents' arithmetic
//! within it, and why a form was not made.

use num_rational::Ratio;
use num_traits::CheckedMul;

use crate::math::budget::Budget;
use crate::math::error::MathError;

/// The most bits of a number worked out exactly (about 300 000 digits).
pub(crate) const MAX_BITS: u64 = 1 << 20;

/// An atom's exponent: a small rational (a larger one is a named power).
pub(crate) type Exp = Ratio<i64>;

/// Why a normal form was not made.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The expression is not an exact value (a decimal, infinity, a set, a relation, a
    /// division by zero).
    NotExact,
    /// A bound of the work.
    Bound(MathError),
}

impl From<MathError> for Stop {
    fn from(error: MathError) -> Self {
        Self::Bound(error)
    }
}

/// A part of a normal form, or why it was not made.
pub(crate) type Made<T> = Result<T, Stop>;

/// The bound of the work, as the reason a form was not made.
pub(crate) fn too_big(budget: &Budget) -> Stop {
    Stop::Bound(MathError::TooMuchWork {
        grader: "math",
        limit: budget.limit(),
    })
}

/// The product of two exponents, or the bound where it does not fit.
pub(crate) fn exp_mul(a: &Exp, b: &Exp, budget: &Budget) -> Made<Exp> {
    a.checked_mul(b).ok_or_else(|| too_big(budget))
}
