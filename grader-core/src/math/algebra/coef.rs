//! The coefficients of normal forms: rationals held in two `i64`s where they fit (most
//! answers' numbers), big rationals otherwise, so that small arithmetic allocates nothing.
//! Every operation on big ones is charged to the [`Budget`].

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive};

use super::limits::{MAX_BITS, Made, too_big};
use crate::math::budget::{Budget, product_cost};

/// A rational: `Small(n, d)` reduced with `d > 0` wherever it fits, `Big` only otherwise (so
/// that equal values have equal representations).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Coef {
    /// `n / d`.
    Small(i64, i64),
    /// A rational that does not fit.
    Big(BigRational),
}

fn gcd(a: i128, b: i128) -> i128 {
    let (a, b) = (a.unsigned_abs(), b.unsigned_abs());
    if let (Ok(a), Ok(b)) = (u64::try_from(a), u64::try_from(b)) {
        // Binary gcd on machine words (a 128-bit division is slow).
        return i128::from(gcd64(a, b));
    }
    let (mut a, mut b) = (a, b);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i128::try_from(a).unwrap_or(i128::MAX)
}

fn gcd64(mut a: u64, mut b: u64) -> u64 {
    if a == 0 {
        return b;
    }
    if b == 0 {
        return a;
    }
    let shift = (a | b).trailing_zeros();
    a >>= a.trailing_zeros();
    loop {
        b >>= b.trailing_zeros();
        if a > b {
            std::mem::swap(&mut a, &mut b);
        }
        b -= a;
        if b == 0 {
            return a << shift;
        }
    }
}

/// The bits of a big rational's larger part.
pub(crate) fn bits(n: &BigRational) -> u64 {
    n.numer().bits().max(n.denom().bits())
}

/// The cost of reducing a fraction of `bits` bits: the binary gcd is quadratic.
fn gcd_cost(bits: u64) -> u64 {
    let words = bits / 64 + 1;
    words.saturating_mul(words)
}

impl Coef {
    pub(crate) const ZERO: Self = Self::Small(0, 1);
    pub(crate) const ONE: Self = Self::Small(1, 1);

    /// `n / d` from wide parts (`d ≠ 0`), reduced.
    fn wide(n: i128, d: i128) -> Self {
        if d == 1
            && let Ok(n) = i64::try_from(n)
        {
            return Self::Small(n, 1);
        }
        let g = gcd(n, d).max(1);
        let (mut n, mut d) = (n / g, d / g);
        if d < 0 {
            (n, d) = (-n, -d);
        }
        match (i64::try_from(n), i64::try_from(d)) {
            (Ok(n), Ok(d)) => Self::Small(n, d),
            _ => Self::Big(BigRational::new_raw(BigInt::from(n), BigInt::from(d))),
        }
    }

    /// From a big rational, small where it fits.
    pub(crate) fn from_big(r: BigRational) -> Self {
        match (r.numer().to_i64(), r.denom().to_i64()) {
            (Some(n), Some(d)) => Self::Small(n, d),
            _ => Self::Big(r),
        }
    }

    /// From a big rational by reference, small where it fits (nothing copied then).
    pub(crate) fn from_ref(r: &BigRational) -> Self {
        match (r.numer().to_i64(), r.denom().to_i64()) {
            (Some(n), Some(d)) => Self::Small(n, d),
            _ => Self::Big(r.clone()),
        }
    }

    pub(crate) fn integer(n: i64) -> Self {
        Self::Small(n, 1)
    }

    /// As a big rational.
    pub(crate) fn to_big(&self) -> BigRational {
        match self {
            Self::Small(n, d) => BigRational::new_raw(BigInt::from(*n), BigInt::from(*d)),
            Self::Big(r) => r.clone(),
        }
    }

    pub(crate) fn is_zero(&self) -> bool {
        matches!(self, Self::Small(0, _))
    }

    pub(crate) fn is_one(&self) -> bool {
        matches!(self, Self::Small(1, 1))
    }

    pub(crate) fn is_integer(&self) -> bool {
        match self {
            Self::Small(_, d) => *d == 1,
            Self::Big(r) => r.is_integer(),
        }
    }

    pub(crate) fn is_negative(&self) -> bool {
        match self {
            Self::Small(n, _) => *n < 0,
            Self::Big(r) => r.is_negative(),
        }
    }

    /// The bits of the larger part.
    pub(crate) fn bits(&self) -> u64 {
        match self {
            Self::Small(n, d) => {
                u64::from(64 - n.unsigned_abs().max(d.unsigned_abs()).leading_zeros())
            }
            Self::Big(r) => bits(r),
        }
    }

    pub(crate) fn neg(&self) -> Self {
        match self {
            Self::Small(n, d) => match n.checked_neg() {
                Some(m) => Self::Small(m, *d),
                None => Self::wide(-i128::from(*n), i128::from(*d)),
            },
            Self::Big(r) => Self::from_big(-r.clone()),
        }
    }

    /// `1 / self` (not zero).
    pub(crate) fn recip(&self) -> Self {
        match self {
            Self::Small(n, d) => Self::wide(i128::from(*d), i128::from(*n)),
            Self::Big(r) => Self::from_big(r.recip()),
        }
    }

    /// `self * other`, charged; nothing past [`MAX_BITS`] is computed.
    pub(crate) fn mul(&self, other: &Self, budget: &mut Budget) -> Made<Self> {
        if let (Self::Small(a, b), Self::Small(c, d)) = (self, other) {
            // Each product of two `i64`s fits an `i128`.
            return Ok(Self::wide(
                i128::from(*a) * i128::from(*c),
                i128::from(*b) * i128::from(*d),
            ));
        }
        let (x, y) = (self.bits(), other.bits());
        if x.saturating_add(y) > MAX_BITS {
            return Err(too_big(budget));
        }
        let (a, b) = (self.to_big(), other.to_big());
        if a.denom().is_one() && b.denom().is_one() {
            // Integers multiply without reducing: a gcd with 1 still costs a binary gcd's
            // quadratic time.
            budget.charge(product_cost(x, y) + 1)?;
            return Ok(Self::from_big(BigRational::from_integer(
                a.numer() * b.numer(),
            )));
        }
        budget
            .charge(product_cost(x, y).saturating_add(gcd_cost(x.max(y)).saturating_mul(2)) + 1)?;
        Ok(Self::from_big(a * b))
    }

    /// `self + other`, charged as [`Coef::mul`].
    pub(crate) fn add(&self, other: &Self, budget: &mut Budget) -> Made<Self> {
        if let (Self::Small(a, b), Self::Small(c, d)) = (self, other) {
            let (a, b, c, d) = (
                i128::from(*a),
                i128::from(*b),
                i128::from(*c),
                i128::from(*d),
            );
            if b == d {
                return Ok(Self::wide(a + c, b));
            }
            if let Some(n) = (a * d).checked_add(c * b) {
                return Ok(Self::wide(n, b * d));
            }
        }
        let (x, y) = (self.bits(), other.bits());
        if x.max(y) > MAX_BITS {
            return Err(too_big(budget));
        }
        let (a, b) = (self.to_big(), other.to_big());
        if a.denom().is_one() && b.denom().is_one() {
            budget.charge(x.max(y) / 64 + 1)?;
            return Ok(Self::from_big(BigRational::from_integer(
                a.numer() + b.numer(),
            )));
        }
        budget.charge(
            product_cost(x, y)
                .saturating_mul(2)
                .saturating_add(gcd_cost(x.saturating_add(y))),
        )?;
        Ok(Self::from_big(a + b))
    }

    /// `self^k` for a natural `k`: numerator and denominator raised apart (a reduced
    /// fraction's powers stay reduced), charged, within [`MAX_BITS`].
    pub(crate) fn pow(&self, k: u64, budget: &mut Budget) -> Made<Self> {
        let estimate = self.bits().saturating_mul(k);
        if estimate > MAX_BITS {
            return Err(too_big(budget));
        }
        if let Self::Small(n, d) = self
            && estimate < 63
        {
            let k = u32::try_from(k).map_err(|_| too_big(budget))?;
            return Ok(Self::wide(i128::from(*n).pow(k), i128::from(*d).pow(k)));
        }
        budget.charge(product_cost(estimate, estimate) + 1)?;
        let k = usize::try_from(k).map_err(|_| too_big(budget))?;
        let big = self.to_big();
        let numer = num_traits::pow(big.numer().clone(), k);
        let denom = num_traits::pow(big.denom().clone(), k);
        Ok(Self::from_big(BigRational::new_raw(numer, denom)))
    }

    /// The floor, as an integer coefficient.
    pub(crate) fn floor(&self) -> Self {
        match self {
            // `d > 0`: Euclid's quotient is the floor.
            Self::Small(n, d) => Self::wide(i128::from(*n).div_euclid(i128::from(*d)), 1),
            Self::Big(r) => Self::from_big(r.floor()),
        }
    }

    pub(crate) fn ceil(&self) -> Self {
        match self {
            Self::Small(n, d) => Self::wide(-((-i128::from(*n)).div_euclid(i128::from(*d))), 1),
            Self::Big(r) => Self::from_big(r.ceil()),
        }
    }

    pub(crate) fn abs(&self) -> Self {
        if self.is_negative() {
            self.neg()
        } else {
            self.clone()
        }
    }

    /// The nearest double.
    pub(crate) fn to_f64(&self) -> f64 {
        match self {
            #[allow(clippy::cast_precision_loss)] // a double's worth is what is asked
            Self::Small(n, d) => *n as f64 / *d as f64,
            Self::Big(r) => crate::math::expr::ratio_f64(r),
        }
    }
}

impl std::fmt::Display for Coef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Small(n, 1) => write!(f, "{n}"),
            Self::Small(n, d) => write!(f, "{n}/{d}"),
            Self::Big(r) => write!(f, "{r}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_big_agree() {
        let mut budget = Budget::new();
        let big = Coef::from_big(BigRational::from_integer(BigInt::from(i64::MAX)));
        assert!(matches!(big, Coef::Small(..)));
        let doubled = big.add(&big, &mut budget).expect("small");
        assert!(matches!(doubled, Coef::Big(_)));
        let back = doubled.add(&big.neg(), &mut budget).expect("small");
        assert_eq!(back, big);
        assert_eq!(
            Coef::Small(3, 4).add(&Coef::Small(1, 4), &mut budget).ok(),
            Some(Coef::ONE)
        );
        assert_eq!(Coef::Small(-7, 2).floor(), Coef::integer(-4));
        assert_eq!(Coef::Small(-7, 2).ceil(), Coef::integer(-3));
        assert_eq!(
            Coef::Small(2, 3).pow(3, &mut budget).ok(),
            Some(Coef::Small(8, 27))
        );
        assert_eq!(
            Coef::Small(i64::MIN, 1).neg(),
            Coef::from_big(BigRational::from_integer(-BigInt::from(i64::MIN)))
        );
    }
}
