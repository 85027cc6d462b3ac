//! The normal form of an expression: sums, products and powers worked out exactly, roots over
//! primes, factorials and integer logarithms of rationals; what exact algebra does not reduce
//! (functions, logarithms, symbolic powers) kept whole as a named atom.

use std::rc::Rc;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive};

use super::coef::bits;
use super::{
    Atom, Budget, Coef, Exp, MAX_BITS, MAX_FACTORIAL, Made, Poly, Stop, Value, rational_power,
    single_power, small_exp, too_big,
};
use crate::math::expr::{Expr, Func};

fn named(text: String) -> Value {
    Value::atom(Atom::Named(Rc::from(text)))
}

/// The normal form of `expr`.
pub(crate) fn normal_form(expr: &Expr, budget: &mut Budget) -> Made<Value> {
    budget.charge(1)?;
    match expr {
        Expr::Num(n) => {
            if bits(n) > MAX_BITS {
                return Err(too_big(budget));
            }
            Ok(Value::constant(Coef::from_ref(n)))
        }
        Expr::Float(_) | Expr::Inf => Err(Stop::NotExact),
        Expr::Sym(name) => Ok(Value::atom(Atom::Sym(Rc::from(name.as_str())))),
        Expr::Pi => Ok(Value::atom(Atom::Pi)),
        Expr::E => Ok(Value::atom(Atom::E)),
        Expr::Add(items) => {
            let Some((first, rest)) = items.split_first() else {
                return Ok(Value::constant(Coef::ZERO));
            };
            let mut sum = normal_form(first, budget)?;
            for item in rest {
                let v = normal_form(item, budget)?;
                sum = sum.add(&v, budget)?;
            }
            Ok(sum)
        }
        Expr::Mul(items) => {
            let Some((first, rest)) = items.split_first() else {
                return Ok(Value::constant(Coef::ONE));
            };
            let mut product = normal_form(first, budget)?;
            for item in rest {
                let v = normal_form(item, budget)?;
                product = product.mul(&v, budget)?;
            }
            Ok(product)
        }
        Expr::Percent(x) => {
            let v = normal_form(x, budget)?;
            v.mul(&Value::constant(Coef::Small(1, 100)), budget)
        }
        Expr::Pow(base, exponent) => power(base, exponent, budget),
        Expr::Log(x, base) => {
            let (vx, vb) = (normal_form(x, budget)?, normal_form(base, budget)?);
            if let (Some(x), Some(b)) = (vx.as_coef(), vb.as_coef())
                && let Some(k) = exact_log(&x, &b, budget)?
            {
                return Ok(Value::constant(Coef::integer(k)));
            }
            if vx.as_coef().is_some_and(|c| c.is_one()) {
                return Ok(Value::constant(Coef::ZERO));
            }
            Ok(named(format!("log({},{})", vx.key(), vb.key())))
        }
        Expr::Func(f, x) => function(*f, x, budget),
        Expr::Apply(name, args) => {
            let mut keys = Vec::with_capacity(args.len());
            for a in args {
                keys.push(normal_form(a, budget)?.key());
            }
            Ok(named(format!("{name}({})", keys.join(","))))
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
fn exact_log(x: &Coef, b: &Coef, budget: &mut Budget) -> Made<Option<i64>> {
    if x.is_negative() || x.is_zero() || b.is_negative() || b.is_zero() || b.is_one() {
        return Ok(None);
    }
    let guess = (x.to_f64().ln() / b.to_f64().ln()).round();
    if !guess.is_finite() || guess.abs() > 100_000.0 {
        return Ok(None);
    }
    #[allow(clippy::cast_possible_truncation)] // rounded and bounded above
    let k = guess as i64;
    let power = rational_power(b, &Exp::from_integer(k), budget)?;
    Ok((power.as_constant().as_ref() == Some(x)).then_some(k))
}

fn power(base: &Expr, exponent: &Expr, budget: &mut Budget) -> Made<Value> {
    let e = normal_form(exponent, budget)?;
    let b = normal_form(base, budget)?;
    let Some(k) = e.as_coef() else {
        // `e^x`, `2^x`: a named atom.
        if b.is_zero() {
            return Err(Stop::NotExact);
        }
        return Ok(named(format!("pow({},{})", b.key(), e.key())));
    };
    if k.is_integer() {
        return b.pow_int(&k.to_big().to_integer(), budget);
    }
    // A fractional power of one term: roots of its coefficient, scaled exponents.
    if let Some(small) = small_exp(&k.to_big())
        && b.den.is_one()
        && let Some((monomial, c)) = b.num.single()
    {
        match single_power(monomial, c, &small, budget) {
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
        return if k.is_negative() {
            Err(Stop::NotExact)
        } else {
            Ok(Value::constant(Coef::ZERO))
        };
    }
    Ok(named(format!("pow({},{})", b.key(), k)))
}

fn function(f: Func, x: &Expr, budget: &mut Budget) -> Made<Value> {
    let v = normal_form(x, budget)?;
    let constant = v.as_coef();
    match f {
        Func::Factorial => {
            if let Some(n) = &constant
                && n.is_integer()
                && !n.is_negative()
            {
                let n = n
                    .to_big()
                    .to_integer()
                    .to_u64()
                    .filter(|&n| n <= MAX_FACTORIAL);
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
                    return Ok(Value::constant(Coef::integer(r as i64)));
                }
            }
        }
        Func::Exp => {
            return power(&Expr::E, x, budget);
        }
        Func::Ln => {
            if constant.as_ref().is_some_and(Coef::is_one) {
                return Ok(Value::constant(Coef::ZERO));
            }
            if constant.is_none()
                && let Some((m, c)) = v.num.single()
                && v.den.is_one()
                && c.is_one()
                && *m == vec![(Atom::E, Exp::one())]
            {
                return Ok(Value::constant(Coef::ONE));
            }
        }
        _ => {
            if constant.as_ref().is_some_and(Coef::is_zero)
                && matches!(
                    f,
                    Func::Sin | Func::Tan | Func::Asin | Func::Atan | Func::Sinh | Func::Tanh
                )
            {
                return Ok(Value::constant(Coef::ZERO));
            }
        }
    }
    Ok(named(format!(
        "{}({})",
        format!("{f:?}").to_lowercase(),
        v.key()
    )))
}

/// `n!`, within the budget.
fn factorial(n: u64, budget: &mut Budget) -> Made<Coef> {
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
    Ok(Coef::from_big(BigRational::from_integer(acc)))
}
