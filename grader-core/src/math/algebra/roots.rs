//! Roots of rationals over primes: small primes divided out, a large cofactor reduced to the
//! root of no perfect power and tested for primality, so that `\\sqrt{12}` is `2·3^{1/2}`.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, ToPrimitive, Zero};

use super::limits::{Exp, Made, exp_mul, too_big};
use crate::math::budget::{Budget, product_cost};

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
pub(super) fn root_factors(
    n: &BigInt,
    e: &Exp,
    budget: &mut Budget,
) -> Made<Vec<(BigInt, bool, Exp)>> {
    let mut out = Vec::new();
    if let Some(mut rest) = n.to_u64() {
        // Machine words: trial division without big numbers.
        for &p in small_primes() {
            if rest == 1 {
                break;
            }
            let p = u64::from(p);
            let mut k = 0i64;
            while rest % p == 0 {
                rest /= p;
                k += 1;
            }
            if k > 0 {
                out.push((
                    BigInt::from(p),
                    true,
                    exp_mul(e, &Exp::from_integer(k), budget)?,
                ));
            }
        }
        budget.charge(1)?;
        if rest == 1 {
            return Ok(out);
        }
        // Without a factor under 1000, a cofactor under 1000² is prime.
        if rest < 1_000_000 {
            out.push((BigInt::from(rest), true, *e));
            return Ok(out);
        }
        return big_root_factors(BigInt::from(rest), e, out, budget);
    }
    big_root_factors(n.clone(), e, out, budget)
}

/// [`root_factors`] on big numbers: `out` holds the factors found so far.
fn big_root_factors(
    n: BigInt,
    e: &Exp,
    mut out: Vec<(BigInt, bool, Exp)>,
    budget: &mut Budget,
) -> Made<Vec<(BigInt, bool, Exp)>> {
    let mut rest = n;
    for &p in small_primes() {
        if rest.is_one() {
            break;
        }
        budget.charge(product_cost(rest.bits(), 32) + 1)?;
        let prime = BigInt::from(p);
        let mut k = 0i64;
        loop {
            let (q, r) = rest.div_rem(&prime);
            if !r.is_zero() {
                break;
            }
            rest = q;
            k += 1;
        }
        if k > 0 {
            out.push((prime, true, exp_mul(e, &Exp::from_integer(k), budget)?));
        }
    }
    if !rest.is_one() {
        let (base, k) = perfect_power(&rest, budget)?;
        let certain = is_prime(&base, budget)?;
        let k = i64::try_from(k).map_err(|_| too_big(budget))?;
        out.push((base, certain, exp_mul(e, &Exp::from_integer(k), budget)?));
    }
    Ok(out)
}
