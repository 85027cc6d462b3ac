//! Roots of rationals over primes: small primes divided out, a large cofactor reduced to the
//! root of no perfect power and tested for primality, so that `\\sqrt{12}` is `2·3^{1/2}`.

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::collections::BTreeMap;

use super::{Atom, Budget, Made, Monomial, Poly, Stop, monomial_product, q_mul, q_pow, too_big};
use crate::math::budget::product_cost;

/// The small primes tried as factors of a root's base.
fn small_primes() -> &'static [u32] {
    static PRIMES: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    PRIMES.get_or_init(|| {
        let mut primes = Vec::new();
        for n in 2u32..1000 {
            if primes
                .iter()
                .take_while(|&&p| p * p <= n)
                .all(|&p| n % p != 0)
            {
                primes.push(n);
            }
        }
        primes
    })
}

/// A probable-prime test (Miller-Rabin with the first twelve primes as bases: certain below
/// 3.3·10²⁴).
fn is_prime(n: &BigInt, budget: &mut Budget) -> Made<bool> {
    let one = BigInt::one();
    let two = BigInt::from(2);
    if *n < two {
        return Ok(false);
    }
    for &p in &small_primes()[..12] {
        let p = BigInt::from(p);
        if *n == p {
            return Ok(true);
        }
        if (n % &p).is_zero() {
            return Ok(false);
        }
    }
    let m = n - &one;
    let s = m.trailing_zeros().unwrap_or(0);
    let d = &m >> s;
    let cost = product_cost(n.bits(), n.bits()).saturating_mul(n.bits() + 1);
    'bases: for &a in &small_primes()[..12] {
        budget.charge(cost)?;
        let mut x = BigInt::from(a).modpow(&d, n);
        if x == one || x == m {
            continue;
        }
        for _ in 1..s {
            x = x.modpow(&two, n);
            if x == m {
                continue 'bases;
            }
        }
        return Ok(false);
    }
    Ok(true)
}

/// `n` as `base^k` with `k` as large as it goes.
fn perfect_power(n: &BigInt, budget: &mut Budget) -> Made<(BigInt, u64)> {
    let mut base = n.clone();
    let mut k = 1u64;
    'outer: loop {
        let max = base.bits() / 9; // the base has no factor under 1000
        for &p in small_primes().iter().take_while(|&&p| u64::from(p) <= max) {
            budget.charge(product_cost(base.bits(), base.bits()) * 8 + 1)?;
            let root = base.nth_root(p);
            if num_traits::pow(root.clone(), p as usize) == base {
                base = root;
                k *= u64::from(p);
                continue 'outer;
            }
        }
        return Ok((base, k));
    }
}

/// The atoms of `n^e` for a positive integer `n` and a rational `e`: `(prime or cofactor,
/// certain, exponent)`.
fn root_factors(
    n: &BigInt,
    e: &BigRational,
    budget: &mut Budget,
) -> Made<Vec<(BigInt, bool, BigRational)>> {
    let mut out = Vec::new();
    let mut rest = n.clone();
    for &p in small_primes() {
        if rest.is_one() {
            break;
        }
        budget.charge(product_cost(rest.bits(), 32) + 1)?;
        let prime = BigInt::from(p);
        let mut k = 0u64;
        loop {
            let (q, r) = rest.div_rem(&prime);
            if !r.is_zero() {
                break;
            }
            rest = q;
            k += 1;
        }
        if k > 0 {
            out.push((prime, true, e * BigRational::from_integer(k.into())));
        }
    }
    if !rest.is_one() {
        let (base, k) = perfect_power(&rest, budget)?;
        let certain = is_prime(&base, budget)?;
        out.push((base, certain, e * BigRational::from_integer(k.into())));
    }
    Ok(out)
}

/// `c^e` for rationals: a polynomial of one term (roots of primes), or `NotExact` (an even
/// root of a negative number, `0` to a negative power).
pub(super) fn rational_power(c: &BigRational, e: &BigRational, budget: &mut Budget) -> Made<Poly> {
    if e.is_zero() {
        return Ok(Poly::one());
    }
    if c.is_zero() {
        return if e.is_positive() {
            Ok(Poly::default())
        } else {
            Err(Stop::NotExact)
        };
    }
    if e.is_integer() {
        let n = e.to_integer();
        let k = n.magnitude().to_u64().ok_or_else(|| too_big(budget))?;
        let power = q_pow(c, k, budget)?;
        return Ok(Poly::constant(if n.is_negative() {
            power.recip()
        } else {
            power
        }));
    }
    // Odd roots of negative numbers are real (latex2sympy's `real_root`).
    let sign = if c.is_negative() {
        if e.denom().is_even() {
            return Err(Stop::NotExact);
        }
        if e.numer().is_odd() {
            -BigRational::one()
        } else {
            BigRational::one()
        }
    } else {
        BigRational::one()
    };
    let c = c.abs();
    let mut monomial: Monomial = Vec::new();
    let mut coefficient = sign;
    for (n, sign_of_e) in [(c.numer(), 1i32), (c.denom(), -1i32)] {
        if n.is_one() {
            continue;
        }
        let exponent = if sign_of_e > 0 { e.clone() } else { -e.clone() };
        for (base, certain, k) in root_factors(n, &exponent, budget)? {
            monomial.push((Atom::Root(base, certain), k));
        }
    }
    monomial.sort_by(|a, b| a.0.cmp(&b.0));
    // Merge equal atoms (a cofactor equal to a prime cannot happen: primes under 1000 are
    // divided out first).
    let (monomial, factor) = monomial_product(&monomial, &Vec::new(), budget)?;
    if let Some(f) = factor {
        coefficient = q_mul(&coefficient, &f, budget)?;
    }
    Ok(Poly {
        terms: BTreeMap::from([(monomial, coefficient)]),
    })
}
