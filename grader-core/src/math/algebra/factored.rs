//! Products of powers of rationals compared by their exponents over a coprime basis: the
//! exact route for values too large to work out (`99^{2340}` multiplied 265 times).

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};

use super::{Budget, Stop, normal_form};
use crate::math::budget::product_cost;
use crate::math::error::MathError;
use crate::math::expr::Expr;

/// A product of powers of rationals, compared by its exponents over a coprime basis: the
/// exact route for values too large to work out (`99^{2340}` multiplied 265 times).
///
/// `Some(equal)` where both sides are such products (`±`, rationals, their powers with
/// rational exponents of any size, products and quotients of those), `None` otherwise.
pub(crate) fn factored(a: &Expr, b: &Expr, budget: &mut Budget) -> Result<Option<bool>, MathError> {
    let (Some(fa), Some(fb)) = (factors(a, budget)?, factors(b, budget)?) else {
        return Ok(None);
    };
    let (sa, pa) = fa;
    let (sb, pb) = fb;
    if pa.is_empty() || pb.is_empty() {
        // A zero on a side: equal only if both are zero.
        return Ok(Some(pa.is_empty() && pb.is_empty() && sa == 0 && sb == 0));
    }
    if sa != sb {
        return Ok(Some(false));
    }
    // Every base's numerator and denominator, split into pairwise coprime numbers.
    let mut basis: Vec<BigInt> = Vec::new();
    for (base, _) in pa.iter().chain(&pb) {
        for n in [base.numer(), base.denom()] {
            insert_coprime(&mut basis, n.clone(), budget)?;
        }
    }
    let exponents = |parts: &[(BigRational, BigRational)],
                     budget: &mut Budget|
     -> Result<Vec<BigRational>, MathError> {
        let mut out = vec![BigRational::zero(); basis.len()];
        for (base, e) in parts {
            for (n, sign) in [(base.numer(), 1), (base.denom(), -1)] {
                let mut n = n.clone();
                for (i, b) in basis.iter().enumerate() {
                    let mut k = 0u64;
                    loop {
                        budget.charge(product_cost(n.bits(), b.bits()) + 1)?;
                        let (q, r) = n.div_rem(b);
                        if !r.is_zero() {
                            break;
                        }
                        n = q;
                        k += 1;
                    }
                    if k > 0 {
                        let term = e * BigRational::from_integer(BigInt::from(k) * sign);
                        out[i] += term;
                    }
                }
            }
        }
        Ok(out)
    };
    let ea = exponents(&pa, budget)?;
    let eb = exponents(&pb, budget)?;
    Ok(Some(ea == eb))
}

/// Whether an expression holds a power whose exponent is not a small number (`99^{2340}`,
/// `2^{10^{100}}`, `x^{n}`): only then can the exponents decide what the normal form would
/// spend its budget on, so only then are they compared first.
pub(crate) fn has_large_powers(x: &Expr) -> bool {
    let small = |k: &BigRational| k.numer().bits() <= 6 && k.denom().bits() <= 6;
    x.any(|e| {
        let Expr::Pow(_, exponent) = e else {
            return false;
        };
        let small = match &**exponent {
            Expr::Num(k) => small(k),
            // `n/2` is `n · 2^{-1}`.
            Expr::Mul(items) => items.iter().all(|i| match i {
                Expr::Num(k) => small(k),
                Expr::Pow(b, e) => {
                    matches!(&**b, Expr::Num(k) if small(k) && k.is_integer())
                        && matches!(&**e, Expr::Num(k) if k == &-BigRational::one())
                }
                _ => false,
            }),
            _ => false,
        };
        !small
    })
}

/// Adds `n` to a set of pairwise coprime integers above 1, splitting by gcds.
fn insert_coprime(
    basis: &mut Vec<BigInt>,
    n: BigInt,
    budget: &mut Budget,
) -> Result<(), MathError> {
    let mut pending = vec![n.abs()];
    while let Some(mut n) = pending.pop() {
        if n <= BigInt::one() {
            continue;
        }
        let mut i = 0;
        while i < basis.len() {
            budget.charge(product_cost(n.bits(), basis[i].bits()) * 4 + 1)?;
            let g = n.gcd(&basis[i]);
            if g.is_one() {
                i += 1;
                continue;
            }
            let b = basis.swap_remove(i);
            let rest_b = &b / &g;
            let rest_n = &n / &g;
            pending.push(rest_b);
            pending.push(g);
            n = rest_n;
            if n.is_one() {
                break;
            }
            i = 0;
        }
        if n > BigInt::one() {
            basis.push(n);
        }
        if basis.len() > 4_096 {
            return Err(MathError::TooMuchWork {
                grader: "math",
                limit: budget.limit(),
            });
        }
    }
    Ok(())
}

/// The sign (1, -1, or 0 for zero) and the rational bases with their exponents of a product
/// of powers; `None` for anything else.
#[allow(clippy::type_complexity)]
fn factors(
    x: &Expr,
    budget: &mut Budget,
) -> Result<Option<(i32, Vec<(BigRational, BigRational)>)>, MathError> {
    budget.charge(1)?;
    match x {
        Expr::Num(n) => Ok(Some(if n.is_zero() {
            (0, Vec::new())
        } else {
            (
                if n.is_negative() { -1 } else { 1 },
                vec![(n.abs(), BigRational::one())],
            )
        })),
        Expr::Percent(inner) => {
            let Some((s, mut parts)) = factors(inner, budget)? else {
                return Ok(None);
            };
            parts.push((BigRational::from_integer(100.into()), -BigRational::one()));
            Ok(Some((s, parts)))
        }
        Expr::Mul(items) => {
            let mut sign = 1;
            let mut parts = Vec::new();
            for item in items {
                let Some((s, p)) = factors(item, budget)? else {
                    return Ok(None);
                };
                sign *= s;
                parts.extend(p);
            }
            Ok(Some((sign, if sign == 0 { Vec::new() } else { parts })))
        }
        Expr::Pow(base, exponent) => {
            let Some((s, parts)) = factors(base, budget)? else {
                return Ok(None);
            };
            let e = match normal_form(exponent, budget) {
                Ok(v) => v.as_constant(),
                Err(Stop::NotExact) => None,
                Err(Stop::Bound(error)) => return Err(error),
            };
            let Some(e) = e else {
                return Ok(None);
            };
            if s == 0 {
                return Ok(if e.is_positive() {
                    Some((0, Vec::new()))
                } else {
                    None
                });
            }
            let sign = if s < 0 {
                // Only integer powers (and odd roots) of negative numbers are real.
                if e.is_integer() {
                    if e.to_integer().is_odd() { -1 } else { 1 }
                } else if e.denom().is_odd() {
                    if e.numer().is_odd() { -1 } else { 1 }
                } else {
                    return Ok(None);
                }
            } else {
                1
            };
            Ok(Some((
                sign,
                parts.into_iter().map(|(b, k)| (b, k * &e)).collect(),
            )))
        }
        _ => Ok(None),
    }
}
