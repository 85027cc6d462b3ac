//! Exact normal forms of answers, so that two exact values are compared exactly (SPEC D36):
//! a value is a quotient of polynomials with rational coefficients over atoms (variables, π,
//! e, roots of integers and, for what exact algebra does not reduce, functions and symbolic
//! powers kept whole as named atoms).
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

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

mod factored;
mod form;
mod roots;

pub(crate) use factored::factored;
pub(crate) use form::normal_form;
use roots::rational_power;

use super::budget::{Budget, product_cost};
use super::error::MathError;
use super::expr::Expr;

/// The most bits of a number worked out exactly (about 300 000 digits).
pub(crate) const MAX_BITS: u64 = 1 << 20;

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
    Sym(String),
    /// An integer above 1 under a fractional power: a prime (`true`), or a factor not split
    /// into primes (`false`, uncertain).
    Root(BigInt, bool),
    /// A value exact algebra does not reduce (a function, a logarithm, a symbolic power), by
    /// its canonical text: uncertain.
    Named(String),
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

pub(crate) type Monomial = Vec<(Atom, BigRational)>;

/// A polynomial: monomials (sorted atoms with their exponents) and nonzero coefficients.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Poly {
    terms: BTreeMap<Monomial, BigRational>,
}

/// A value: `num / den`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Value {
    num: Poly,
    den: Poly,
}

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

type Made<T> = Result<T, Stop>;

fn bits(n: &BigRational) -> u64 {
    n.numer().bits().max(n.denom().bits())
}

fn too_big(budget: &Budget) -> Stop {
    Stop::Bound(MathError::TooMuchWork {
        grader: "math",
        limit: budget.limit(),
    })
}

/// The cost of reducing a fraction of `bits` bits: the binary gcd is quadratic.
fn gcd_cost(bits: u64) -> u64 {
    let words = bits / 64 + 1;
    words.saturating_mul(words)
}

/// `a * b`, charged; integers multiply without reducing (a gcd with 1 still costs a binary
/// gcd's quadratic time), and nothing past [`MAX_BITS`] is computed.
fn q_mul(a: &BigRational, b: &BigRational, budget: &mut Budget) -> Made<BigRational> {
    let (x, y) = (bits(a), bits(b));
    if x.saturating_add(y) > MAX_BITS {
        return Err(too_big(budget));
    }
    if a.denom().is_one() && b.denom().is_one() {
        budget.charge(product_cost(x, y) + 1)?;
        return Ok(BigRational::from_integer(a.numer() * b.numer()));
    }
    budget.charge(product_cost(x, y).saturating_add(gcd_cost(x.max(y)).saturating_mul(2)) + 1)?;
    Ok(a * b)
}

/// `a + b`, charged as [`q_mul`].
fn q_add(a: &BigRational, b: &BigRational, budget: &mut Budget) -> Made<BigRational> {
    let (x, y) = (bits(a), bits(b));
    if x.max(y) > MAX_BITS {
        return Err(too_big(budget));
    }
    if a.denom().is_one() && b.denom().is_one() {
        budget.charge(x.max(y) / 64 + 1)?;
        return Ok(BigRational::from_integer(a.numer() + b.numer()));
    }
    budget.charge(
        product_cost(x, y)
            .saturating_mul(2)
            .saturating_add(gcd_cost(x.saturating_add(y))),
    )?;
    Ok(a + b)
}

/// `c^k` for a natural `k`: numerator and denominator raised apart (a reduced fraction's
/// powers stay reduced), charged, within [`MAX_BITS`].
fn q_pow(c: &BigRational, k: u64, budget: &mut Budget) -> Made<BigRational> {
    let estimate = bits(c).saturating_mul(k);
    if estimate > MAX_BITS {
        return Err(too_big(budget));
    }
    budget.charge(product_cost(estimate, estimate) + 1)?;
    let k = usize::try_from(k).map_err(|_| too_big(budget))?;
    let numer = num_traits::pow(c.numer().clone(), k);
    let denom = num_traits::pow(c.denom().clone(), k);
    Ok(BigRational::new_raw(numer, denom))
}

impl Poly {
    fn constant(c: BigRational) -> Self {
        let mut terms = BTreeMap::new();
        if !c.is_zero() {
            terms.insert(Vec::new(), c);
        }
        Self { terms }
    }

    fn atom(atom: Atom, exponent: BigRational) -> Self {
        let mut terms = BTreeMap::new();
        terms.insert(vec![(atom, exponent)], BigRational::one());
        Self { terms }
    }

    fn one() -> Self {
        Self::constant(BigRational::one())
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    /// The constant value, where the polynomial is one.
    fn as_constant(&self) -> Option<BigRational> {
        match self.terms.len() {
            0 => Some(BigRational::zero()),
            1 => self.terms.get(&Vec::new()).cloned(),
            _ => None,
        }
    }

    fn single(&self) -> Option<(&Monomial, &BigRational)> {
        if self.terms.len() == 1 {
            self.terms.iter().next()
        } else {
            None
        }
    }

    fn add(&self, other: &Self, budget: &mut Budget) -> Made<Self> {
        let mut terms = self.terms.clone();
        for (monomial, c) in &other.terms {
            let entry = terms
                .entry(monomial.clone())
                .or_insert_with(BigRational::zero);
            *entry = q_add(entry, c, budget)?;
            if entry.is_zero() {
                terms.remove(monomial);
            }
        }
        if terms.len() > MAX_TERMS {
            return Err(too_big(budget));
        }
        Ok(Self { terms })
    }

    fn negate(&self) -> Self {
        Self {
            terms: self
                .terms
                .iter()
                .map(|(m, c)| (m.clone(), -c.clone()))
                .collect(),
        }
    }

    fn mul(&self, other: &Self, budget: &mut Budget) -> Made<Self> {
        if self.terms.len().saturating_mul(other.terms.len()) > MAX_TERMS * 4 {
            return Err(too_big(budget));
        }
        let mut terms: BTreeMap<Monomial, BigRational> = BTreeMap::new();
        for (m1, c1) in &self.terms {
            for (m2, c2) in &other.terms {
                let (monomial, factor) = monomial_product(m1, m2, budget)?;
                let mut c = q_mul(c1, c2, budget)?;
                if let Some(f) = factor {
                    c = q_mul(&c, &f, budget)?;
                }
                let entry = terms.entry(monomial).or_insert_with(BigRational::zero);
                *entry = q_add(entry, &c, budget)?;
            }
        }
        terms.retain(|_, c| !c.is_zero());
        if terms.len() > MAX_TERMS {
            return Err(too_big(budget));
        }
        Ok(Self { terms })
    }

    /// Whether every atom is certain (so that a nonzero form is a nonzero value).
    fn certain(&self) -> bool {
        self.terms
            .keys()
            .all(|m| m.iter().all(|(atom, _)| atom.certain()))
    }

    fn has_variables(&self) -> bool {
        self.terms
            .keys()
            .any(|m| m.iter().any(|(atom, _)| matches!(atom, Atom::Sym(_))))
    }

    /// The polynomial's value in floating point, without variables.
    fn approx(&self) -> f64 {
        self.terms
            .iter()
            .map(|(m, c)| {
                let mut v = super::expr::ratio_f64(c);
                for (atom, e) in m {
                    let base = match atom {
                        Atom::Pi => std::f64::consts::PI,
                        Atom::E => std::f64::consts::E,
                        Atom::Root(n, _) => n.to_f64().unwrap_or(f64::INFINITY),
                        Atom::Sym(_) | Atom::Named(_) => f64::NAN,
                    };
                    v *= base.powf(super::expr::ratio_f64(e));
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
    pub(crate) fn coefficients(&self) -> impl Iterator<Item = (&Monomial, &BigRational)> {
        self.terms.iter()
    }
}

/// The product of two monomials, and the rational factor that roots' whole parts give.
fn monomial_product(
    a: &Monomial,
    b: &Monomial,
    budget: &mut Budget,
) -> Made<(Monomial, Option<BigRational>)> {
    let mut exponents: BTreeMap<Atom, BigRational> = BTreeMap::new();
    for (atom, e) in a.iter().chain(b) {
        *exponents
            .entry(atom.clone())
            .or_insert_with(BigRational::zero) += e;
    }
    let mut factor: Option<BigRational> = None;
    let mut out = Vec::with_capacity(exponents.len());
    for (atom, e) in exponents {
        if let Atom::Root(base, _) = &atom {
            let whole = e.floor();
            let fraction = &e - &whole;
            if !whole.is_zero() {
                let power = int_power(base, &whole.to_integer(), budget)?;
                factor = Some(match factor {
                    Some(f) => q_mul(&f, &power, budget)?,
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
fn int_power(base: &BigInt, n: &BigInt, budget: &mut Budget) -> Made<BigRational> {
    let k = n.magnitude().to_u64().ok_or_else(|| too_big(budget))?;
    let power = q_pow(&BigRational::from_integer(base.clone()), k, budget)?;
    Ok(if n.is_negative() {
        power.recip()
    } else {
        power
    })
}

impl Value {
    fn constant(c: BigRational) -> Self {
        Self {
            num: Poly::constant(c),
            den: Poly::one(),
        }
    }

    fn atom(atom: Atom) -> Self {
        Self {
            num: Poly::atom(atom, BigRational::one()),
            den: Poly::one(),
        }
    }

    /// The rational value, where the value is one.
    pub(crate) fn as_constant(&self) -> Option<BigRational> {
        let n = self.num.as_constant()?;
        let d = self.den.as_constant()?;
        (!d.is_zero()).then(|| n / d)
    }

    /// A canonical text (for names built on this value).
    fn key(&self) -> String {
        if self.den == Poly::one() {
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
        let Some((monomial, c)) = self.den.single() else {
            return Ok(self);
        };
        if monomial.is_empty() && c.is_one() {
            return Ok(self);
        }
        let inverse = single_inverse(monomial, c, budget)?;
        Ok(Self {
            num: self.num.mul(&inverse, budget)?,
            den: Poly::one(),
        })
    }

    fn pow_int(&self, n: &BigInt, budget: &mut Budget) -> Made<Self> {
        if n.is_zero() {
            return Ok(Self::constant(BigRational::one()));
        }
        if n.is_negative() {
            return self.recip(budget)?.pow_int(&-n, budget);
        }
        // One term: exponents scale, no expansion.
        if self.den == Poly::one()
            && let Some((monomial, c)) = self.num.single()
        {
            let e = BigRational::from_integer(n.clone());
            return single_power(monomial, c, &e, budget).map(|p| Self {
                num: p,
                den: Poly::one(),
            });
        }
        let k = n
            .to_u32()
            .filter(|&k| k <= 256)
            .ok_or_else(|| too_big(budget))?;
        let mut result = Self::constant(BigRational::one());
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

/// `1 / (c · monomial)` as a polynomial of one term.
fn single_inverse(monomial: &Monomial, c: &BigRational, budget: &mut Budget) -> Made<Poly> {
    single_power(monomial, c, &-BigRational::one(), budget)
}

/// `(c · monomial)^e` as a polynomial of one term, for a rational `e`, where it is one
/// (`Stop::NotExact` where it is not: a variable to a fractional power, an even root of a
/// negative number).
fn single_power(
    monomial: &Monomial,
    c: &BigRational,
    e: &BigRational,
    budget: &mut Budget,
) -> Made<Poly> {
    let coefficient = rational_power(c, e, budget)?;
    let mut rest: Monomial = Vec::with_capacity(monomial.len());
    for (atom, exponent) in monomial {
        let scaled = exponent * e;
        // `x^{1/3}` is kept as a fractional power of `x` (principal powers multiply by adding
        // exponents), but `(x^2)^{1/2}` is |x|, not x: not reduced.
        if !matches!(atom, Atom::Root(..)) && !scaled.is_integer() && !exponent.is_one() {
            return Err(Stop::NotExact);
        }
        rest.push((atom.clone(), scaled));
    }
    let (monomial, factor) = monomial_product(&rest, &Vec::new(), budget)?;
    let term = Poly {
        terms: BTreeMap::from([(monomial, factor.unwrap_or_else(BigRational::one))]),
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
        (self.den == Poly::one()).then_some(&self.num)
    }
}

/// What [`constant_ratio`] finds.
pub(crate) enum Ratio {
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
        out.entry(variables)
            .or_default()
            .terms
            .insert(constants, c.clone());
    }
    out
}

/// Whether `a = k·b` for a constant `k`, and which.
pub(crate) fn constant_ratio(a: &Value, b: &Value, budget: &mut Budget) -> Made<Ratio> {
    let (Some(pa), Some(pb)) = (a.polynomial(), b.polynomial()) else {
        return Ok(Ratio::Unknown);
    };
    if !pa.certain() || !pb.certain() {
        return Ok(Ratio::Unknown);
    }
    if pa.is_zero() || pb.is_zero() {
        return Ok(Ratio::Not);
    }
    let (ga, gb) = (by_variables(pa), by_variables(pb));
    if !ga.keys().eq(gb.keys()) {
        return Ok(Ratio::Not);
    }
    let Some((key, ca)) = ga.iter().next() else {
        return Ok(Ratio::Not);
    };
    let k = Value {
        num: ca.clone(),
        den: gb[key].clone(),
    }
    .reduced(budget)?;
    let scaled = k.mul(b, budget)?;
    let d = a.add(&scaled.negate(), budget)?;
    Ok(if d.is_zero() {
        Ratio::Constant(k)
    } else {
        Ratio::Not
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
            .unwrap()
            .unwrap();
        let half = super::super::latex::parse_latex("\\frac{1}{2}", &limits)
            .unwrap()
            .unwrap();
        let mut budget = Budget::new();
        assert_eq!(
            factored(&a, &half, &mut budget).expect("cheap"),
            Some(false)
        );
        assert_eq!(factored(&a, &a, &mut budget).expect("cheap"), Some(true));
        let other = vec!["9801^{1170}"; 265].join("\\cdot ");
        let b = super::super::latex::parse_latex(&other, &limits)
            .unwrap()
            .unwrap();
        assert_eq!(factored(&a, &b, &mut budget).expect("cheap"), Some(true));
        assert!(
            budget.used() < Budget::DEFAULT_WORK / 10,
            "{}",
            budget.used()
        );
    }
}
