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

use super::algebra::{self, Difference, Proportion, Stop, Value};
use super::budget::{Budget, product_cost};
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

/// A number rounded to some decimals, as the integer `k` of `k / 10^places` (in an `i128`
/// where it fits, so that the common case allocates nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Rounded {
    Small(i128),
    Big(BigInt),
}

impl Rounded {
    fn of(k: BigInt) -> Self {
        i128::try_from(&k).map_or(Self::Big(k), Self::Small)
    }
}

/// `n / d` rounded to an integer, ties to even (`d > 0`).
fn div_half_even(n: i128, d: i128) -> i128 {
    let (q, r) = (n.div_euclid(d), n.rem_euclid(d));
    match (2 * r).cmp(&d) {
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal if q % 2 != 0 => q + 1,
        _ => q,
    }
}

/// A rational rounded to `places` decimals, ties to the even digit (sympy's `round`).
fn round_half_even(x: &BigRational, places: u32) -> Rounded {
    let scale = 10_i128.checked_pow(places);
    if let (Some(scale), Ok(n), Ok(d)) =
        (scale, i128::try_from(x.numer()), i128::try_from(x.denom()))
        && let Some(scaled) = n.checked_mul(scale)
    {
        return Rounded::Small(div_half_even(scaled, d));
    }
    let scaled = x * BigRational::from_integer(num_traits::pow(BigInt::from(10), places as usize));
    let floor = scaled.floor();
    let fraction = &scaled - &floor;
    let half = BigRational::new(BigInt::one(), BigInt::from(2));
    let rounded =
        if fraction > half || (fraction == half && (floor.to_integer() % 2 != BigInt::zero())) {
            floor + BigRational::one()
        } else {
            floor
        };
    Rounded::of(rounded.to_integer())
}

/// A double's value to 15 significant digits, as sympy's `Float` holds it, times `10^shift`,
/// rounded to an integer, ties to even: its 15 digits are read as an integer mantissa.
fn round_decimal(x: f64, shift: i32) -> Option<Rounded> {
    if !x.is_finite() {
        return None;
    }
    // The shortest text that reads back as `x` is its 15-digit rounding where it has at most
    // 15 digits (a double's spacing is below half a unit of the 15th digit); the exact
    // 15-digit rounding is formatted only for the others.
    let mut text = format!("{x:e}");
    if text
        .bytes()
        .take_while(|&b| b != b'e')
        .filter(u8::is_ascii_digit)
        .count()
        > 15
    {
        text = format!("{x:.14e}");
    }
    let (mantissa, exponent) = text.split_once('e')?;
    let exponent: i32 = exponent.parse().ok()?;
    let negative = mantissa.starts_with('-');
    let digits: i128 = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .try_fold(0i128, |acc, d| {
            acc.checked_mul(10)?.checked_add(i128::from(d - b'0'))
        })?;
    let signed = if negative { -digits } else { digits };
    let places = mantissa.split_once('.').map_or(0, |(_, f)| f.len());
    // value × 10^shift = signed × 10^(exponent - places + shift).
    let power = exponent
        .checked_sub(i32::try_from(places).ok()?)?
        .checked_add(shift)?;
    if power >= 0 {
        if let Some(k) = 10_i128
            .checked_pow(power.unsigned_abs())
            .and_then(|p| signed.checked_mul(p))
        {
            return Some(Rounded::Small(k));
        }
        let k =
            BigInt::from(signed) * num_traits::pow(BigInt::from(10), power.unsigned_abs() as usize);
        return Some(Rounded::of(k));
    }
    if power < -20 {
        return Some(Rounded::Small(0));
    }
    Some(Rounded::Small(div_half_even(
        signed,
        10_i128.pow(power.unsigned_abs()),
    )))
}

/// A double's value to 15 significant digits, exactly, as sympy's `Float` holds it.
#[cfg(test)]
fn decimal_of(x: f64) -> Option<BigRational> {
    let k = match round_decimal(x, 40)? {
        Rounded::Small(k) => BigInt::from(k),
        Rounded::Big(k) => k,
    };
    Some(BigRational::new(k, num_traits::pow(BigInt::from(10), 40)))
}

/// `x.round(places)` for a number: exactly for a rational, on its 15 significant digits for
/// a decimal or an irrational number; `None` where `x` is not a number.
fn rounded(x: &Expr, places: u32, ctx: &mut Ctx<'_>) -> Result<Option<Rounded>, MathError> {
    // `10^places` is worked out: its products are counted, so that a rounding to more places
    // than any number holds fails typed instead of filling memory.
    let bits = u64::from(places) * 10 / 3 + 1;
    ctx.budget.charge(product_cost(bits, bits))?;
    let shift = i32::try_from(places).unwrap_or(i32::MAX);
    match x {
        Expr::Float(f) => Ok(round_decimal(*f, shift)),
        Expr::Percent(inner) if matches!(**inner, Expr::Float(_)) => {
            let Expr::Float(f) = **inner else {
                return Ok(None);
            };
            Ok(round_decimal(f, shift - 2))
        }
        other => Ok(match exact_or_approx(other, ctx)? {
            Some(Approx::Exact(v)) => Some(round_half_even(&v, places)),
            Some(Approx::Decimal(f)) => round_decimal(f, shift),
            None => None,
        }),
    }
}

/// A number's value: exact, or a double where it is irrational.
enum Approx {
    Exact(BigRational),
    Decimal(f64),
}

/// A number's exact value, or its double where it is irrational.
fn exact_or_approx(x: &Expr, ctx: &mut Ctx<'_>) -> Result<Option<Approx>, MathError> {
    if x.has_symbols() {
        return Ok(None);
    }
    if !x.has_float() {
        match algebra::normal_form(x, ctx.budget) {
            Ok(v) => {
                if let Some(c) = v.as_constant() {
                    return Ok(Some(Approx::Exact(c)));
                }
                if v.has_variables() {
                    return Ok(None);
                }
            }
            Err(Stop::Bound(error)) => return Err(error),
            Err(Stop::NotExact) => {}
        }
    }
    let value = x.eval(&|_| f64::NAN);
    Ok(value.is_finite().then_some(Approx::Decimal(value)))
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
    Inexact,
}

/// The exact comparison of two expressions without decimals (the callers compare those
/// numerically first).
fn exact_difference(a: &Expr, b: &Expr, ctx: &mut Ctx<'_>) -> Result<Exact, MathError> {
    debug_assert!(!a.has_float() && !b.has_float());
    // Products of large powers compare by their exponents, without working out numbers of
    // any size (exactly: math-verify's chop needs the values, so not under parity).
    if !ctx.parity() && (algebra::has_large_powers(a) || algebra::has_large_powers(b)) {
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
        Err(Stop::NotExact) => Ok(Exact::Inexact),
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
    let bits = precision_bits(precision);
    let threshold = 2f64.powi(-i32::try_from(bits + 1).unwrap_or(i32::MAX));
    if !d.has_variables() {
        if let Some(c) = d.as_constant() {
            let magnitude = c.abs();
            let limit = BigRational::new(BigInt::one(), BigInt::one() << (bits + 1));
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
    let rounded = |p: &algebra::Poly| -> std::collections::BTreeMap<_, _> {
        p.coefficients()
            .map(|(m, c)| (m.clone(), rounded_bits(&c.to_big(), bits + 4)))
            .collect()
    };
    rounded(pa) == rounded(pb)
}

/// sympy's `dps_to_prec`: the bits of `precision` decimal digits.
fn precision_bits(precision: u32) -> u64 {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // at most 1.5e10
    let bits = ((f64::from(precision) + 1.0) * std::f64::consts::LOG2_10).round() as u64;
    bits
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
        } else if let (Some(x), Some(y)) = (integer_value(a), integer_value(b))
            && x == y
        {
            return Ok(true);
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
            if atomic || !ctx.parity() {
                return Ok(false);
            }
            // Numbers of `precision` digits are worked out: their products are counted.
            let bits = precision_bits(ctx.options.numeric_precision);
            ctx.budget.charge(product_cost(bits, bits))?;
            Ok(chopped(&va, &vb, &d, ctx.options.numeric_precision))
        }
        Exact::Nonzero(None) => Ok(false),
        // Functions exact algebra does not reduce, or not a value (infinity): evaluated.
        Exact::Unknown | Exact::Inexact => Ok(numeric_at_points(a, b, close_unknown)),
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
        Exact::Unknown | Exact::Inexact => Ok(numeric_at_points(a, b, close_unknown)),
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
                Ok(Proportion::Constant(k)) => {
                    let approx = k.approx();
                    let sign_ok = match sign {
                        1 => approx > 0.0,
                        -1 => approx < 0.0,
                        _ => approx != 0.0,
                    };
                    return Ok(sign_ok && approx.is_finite());
                }
                Ok(Proportion::Not) => return Ok(false),
                Ok(Proportion::Unknown) | Err(Stop::NotExact) => {}
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
        let r = |s: &str| BigRational::new(s.parse().expect("digits"), 10_000_000.into());
        assert_eq!(round_half_even(&r("5"), 6), Rounded::Small(0));
        assert_eq!(round_half_even(&r("15"), 6), Rounded::Small(2));
        assert_eq!(round_half_even(&r("25"), 6), Rounded::Small(2));
        assert_eq!(round_half_even(&r("-25"), 6), Rounded::Small(-2));
        assert_eq!(decimal_of(0.1), Some(BigRational::new(1.into(), 10.into())));
        assert_eq!(round_decimal(0.000_002_5, 6), Some(Rounded::Small(2)));
        assert_eq!(round_decimal(0.000_001_5, 6), Some(Rounded::Small(2)));
        assert_eq!(round_decimal(0.333_333_5, 6), Some(Rounded::Small(333_334)));
        assert_eq!(
            round_decimal(1e30, 6),
            Some(Rounded::of(BigInt::from(10).pow(36)))
        );
    }
}
