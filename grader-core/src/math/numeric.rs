//! math-verify's `sympy_numeric_eq` and `sympy_symbolic_eq`, and `solve`'s stand-in for
//! relations, on exact normal forms ([`algebra`](super::algebra)): two exact values are equal
//! exactly when their forms are (SPEC D36); a decimal is rounded to `float_rounding` decimals
//! where it stands alone, and compared to 15 significant digits inside an expression; what
//! exact algebra cannot decide (functions, logarithms, symbolic powers) is evaluated at
//! several points. [`Semantics::Parity`] adds math-verify's own approximations back: a
//! constant difference below 2⁻⁵⁴ (sympy's `evalf(chop=True)`) and coefficients equal to 15
//! digits count as equal.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};

use super::algebra::{self, Difference, Ratio, Stop, Value};
use super::budget::Budget;
use super::config::{Semantics, VerifyOptions};
use super::error::MathError;
use super::expr::Expr;

/// What a comparison carries: its options and its budget.
pub(crate) struct Ctx<'a> {
    pub options: &'a VerifyOptions,
    pub budget: &'a mut Budget,
}

impl Ctx<'_> {
    pub(crate) fn parity(&self) -> bool {
        self.options.semantics == Semantics::Parity
    }
}

/// The values variables take in the comparisons of expressions, one set per trial.
const TRIALS: [f64; 3] = [0.737_309_4, 1.311_867_5, 2.094_395_1];

/// A variable's value in a trial: different for each name and trial.
pub(crate) fn value_of(name: &str, trial: usize) -> f64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    #[allow(clippy::cast_precision_loss)] // a fraction of the hash
    let fraction = (h >> 11) as f64 / (1u64 << 53) as f64;
    TRIALS[trial % TRIALS.len()] + fraction
}

/// Whether two evaluations of values exact algebra could not decide agree.
fn close_unknown(a: f64, b: f64) -> bool {
    if a == b {
        return true;
    }
    let d = (a - b).abs();
    d <= 1e-10 * a.abs().max(b.abs()) || d <= 1e-12
}

/// Whether two evaluations of expressions holding decimals agree to about 15 digits.
fn close_decimal(a: f64, b: f64) -> bool {
    if a == b {
        return true;
    }
    let d = (a - b).abs();
    d <= 1e-13 * a.abs().max(b.abs()) || d < 2f64.powi(-54)
}

/// Whether `x` is a number or the percentage of one; `Some(true)` for a decimal.
fn atomic_number(x: &Expr) -> Option<bool> {
    match x {
        Expr::Num(_) => Some(false),
        Expr::Float(_) => Some(true),
        Expr::Percent(inner) => match **inner {
            Expr::Num(_) => Some(false),
            Expr::Float(_) => Some(true),
            _ => None,
        },
        _ => None,
    }
}

fn integer_value(x: &Expr) -> Option<&BigRational> {
    match x {
        Expr::Num(n) if n.is_integer() => Some(n),
        Expr::Percent(inner) => match &**inner {
            Expr::Num(n) if n.is_integer() => Some(n),
            _ => None,
        },
        _ => None,
    }
}

/// A rational rounded to `places` decimals, ties to the even digit (sympy's `round`).
fn round_half_even(x: &BigRational, places: u32) -> BigRational {
    let scale = BigRational::from_integer(num_traits::pow(BigInt::from(10), places as usize));
    let scaled = x * &scale;
    let floor = scaled.floor();
    let fraction = &scaled - &floor;
    let half = BigRational::new(BigInt::one(), BigInt::from(2));
    let rounded =
        if fraction > half || (fraction == half && (floor.to_integer() % 2 != BigInt::zero())) {
            floor + BigRational::one()
        } else {
            floor
        };
    rounded / scale
}

/// A double's value to 15 significant digits, exactly, as sympy's `Float` holds it.
fn decimal_of(x: f64) -> Option<BigRational> {
    if !x.is_finite() {
        return None;
    }
    let text = format!("{x:.14e}");
    let (mantissa, exponent) = text.split_once('e')?;
    let exponent: i32 = exponent.parse().ok()?;
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let mut value = BigRational::from_integer(digits.parse::<BigInt>().ok()?);
    let shift = exponent - 14;
    let ten = BigRational::from_integer(BigInt::from(10));
    let power = num_traits::pow(ten, shift.unsigned_abs() as usize);
    value = if shift >= 0 {
        value * power
    } else {
        value / power
    };
    Some(if negative { -value } else { value })
}

/// `x.round(places)` for a number: exactly for a rational, on its 15 significant digits for
/// a decimal or an irrational number; `None` where `x` is not a number.
fn rounded(x: &Expr, places: u32, ctx: &mut Ctx<'_>) -> Result<Option<BigRational>, MathError> {
    let value = match x {
        Expr::Float(f) => decimal_of(*f),
        Expr::Percent(inner) => match &**inner {
            Expr::Float(f) => {
                decimal_of(*f).map(|d| d / BigRational::from_integer(BigInt::from(100)))
            }
            other => exact_or_approx(&Expr::Percent(Box::new(other.clone())), ctx)?,
        },
        other => exact_or_approx(other, ctx)?,
    };
    Ok(value.map(|v| round_half_even(&v, places)))
}

/// A number's exact value, or its 15-digit decimal where it is irrational.
fn exact_or_approx(x: &Expr, ctx: &mut Ctx<'_>) -> Result<Option<BigRational>, MathError> {
    if x.has_symbols() {
        return Ok(None);
    }
    if !x.has_float() {
        match algebra::normal_form(x, ctx.budget) {
            Ok(v) => {
                if let Some(c) = v.as_constant() {
                    return Ok(Some(c));
                }
                if v.has_variables() {
                    return Ok(None);
                }
            }
            Err(Stop::Bound(error)) => return Err(error),
            Err(Stop::NotExact) => {}
        }
    }
    Ok(decimal_of(x.eval(&|_| f64::NAN)))
}

/// What exact algebra says of two expressions.
enum Exact {
    /// The same value.
    Zero,
    /// Different values: their forms and the difference's, where they were worked out
    /// (`None` for products of powers compared by their exponents).
    Nonzero(Option<(Value, Value, Value)>),
    /// Not decided.
    Unknown,
    /// One is not an exact value.
    NotExact,
}

/// The exact comparison of two expressions.
fn exact_difference(a: &Expr, b: &Expr, ctx: &mut Ctx<'_>) -> Result<Exact, MathError> {
    if a.has_float() || b.has_float() {
        return Ok(Exact::NotExact);
    }
    // Products of powers compare by their exponents, without working out numbers of any
    // size (exactly: math-verify's chop needs the values, so not under parity).
    if !ctx.parity() {
        match algebra::factored(a, b, ctx.budget)? {
            Some(true) => return Ok(Exact::Zero),
            Some(false) => return Ok(Exact::Nonzero(None)),
            None => {}
        }
    }
    match algebra::difference(a, b, ctx.budget) {
        Ok((va, vb, Difference::Nonzero(d))) => Ok(Exact::Nonzero(Some((va, vb, d)))),
        Ok((_, _, Difference::Zero)) => Ok(Exact::Zero),
        Ok((_, _, Difference::Unknown(_))) => Ok(Exact::Unknown),
        Err(Stop::NotExact) => Ok(Exact::NotExact),
        Err(Stop::Bound(error)) => {
            if !matches!(error, MathError::TooMuchWork { .. }) {
                return Err(error);
            }
            // Too large to work out: products of powers still compare by their exponents.
            let mut fresh = Budget::with_work(ctx.budget.limit());
            match algebra::factored(a, b, &mut fresh)? {
                Some(true) => Ok(Exact::Zero),
                Some(false) => Ok(Exact::Nonzero(None)),
                None => Err(error),
            }
        }
    }
}

/// math-verify's chop: whether sympy's `(a - b).evalf(chop=True, n=precision) == 0` holds for
/// a proven nonzero difference (a constant below `2^-(bits + 1)`, or coefficients equal to
/// `precision` significant digits).
fn chopped(va: &Value, vb: &Value, d: &Value, precision: u32) -> bool {
    // sympy's `dps_to_prec`.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let bits = ((f64::from(precision) + 1.0) * std::f64::consts::LOG2_10).round() as i32;
    let threshold = 2f64.powi(-(bits + 1));
    if !d.has_variables() {
        if let Some(c) = d.as_constant() {
            let magnitude = c.abs();
            let limit = BigRational::new(BigInt::one(), BigInt::one() << (bits + 1) as usize);
            return magnitude < limit;
        }
        let approx = d.approx();
        return approx.is_finite() && approx.abs() < threshold;
    }
    // With variables: sympy evaluates each term's coefficient to `bits + 4` bits before the
    // terms cancel (`2^{64}x - (2^{64}-1)x` is 0, `2^{51}x - (2^{51}-1)x` is not).
    let (Some(pa), Some(pb)) = (va.polynomial(), vb.polynomial()) else {
        return false;
    };
    let precision_bits = u64::try_from(bits + 4).unwrap_or(57);
    let rounded = |p: &algebra::Poly| -> std::collections::BTreeMap<_, _> {
        p.coefficients()
            .map(|(m, c)| (m.clone(), rounded_bits(c, precision_bits)))
            .collect()
    };
    rounded(pa) == rounded(pb)
}

/// `c` rounded to `bits` significant bits, ties to even (mpmath's rounding): its sign, its
/// mantissa and its binary exponent.
fn rounded_bits(c: &BigRational, bits: u64) -> (bool, BigInt, i64) {
    use num_integer::Integer;
    if c.is_zero() {
        return (false, BigInt::zero(), 0);
    }
    let negative = c.is_negative();
    let a = c.abs();
    let (n, d) = (a.numer(), a.denom());
    #[allow(clippy::cast_possible_wrap)] // bit counts of bounded numbers
    let shift = (bits as i64 + 2) - (n.bits() as i64 - d.bits() as i64);
    let (num, den) = if shift >= 0 {
        (n << shift.unsigned_abs(), d.clone())
    } else {
        (n.clone(), d << shift.unsigned_abs())
    };
    let (q, r) = num.div_rem(&den);
    let extra = q.bits().saturating_sub(bits).max(1);
    let mut mantissa = &q >> extra;
    let rest = &q - (&mantissa << extra);
    let half = BigInt::one() << (extra - 1);
    if rest > half || (rest == half && (!r.is_zero() || mantissa.is_odd())) {
        mantissa += 1;
    }
    let mut exponent = i64::try_from(extra).unwrap_or(i64::MAX) - shift;
    if mantissa.bits() > bits {
        mantissa >>= 1;
        exponent += 1;
    }
    (negative, mantissa, exponent)
}

/// math-verify's `sympy_numeric_eq(a, b) or sympy_symbolic_eq(a, b)`, the exact comparison
/// made once for both.
pub(crate) fn values_eq(a: &Expr, b: &Expr, ctx: &mut Ctx<'_>) -> Result<bool, MathError> {
    if let (Some((ra, wa, ca)), Some((rb, wb, cb))) = (matrix_value(a), matrix_value(b)) {
        if (ra, wa) != (rb, wb) {
            return Ok(false);
        }
        for (x, y) in ca.iter().zip(&cb) {
            if !values_eq(x, y, ctx)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    if matches!(a, Expr::Matrix(..)) || matches!(b, Expr::Matrix(..)) || a.is_set() || b.is_set() {
        return Ok(false);
    }
    let (ka, kb) = (atomic_number(a), atomic_number(b));
    let atomic = ka.is_some() || kb.is_some();
    if atomic {
        // `sympy_numeric_eq` on a number: rounded where one is a decimal, else exact.
        if ka == Some(true) || kb == Some(true) {
            let places = ctx.options.float_rounding;
            if let (Some(x), Some(y)) = (rounded(a, places, ctx)?, rounded(b, places, ctx)?)
                && x == y
            {
                return Ok(true);
            }
        } else if let (Some(x), Some(y)) = (integer_value(a), integer_value(b)) {
            if x == y {
                return Ok(true);
            }
        }
    }
    if a.has_float() || b.has_float() {
        // Decimals inside expressions: equal to about 15 digits.
        return Ok(numeric_at_points(a, b, close_decimal));
    }
    match exact_difference(a, b, ctx)? {
        Exact::Zero => Ok(true),
        // sympy's `evalf(chop=True)` of the difference, not for a number alone.
        Exact::Nonzero(Some((va, vb, d))) => {
            Ok(!atomic && ctx.parity() && chopped(&va, &vb, &d, ctx.options.numeric_precision))
        }
        Exact::Nonzero(None) => Ok(false),
        // Functions exact algebra does not reduce, or not a value (infinity): evaluated.
        Exact::Unknown | Exact::NotExact => Ok(numeric_at_points(a, b, close_unknown)),
    }
}

/// sympy's `a.equals(b)`: the same value, exactly where exact algebra decides, to about 15
/// digits where a side holds a decimal, by evaluation at several points elsewhere (no
/// rounding to `float_rounding`, no chop: Inspect's `math()` compares so).
pub(crate) fn same_value(a: &Expr, b: &Expr, ctx: &mut Ctx<'_>) -> Result<bool, MathError> {
    if a.has_float() || b.has_float() {
        return Ok(numeric_at_points(a, b, close_decimal));
    }
    match exact_difference(a, b, ctx)? {
        Exact::Zero => Ok(true),
        Exact::Nonzero(_) => Ok(false),
        Exact::Unknown | Exact::NotExact => Ok(numeric_at_points(a, b, close_unknown)),
    }
}

/// Whether `a` and `b` agree at every trial point where both are finite (and at one at least).
fn numeric_at_points(a: &Expr, b: &Expr, close: fn(f64, f64) -> bool) -> bool {
    let mut agreed = 0;
    for trial in 0..TRIALS.len() {
        let var = |name: &str| value_of(name, trial);
        let (x, y) = (a.eval(&var), b.eval(&var));
        if !(x.is_finite() && y.is_finite()) {
            continue;
        }
        if !close(x, y) {
            return false;
        }
        agreed += 1;
    }
    agreed > 0
}

/// Whether `a = k·b` for one constant `k` (positive where `sign` is 1, negative for -1, any
/// nonzero for 0): sympy's `solve` giving the same solutions, for the relations answers hold.
pub(crate) fn proportional(
    a: &Expr,
    b: &Expr,
    sign: i32,
    ctx: &mut Ctx<'_>,
) -> Result<bool, MathError> {
    if a.symbols() != b.symbols() {
        return Ok(false);
    }
    if !a.has_float() && !b.has_float() {
        let forms = (
            algebra::normal_form(a, ctx.budget),
            algebra::normal_form(b, ctx.budget),
        );
        match forms {
            (Ok(va), Ok(vb)) => match algebra::constant_ratio(&va, &vb, ctx.budget) {
                Ok(Ratio::Constant(k)) => {
                    let approx = k.approx();
                    let sign_ok = match sign {
                        1 => approx > 0.0,
                        -1 => approx < 0.0,
                        _ => approx != 0.0,
                    };
                    return Ok(sign_ok && approx.is_finite());
                }
                Ok(Ratio::Not) => return Ok(false),
                Ok(Ratio::Unknown) | Err(Stop::NotExact) => {}
                Err(Stop::Bound(error)) => return Err(error),
            },
            (Err(Stop::Bound(error)), _) | (_, Err(Stop::Bound(error))) => return Err(error),
            _ => {}
        }
    }
    let mut ratio: Option<f64> = None;
    for trial in 0..TRIALS.len() {
        let var = |name: &str| value_of(name, trial);
        let (x, y) = (a.eval(&var), b.eval(&var));
        if !(x.is_finite() && y.is_finite()) || y == 0.0 {
            return Ok(false);
        }
        let r = x / y;
        if r == 0.0 || (sign > 0 && r < 0.0) || (sign < 0 && r > 0.0) {
            return Ok(false);
        }
        match ratio {
            None => ratio = Some(r),
            Some(k) if close_unknown(k, r) => {}
            Some(_) => return Ok(false),
        }
    }
    Ok(ratio.is_some())
}

/// A matrix expression's value: sums and products of matrices worked out cell by cell.
pub(crate) fn matrix_value(x: &Expr) -> Option<(usize, usize, Vec<Expr>)> {
    match x {
        Expr::Matrix(rows, cells) if *rows > 0 => Some((*rows, cells.len() / rows, cells.clone())),
        Expr::Add(items) => {
            let mut parts = items.iter().map(matrix_value);
            let (r, c, mut cells) = parts.next()??;
            for part in parts {
                let (r2, c2, other) = part?;
                if (r2, c2) != (r, c) {
                    return None;
                }
                cells = cells
                    .into_iter()
                    .zip(other)
                    .map(|(a, b)| Expr::Add(vec![a, b]))
                    .collect();
            }
            Some((r, c, cells))
        }
        Expr::Mul(items) if items.len() == 2 => {
            let (r1, c1, a) = matrix_value(&items[0])?;
            let (r2, c2, b) = matrix_value(&items[1])?;
            if c1 != r2 || r1 * c2 > 1024 {
                return None;
            }
            let mut cells = Vec::with_capacity(r1 * c2);
            for i in 0..r1 {
                for j in 0..c2 {
                    let terms = (0..c1)
                        .map(|k| Expr::Mul(vec![a[i * c1 + k].clone(), b[k * c2 + j].clone()]))
                        .collect();
                    cells.push(Expr::Add(terms));
                }
            }
            Some((r1, c2, cells))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_half_even_on_decimals() {
        let r = |s: &str| BigRational::new(s.parse().unwrap(), 10_000_000.into());
        assert_eq!(round_half_even(&r("5"), 6), BigRational::zero());
        assert_eq!(round_half_even(&r("15"), 6), r("20"));
        assert_eq!(round_half_even(&r("25"), 6), r("20"));
        assert_eq!(decimal_of(0.1), Some(BigRational::new(1.into(), 10.into())));
    }
}
