//! The normal form of an expression: sums, products and powers worked out exactly, roots over
//! primes, factorials and integer logarithms of rationals; what exact algebra does not reduce
//! (functions, logarithms, symbolic powers) kept whole as a named atom.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

use super::{
    Atom, Budget, MAX_BITS, MAX_FACTORIAL, Made, Poly, Stop, Value, bits, rational_power,
    single_power, too_big,
};
use crate::math::expr::{Expr, Func};

/// The normal form of `expr`.
pub(crate) fn normal_form(expr: &Expr, budget: &mut Budget) -> Made<Value> {
    budget.charge(1)?;
    match expr {
        Expr::Num(n) => {
            if bits(n) > MAX_BITS {
                return Err(too_big(budget));
            }
            Ok(Value::constant(n.clone()))
        }
        Expr::Float(_) | Expr::Inf => Err(Stop::NotExact),
        Expr::Sym(name) => Ok(Value::atom(Atom::Sym(name.clone()))),
        Expr::Pi => Ok(Value::atom(Atom::Pi)),
        Expr::E => Ok(Value::atom(Atom::E)),
        Expr::Add(items) => {
            let mut sum = Value::constant(BigRational::zero());
            for item in items {
                let v = normal_form(item, budget)?;
                sum = sum.add(&v, budget)?;
            }
            Ok(sum)
        }
        Expr::Mul(items) => {
            let mut product = Value::constant(BigRational::one());
            for item in items {
                let v = normal_form(item, budget)?;
                product = product.mul(&v, budget)?;
            }
            Ok(product)
        }
        Expr::Percent(x) => {
            let v = normal_form(x, budget)?;
            v.mul(
                &Value::constant(BigRational::new(1.into(), 100.into())),
                budget,
            )
        }
        Expr::Pow(base, exponent) => power(base, exponent, budget),
        Expr::Log(x, base) => {
            let (vx, vb) = (normal_form(x, budget)?, normal_form(base, budget)?);
            if let (Some(x), Some(b)) = (vx.as_constant(), vb.as_constant())
                && let Some(k) = exact_log(&x, &b, budget)?
            {
                return Ok(Value::constant(k));
            }
            if vx.as_constant().is_some_and(|c| c.is_one()) {
                return Ok(Value::constant(BigRational::zero()));
            }
            Ok(Value::atom(Atom::Named(format!(
                "log({},{})",
                vx.key(),
                vb.key()
            ))))
        }
        Expr::Func(f, x) => function(*f, x, budget),
        Expr::Apply(name, args) => {
            let mut keys = Vec::with_capacity(args.len());
            for a in args {
                keys.push(normal_form(a, budget)?.key());
            }
            Ok(Value::atom(Atom::Named(format!(
                "{name}({})",
                keys.join(",")
            ))))
        }
        Expr::Rel(..)
        | Expr::And(_)
        | Expr::Set(_)
        | Expr::Tuple(_)
        | Expr::Interval(..)
        | Expr::Union(_)
        | Expr::Matrix(..) => Err(Stop::NotExact),
    }
}

/// `k` with `b^k = x`, for positive rationals, where `k` is an integer.
fn exact_log(x: &BigRational, b: &BigRational, budget: &mut Budget) -> Made<Option<BigRational>> {
    if !x.is_positive() || !b.is_positive() || b.is_one() {
        return Ok(None);
    }
    let guess =
        (crate::math::expr::ratio_f64(x).ln() / crate::math::expr::ratio_f64(b).ln()).round();
    if !guess.is_finite() || guess.abs() > 100_000.0 {
        return Ok(None);
    }
    #[allow(clippy::cast_possible_truncation)] // rounded and bounded above
    let k = BigInt::from(guess as i64);
    let power = rational_power(b, &BigRational::from_integer(k.clone()), budget)?;
    Ok((power.as_constant().as_ref() == Some(x)).then(|| BigRational::from_integer(k)))
}

fn power(base: &Expr, exponent: &Expr, budget: &mut Budget) -> Made<Value> {
    let e = normal_form(exponent, budget)?;
    let b = normal_form(base, budget)?;
    let Some(k) = e.as_constant() else {
        // `e^x`, `2^x`: a named atom.
        if b.is_zero() {
            return Err(Stop::NotExact);
        }
        return Ok(Value::atom(Atom::Named(format!(
            "pow({},{})",
            b.key(),
            e.key()
        ))));
    };
    if k.is_integer() {
        return b.pow_int(&k.to_integer(), budget);
    }
    // A fractional power of one term: roots of its coefficient, scaled exponents.
    if b.den == Poly::one()
        && let Some((monomial, c)) = b.num.single()
    {
        match single_power(monomial, c, &k, budget) {
            Ok(p) => {
                return Ok(Value {
                    num: p,
                    den: Poly::one(),
                });
            }
            Err(Stop::NotExact) => {}
            Err(other) => return Err(other),
        }
    }
    if b.is_zero() {
        return if k.is_positive() {
            Ok(Value::constant(BigRational::zero()))
        } else {
            Err(Stop::NotExact)
        };
    }
    Ok(Value::atom(Atom::Named(format!("pow({},{})", b.key(), k))))
}

fn function(f: Func, x: &Expr, budget: &mut Budget) -> Made<Value> {
    let v = normal_form(x, budget)?;
    let constant = v.as_constant();
    match f {
        Func::Factorial => {
            if let Some(n) = &constant
                && n.is_integer()
                && !n.is_negative()
            {
                let n = n.to_integer().to_u64().filter(|&n| n <= MAX_FACTORIAL);
                if let Some(n) = n {
                    return factorial(n, budget).map(Value::constant);
                }
                return Err(too_big(budget));
            }
        }
        Func::Abs => {
            if let Some(c) = &constant {
                return Ok(Value::constant(c.abs()));
            }
            if !v.num.has_variables()
                && !v.den.has_variables()
                && v.num.certain()
                && v.den.certain()
            {
                let approx = v.num.approx() / v.den.approx();
                if approx.is_finite() && approx.abs() > 1e-9 {
                    return Ok(if approx < 0.0 { v.negate() } else { v });
                }
            }
        }
        Func::Floor | Func::Ceil => {
            if let Some(c) = &constant {
                return Ok(Value::constant(if f == Func::Floor {
                    c.floor()
                } else {
                    c.ceil()
                }));
            }
            if !v.num.has_variables()
                && !v.den.has_variables()
                && v.num.certain()
                && v.den.certain()
            {
                let approx = v.num.approx() / v.den.approx();
                let nearest = approx.round();
                if approx.is_finite()
                    && approx.abs() < 1e15
                    && (approx - nearest).abs() > 1e-9 * (1.0 + approx.abs())
                {
                    let r = if f == Func::Floor {
                        approx.floor()
                    } else {
                        approx.ceil()
                    };
                    #[allow(clippy::cast_possible_truncation)] // bounded above
                    return Ok(Value::constant(BigRational::from_integer(BigInt::from(
                        r as i64,
                    ))));
                }
            }
        }
        Func::Exp => {
            return power(&Expr::E, x, budget);
        }
        Func::Ln => {
            if constant.as_ref().is_some_and(One::is_one) {
                return Ok(Value::constant(BigRational::zero()));
            }
            if v.as_constant().is_none()
                && let Some((m, c)) = v.num.single()
                && v.den == Poly::one()
                && c.is_one()
                && *m == vec![(Atom::E, BigRational::one())]
            {
                return Ok(Value::constant(BigRational::one()));
            }
        }
        _ => {
            if constant.as_ref().is_some_and(Zero::is_zero)
                && matches!(
                    f,
                    Func::Sin | Func::Tan | Func::Asin | Func::Atan | Func::Sinh | Func::Tanh
                )
            {
                return Ok(Value::constant(BigRational::zero()));
            }
        }
    }
    Ok(Value::atom(Atom::Named(format!(
        "{}({})",
        format!("{f:?}").to_lowercase(),
        v.key()
    ))))
}

/// `n!`, within the budget.
fn factorial(n: u64, budget: &mut Budget) -> Made<BigRational> {
    // log2(n!) < n log2 n.
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let estimate = (n as f64 * (n.max(2) as f64).log2()) as u64;
    if estimate > MAX_BITS {
        return Err(too_big(budget));
    }
    let mut acc = BigInt::one();
    for k in 2..=n {
        budget.charge(acc.bits() / 64 + 1)?;
        acc *= k;
    }
    Ok(BigRational::from_integer(acc))
}
