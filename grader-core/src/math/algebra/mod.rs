//! Exact normal forms of answers, so that two exact values are compared exactly (SPEC D36):
//! a value is a quotient of polynomials with rational coefficients over atoms (variables, π,
//! e, roots of integers and, for what exact algebra does not reduce, functions and symbolic
//! powers kept whole as named atoms).
//!
//! Why this file is long: the polynomials' arithmetic and the powers of rationals it reduces
//! with are one recursion (a power's coefficient is a product of roots, a product of powers a
//! polynomial); split, the two halves would import each other.
//!
//! Roots are written over primes (`\sqrt{12}` is `2·3^{1/2}`), each prime's exponent in
//! `(0, 1)` with the whole part moved into the coefficient, so that the monomials of roots are
//! linearly independent over the rationals (Mordell) and two forms are equal exactly when the
//! values are. A factor of a root that is not split into primes (a large cofactor) is marked
//! uncertain, and so is every named atom: a difference that still holds one is decided
//! numerically by the caller, every other difference is decided here.
//!
//! All work is counted against a [`Budget`]: big numbers cost their word products, every
//! term of an expansion one unit, and a number past [`MAX_BITS`] stops the normal form (the
//! caller then tries [`factored`], which compares products of powers of any size by their
//! exponents).

use std::collections::BTreeMap;
use std::rc::Rc;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{CheckedAdd, One, Signed, ToPrimitive, Zero};

mod coef;
mod factored;
mod form;
mod limits;
mod roots;

pub(crate) use coef::Coef;
pub(crate) use factored::{factored, has_large_powers};
pub(crate) use form::normal_form;
pub(crate) use limits::{Exp, MAX_BITS, Stop};
use limits::{Made, exp_mul, too_big};
use roots::root_factors;

use super::budget::Budget;
use super::expr::Expr;

/// The most terms of one polynomial.
const MAX_TERMS: usize = 4_096;

/// The largest `n` whose `n!` is worked out.
const MAX_FACTORIAL: u64 = 50_000;

/// What is multiplied in a monomial.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Atom {
    /// π.
    Pi,
    /// Euler's number.
    E,
    /// A variable (or an unknown function applied, by its text).
    Sym(Rc<str>),
    /// An integer above 1 under a fractional power: a prime (`true`), or a factor not split
    /// into primes (`false`, uncertain).
    Root(BigInt, bool),
    /// A value exact algebra does not reduce (a function, a logarithm, a symbolic power), by
    /// its canonical text: uncertain.
    Named(Rc<str>),
}

impl Atom {
    fn certain(&self) -> bool {
        match self {
            Self::Root(_, certain) => *certain,
            Self::Named(_) => false,
            _ => true,
        }
    }
}

/// Atoms with their nonzero exponents, sorted by atom.
pub(crate) type Monomial = Vec<(Atom, Exp)>;

/// A polynomial: its terms sorted by monomial, each coefficient nonzero.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Poly {
    terms: Vec<(Monomial, Coef)>,
}

/// A value: `num / den`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Value {
    num: Poly,
    den: Poly,
}

/// A small rational exponent from a big one, where it fits.
fn small_exp(e: &BigRational) -> Option<Exp> {
    Some(Exp::new(e.numer().to_i64()?, e.denom().to_i64()?))
}

fn exp_add(a: &Exp, b: &Exp, budget: &Budget) -> Made<Exp> {
    a.checked_add(b).ok_or_else(|| too_big(budget))
}

impl Poly {
    fn constant(c: Coef) -> Self {
        if c.is_zero() {
            return Self::default();
        }
        Self {
            terms: vec![(Vec::new(), c)],
        }
    }

    fn atom(atom: Atom, exponent: Exp) -> Self {
        Self {
            terms: vec![(vec![(atom, exponent)], Coef::ONE)],
        }
    }

    fn one() -> Self {
        Self::constant(Coef::ONE)
    }

    fn is_one(&self) -> bool {
        matches!(self.terms.as_slice(), [(m, c)] if m.is_empty() && c.is_one())
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    /// The constant value, where the polynomial is one.
    fn as_constant(&self) -> Option<Coef> {
        match self.terms.as_slice() {
            [] => Some(Coef::ZERO),
            [(m, c)] if m.is_empty() => Some(c.clone()),
            _ => None,
        }
    }

    fn single(&self) -> Option<(&Monomial, &Coef)> {
        match self.terms.as_slice() {
            [(m, c)] => Some((m, c)),
            _ => None,
        }
    }

    /// Sorted terms with equal monomials summed and zeros dropped.
    fn collect(mut terms: Vec<(Monomial, Coef)>, budget: &mut Budget) -> Made<Self> {
        terms.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Monomial, Coef)> = Vec::with_capacity(terms.len());
        for (m, c) in terms {
            match out.last_mut() {
                Some((last, sum)) if *last == m => *sum = sum.add(&c, budget)?,
                _ => out.push((m, c)),
            }
        }
        out.retain(|(_, c)| !c.is_zero());
        if out.len() > MAX_TERMS {
            return Err(too_big(budget));
        }
        Ok(Self { terms: out })
    }

    fn add(&self, other: &Self, budget: &mut Budget) -> Made<Self> {
        // Both sorted: merged.
        let mut out = Vec::with_capacity(self.terms.len() + other.terms.len());
        let (mut i, mut j) = (0, 0);
        while i < self.terms.len() || j < other.terms.len() {
            let order = match (self.terms.get(i), other.terms.get(j)) {
                (Some(a), Some(b)) => a.0.cmp(&b.0),
                (Some(_), None) => std::cmp::Ordering::Less,
                _ => std::cmp::Ordering::Greater,
            };
            match order {
                std::cmp::Ordering::Less => {
                    out.push(self.terms[i].clone());
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    out.push(other.terms[j].clone());
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    let sum = self.terms[i].1.add(&other.terms[j].1, budget)?;
                    if !sum.is_zero() {
                        out.push((self.terms[i].0.clone(), sum));
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        if out.len() > MAX_TERMS {
            return Err(too_big(budget));
        }
        Ok(Self { terms: out })
    }

    fn negate(&self) -> Self {
        Self {
            terms: self
                .terms
                .iter()
                .map(|(m, c)| (m.clone(), c.neg()))
                .collect(),
        }
    }

    fn mul(&self, other: &Self, budget: &mut Budget) -> Made<Self> {
        if self.terms.len().saturating_mul(other.terms.len()) > MAX_TERMS * 4 {
            return Err(too_big(budget));
        }
        if self.is_one() {
            return Ok(other.clone());
        }
        if other.is_one() {
            return Ok(self.clone());
        }
        // A constant scales the other's coefficients: the order of the terms stays.
        for (constant, poly) in [(self, other), (other, self)] {
            if let [(m, c)] = constant.terms.as_slice()
                && m.is_empty()
            {
                let mut terms = Vec::with_capacity(poly.terms.len());
                for (m, d) in &poly.terms {
                    budget.charge(1)?;
                    terms.push((m.clone(), c.mul(d, budget)?));
                }
                return Ok(Self { terms });
            }
        }
        let mut terms = Vec::with_capacity(self.terms.len() * other.terms.len());
        for (m1, c1) in &self.terms {
            for (m2, c2) in &other.terms {
                budget.charge(1)?;
                let (monomial, factor) = monomial_product(m1, m2, budget)?;
                let mut c = c1.mul(c2, budget)?;
                if let Some(f) = factor {
                    c = c.mul(&f, budget)?;
                }
                terms.push((monomial, c));
            }
        }
        Self::collect(terms, budget)
    }

    /// Whether every atom is certain (so that a nonzero form is a nonzero value).
    fn certain(&self) -> bool {
        self.terms
            .iter()
            .all(|(m, _)| m.iter().all(|(atom, _)| atom.certain()))
    }

    fn has_variables(&self) -> bool {
        self.terms
            .iter()
            .any(|(m, _)| m.iter().any(|(atom, _)| matches!(atom, Atom::Sym(_))))
    }

    /// The polynomial's value in floating point, without variables.
    fn approx(&self) -> f64 {
        self.terms
            .iter()
            .map(|(m, c)| {
                let mut v = c.to_f64();
                for (atom, e) in m {
                    let base = match atom {
                        Atom::Pi => std::f64::consts::PI,
                        Atom::E => std::f64::consts::E,
                        Atom::Root(n, _) => n.to_f64().unwrap_or(f64::INFINITY),
                        Atom::Sym(_) | Atom::Named(_) => f64::NAN,
                    };
                    #[allow(clippy::cast_precision_loss)] // small exponents
                    let power = *e.numer() as f64 / *e.denom() as f64;
                    v *= base.powf(power);
                }
                v
            })
            .sum()
    }

    /// A canonical text, for the names of atoms built on this polynomial.
    fn key(&self) -> String {
        if self.terms.is_empty() {
            return "0".to_owned();
        }
        let mut out = String::new();
        for (i, (m, c)) in self.terms.iter().enumerate() {
            if i > 0 {
                out.push('+');
            }
            out.push_str(&c.to_string());
            for (atom, e) in m {
                out.push('*');
                match atom {
                    Atom::Pi => out.push_str("pi"),
                    Atom::E => out.push('E'),
                    Atom::Sym(s) => out.push_str(s),
                    Atom::Root(n, _) => out.push_str(&n.to_string()),
                    Atom::Named(s) => {
                        out.push('[');
                        out.push_str(s);
                        out.push(']');
                    }
                }
                if !e.is_one() {
                    out.push('^');
                    out.push_str(&e.to_string());
                }
            }
        }
        out
    }

    /// The coefficients by monomial.
    pub(crate) fn coefficients(&self) -> impl Iterator<Item = (&Monomial, &Coef)> {
        self.terms.iter().map(|(m, c)| (m, c))
    }
}

/// The product of two monomials, and the rational factor that roots' whole parts give.
fn monomial_product(
    a: &Monomial,
    b: &Monomial,
    budget: &mut Budget,
) -> Made<(Monomial, Option<Coef>)> {
    // A constant's empty monomial changes nothing.
    if a.is_empty() {
        return Ok((b.clone(), None));
    }
    if b.is_empty() {
        return Ok((a.clone(), None));
    }
    // Both sorted: merged, equal atoms' exponents added.
    let mut merged: Monomial = Vec::with_capacity(a.len() + b.len());
    let mut shared = false;
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let order = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.0.cmp(&y.0),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match order {
            std::cmp::Ordering::Less => {
                merged.push(a[i].clone());
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                merged.push(b[j].clone());
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                merged.push((a[i].0.clone(), exp_add(&a[i].1, &b[j].1, budget)?));
                shared = true;
                i += 1;
                j += 1;
            }
        }
    }
    // Without a shared atom, every exponent is as reduced as it was in `a` or `b`.
    if !shared {
        return Ok((merged, None));
    }
    reduce_monomial(merged, budget)
}

/// A monomial's zero exponents dropped and its roots' whole parts moved into a factor.
fn reduce_monomial(merged: Monomial, budget: &mut Budget) -> Made<(Monomial, Option<Coef>)> {
    let mut factor: Option<Coef> = None;
    let mut out = Vec::with_capacity(merged.len());
    for (atom, e) in merged {
        if let Atom::Root(base, _) = &atom {
            let whole = e.floor();
            let fraction = e - whole;
            if !whole.is_zero() {
                let power = int_power(base, *whole.numer(), budget)?;
                factor = Some(match factor {
                    Some(f) => f.mul(&power, budget)?,
                    None => power,
                });
            }
            if !fraction.is_zero() {
                out.push((atom, fraction));
            }
        } else if !e.is_zero() {
            out.push((atom, e));
        }
    }
    Ok((out, factor))
}

/// `base^n` for an integer `n` of either sign, within [`MAX_BITS`].
fn int_power(base: &BigInt, n: i64, budget: &mut Budget) -> Made<Coef> {
    let power =
        Coef::from_big(BigRational::from_integer(base.clone())).pow(n.unsigned_abs(), budget)?;
    Ok(if n < 0 { power.recip() } else { power })
}

impl Value {
    fn constant(c: Coef) -> Self {
        Self {
            num: Poly::constant(c),
            den: Poly::one(),
        }
    }

    fn atom(atom: Atom) -> Self {
        Self {
            num: Poly::atom(atom, Exp::one()),
            den: Poly::one(),
        }
    }

    /// The rational value, where the value is one.
    pub(crate) fn as_constant(&self) -> Option<BigRational> {
        self.as_coef().map(|c| c.to_big())
    }

    /// The rational value as a coefficient, where the value is one.
    fn as_coef(&self) -> Option<Coef> {
        let n = self.num.as_constant()?;
        let d = self.den.as_constant()?;
        if d.is_zero() {
            return None;
        }
        if d.is_one() {
            return Some(n);
        }
        Some(Coef::from_big(n.to_big() / d.to_big()))
    }

    /// A canonical text (for names built on this value).
    fn key(&self) -> String {
        if self.den.is_one() {
            self.num.key()
        } else {
            format!("({})/({})", self.num.key(), self.den.key())
        }
    }

    fn add(&self, other: &Self, budget: &mut Budget) -> Made<Self> {
        if self.den == other.den {
            return Ok(Self {
                num: self.num.add(&other.num, budget)?,
                den: self.den.clone(),
            });
        }
        let left = self.num.mul(&other.den, budget)?;
        let right = other.num.mul(&self.den, budget)?;
        Self {
            num: left.add(&right, budget)?,
            den: self.den.mul(&other.den, budget)?,
        }
        .reduced(budget)
    }

    fn negate(&self) -> Self {
        Self {
            num: self.num.negate(),
            den: self.den.clone(),
        }
    }

    fn mul(&self, other: &Self, budget: &mut Budget) -> Made<Self> {
        if self.den.is_one() && other.den.is_one() {
            return Ok(Self {
                num: self.num.mul(&other.num, budget)?,
                den: Poly::one(),
            });
        }
        Self {
            num: self.num.mul(&other.num, budget)?,
            den: self.den.mul(&other.den, budget)?,
        }
        .reduced(budget)
    }

    /// `1 / self`.
    fn recip(&self, budget: &mut Budget) -> Made<Self> {
        if self.num.is_zero() {
            return Err(Stop::NotExact);
        }
        Self {
            num: self.den.clone(),
            den: self.num.clone(),
        }
        .reduced(budget)
    }

    /// A denominator of one term moved into the numerator.
    fn reduced(self, budget: &mut Budget) -> Made<Self> {
        if self.den.is_zero() {
            return Err(Stop::NotExact);
        }
        if self.den.is_one() {
            return Ok(self);
        }
        let Some((monomial, c)) = self.den.single() else {
            return Ok(self);
        };
        let inverse = single_power(monomial, c, &Exp::from_integer(-1), budget)?;
        Ok(Self {
            num: self.num.mul(&inverse, budget)?,
            den: Poly::one(),
        })
    }

    fn pow_int(&self, n: &BigInt, budget: &mut Budget) -> Made<Self> {
        if n.is_zero() {
            return Ok(Self::constant(Coef::ONE));
        }
        if n.is_negative() {
            return self.recip(budget)?.pow_int(&-n, budget);
        }
        // One term: exponents scale, no expansion.
        if self.den.is_one()
            && let Some((monomial, c)) = self.num.single()
        {
            let e = n
                .to_i64()
                .map(Exp::from_integer)
                .ok_or_else(|| too_big(budget))?;
            return single_power(monomial, c, &e, budget).map(|p| Self {
                num: p,
                den: Poly::one(),
            });
        }
        let k = n
            .to_u32()
            .filter(|&k| k <= 256)
            .ok_or_else(|| too_big(budget))?;
        let mut result = Self::constant(Coef::ONE);
        let mut base = self.clone();
        let mut k = k;
        while k > 0 {
            if k & 1 == 1 {
                result = result.mul(&base, budget)?;
            }
            k >>= 1;
            if k > 0 {
                base = base.mul(&base, budget)?;
            }
        }
        Ok(result)
    }

    fn is_zero(&self) -> bool {
        self.num.is_zero()
    }
}

/// `c^e` for rationals: a polynomial of one term (roots of primes), or `NotExact` (an even
/// root of a negative number, `0` to a negative power).
fn rational_power(c: &Coef, e: &Exp, budget: &mut Budget) -> Made<Poly> {
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
        let n = *e.numer();
        let power = c.pow(n.unsigned_abs(), budget)?;
        return Ok(Poly::constant(if n < 0 { power.recip() } else { power }));
    }
    if c.is_one() {
        return Ok(Poly::one());
    }
    // Odd roots of negative numbers are real (latex2sympy's `real_root`).
    let sign = if c.is_negative() {
        if e.denom() % 2 == 0 {
            return Err(Stop::NotExact);
        }
        if e.numer() % 2 != 0 {
            Coef::integer(-1)
        } else {
            Coef::ONE
        }
    } else {
        Coef::ONE
    };
    let c = c.abs().to_big();
    let mut monomial: Monomial = Vec::new();
    for (n, sign_of_e) in [(c.numer(), 1i64), (c.denom(), -1i64)] {
        if n.is_one() {
            continue;
        }
        let exponent = exp_mul(e, &Exp::from_integer(sign_of_e), budget)?;
        for (base, certain, k) in root_factors(n, &exponent, budget)? {
            monomial.push((Atom::Root(base, certain), k));
        }
    }
    monomial.sort_by(|a, b| a.0.cmp(&b.0));
    // Whole parts move into the coefficient (atoms are distinct: the numerator's and the
    // denominator's are coprime, and a cofactor has no prime under 1000).
    let (monomial, factor) = reduce_monomial(monomial, budget)?;
    let coefficient = match factor {
        Some(f) => sign.mul(&f, budget)?,
        None => sign,
    };
    Ok(Poly {
        terms: vec![(monomial, coefficient)],
    })
}

/// `(c · monomial)^e` as a polynomial of one term, for a rational `e`, where it is one
/// (`Stop::NotExact` where it is not: a variable to a fractional power, an even root of a
/// negative number).
fn single_power(monomial: &Monomial, c: &Coef, e: &Exp, budget: &mut Budget) -> Made<Poly> {
    let coefficient = rational_power(c, e, budget)?;
    let mut rest: Monomial = Vec::with_capacity(monomial.len());
    for (atom, exponent) in monomial {
        let scaled = exp_mul(exponent, e, budget)?;
        // `x^{1/3}` is kept as a fractional power of `x` (principal powers multiply by adding
        // exponents), but `(x^2)^{1/2}` is |x|, not x: not reduced.
        if !matches!(atom, Atom::Root(..)) && !scaled.is_integer() && !exponent.is_one() {
            return Err(Stop::NotExact);
        }
        rest.push((atom.clone(), scaled));
    }
    let (monomial, factor) = reduce_monomial(rest, budget)?;
    let term = Poly {
        terms: vec![(monomial, factor.unwrap_or(Coef::ONE))],
    };
    coefficient.mul(&term, budget)
}

/// What exact algebra says of `a - b`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Difference {
    /// The same value.
    Zero,
    /// A different value, proven: the difference's form holds only certain atoms.
    Nonzero(Value),
    /// Not decided: the difference holds a named atom or an unsplit root.
    Unknown(Value),
}

/// `a - b` in normal form, and whether it is decided.
pub(crate) fn difference(
    a: &Expr,
    b: &Expr,
    budget: &mut Budget,
) -> Made<(Value, Value, Difference)> {
    let va = normal_form(a, budget)?;
    let vb = normal_form(b, budget)?;
    let d = va.add(&vb.negate(), budget)?;
    let verdict = if d.is_zero() {
        Difference::Zero
    } else if d.num.certain() {
        Difference::Nonzero(d)
    } else {
        Difference::Unknown(d)
    };
    Ok((va, vb, verdict))
}

impl Value {
    /// Whether the value has variables.
    pub(crate) fn has_variables(&self) -> bool {
        self.num.has_variables() || self.den.has_variables()
    }

    /// The value in floating point, where it has no variables.
    pub(crate) fn approx(&self) -> f64 {
        self.num.approx() / self.den.approx()
    }

    /// The numerator, where the denominator is one.
    pub(crate) fn polynomial(&self) -> Option<&Poly> {
        self.den.is_one().then_some(&self.num)
    }
}

/// What [`constant_ratio`] finds.
pub(crate) enum Proportion {
    /// `a = k·b` for this constant `k`.
    Constant(Value),
    /// Not a constant multiple.
    Not,
    /// Not decided (quotients of polynomials, or atoms exact algebra does not reduce).
    Unknown,
}

/// Splits a polynomial by its terms' variable parts: for each, the constant polynomial
/// (rationals, π, e, roots) multiplying it.
fn by_variables(p: &Poly) -> BTreeMap<Monomial, Poly> {
    let mut out: BTreeMap<Monomial, Poly> = BTreeMap::new();
    for (m, c) in &p.terms {
        let (variables, constants): (Monomial, Monomial) = m
            .iter()
            .cloned()
            .partition(|(atom, _)| matches!(atom, Atom::Sym(_)));
        let part = out.entry(variables).or_default();
        part.terms.push((constants, c.clone()));
        part.terms.sort_by(|a, b| a.0.cmp(&b.0));
    }
    out
}

/// Whether `a = k·b` for a constant `k`, and which.
pub(crate) fn constant_ratio(a: &Value, b: &Value, budget: &mut Budget) -> Made<Proportion> {
    let (Some(pa), Some(pb)) = (a.polynomial(), b.polynomial()) else {
        return Ok(Proportion::Unknown);
    };
    if !pa.certain() || !pb.certain() {
        return Ok(Proportion::Unknown);
    }
    if pa.is_zero() || pb.is_zero() {
        return Ok(Proportion::Not);
    }
    let (ga, gb) = (by_variables(pa), by_variables(pb));
    if !ga.keys().eq(gb.keys()) {
        return Ok(Proportion::Not);
    }
    let Some((key, ca)) = ga.iter().next() else {
        return Ok(Proportion::Not);
    };
    let k = Value {
        num: ca.clone(),
        den: gb[key].clone(),
    }
    .reduced(budget)?;
    let scaled = k.mul(b, budget)?;
    let d = a.add(&scaled.negate(), budget)?;
    Ok(if d.is_zero() {
        Proportion::Constant(k)
    } else {
        Proportion::Not
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(text: &str) -> Expr {
        super::super::latex::parse_latex(text, &super::super::Limits::default())
            .expect("bounded")
            .expect("parses")
    }

    #[test]
    fn equal_forms_of_equal_values() {
        for (a, b) in [
            ("2\\sqrt{3}", "\\sqrt{12}"),
            ("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}"),
            ("(x+1)^2", "x^2+2x+1"),
            ("2^{64}", "18446744073709551616"),
            ("\\sqrt[3]{-8}", "-2"),
            ("\\frac{1}{1+\\sqrt{2}} (1 + \\sqrt{2})", "1"),
            ("\\sqrt{8}\\sqrt{2}", "4"),
            ("4^{\\frac{3}{2}}", "8"),
            ("\\pi r^2", "r^2 \\pi"),
        ] {
            let (_, _, d) = difference(&expr(a), &expr(b), &mut Budget::new()).expect("exact");
            assert_eq!(d, Difference::Zero, "{a} = {b}");
        }
    }

    #[test]
    fn different_values_have_different_forms() {
        for (a, b) in [
            ("2^{64}x", "(2^{64}-1)x"),
            ("\\sqrt{2}", "\\frac{99}{70}"),
            ("\\pi", "\\frac{355}{113}"),
            ("\\sqrt{2}+\\sqrt{3}", "\\sqrt{3}+\\sqrt{2}+10^{-30}"),
        ] {
            let (_, _, d) = difference(&expr(a), &expr(b), &mut Budget::new()).expect("exact");
            assert!(matches!(d, Difference::Nonzero(_)), "{a} vs {b}: {d:?}");
        }
    }

    #[test]
    fn huge_products_compare_by_their_exponents() {
        let many = vec!["99^{2340}"; 265].join("\\cdot ");
        let limits = super::super::Limits {
            nodes: 100_000,
            answer: 1 << 20,
            ..Default::default()
        };
        let a = super::super::latex::parse_latex(&many, &limits)
            .expect("within the limits")
            .expect("an expression");
        let half = super::super::latex::parse_latex("\\frac{1}{2}", &limits)
            .expect("within the limits")
            .expect("an expression");
        let mut budget = Budget::new();
        assert_eq!(
            factored(&a, &half, &mut budget).expect("cheap"),
            Some(false)
        );
        assert_eq!(factored(&a, &a, &mut budget).expect("cheap"), Some(true));
        let other = vec!["9801^{1170}"; 265].join("\\cdot ");
        let b = super::super::latex::parse_latex(&other, &limits)
            .expect("within the limits")
            .expect("an expression");
        assert_eq!(factored(&a, &b, &mut budget).expect("cheap"), Some(true));
        assert!(
            budget.used() < Budget::DEFAULT_WORK / 10,
            "{}",
            budget.used()
        );
    }
}
