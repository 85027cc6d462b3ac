//! The parsed form of an answer and its evaluation: exactly, in big rationals, where it is
//! rational, and in floating point otherwise (with variables at given values).

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

/// A relation between two sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rel {
    /// `=` (and `\in`).
    Eq,
    /// `\neq`.
    Ne,
    /// `<`.
    Lt,
    /// `\le`.
    Le,
    /// `>`.
    Gt,
    /// `\ge`.
    Ge,
}

impl Rel {
    /// The relation with its sides swapped (`<` for `>`).
    #[must_use]
    pub fn flipped(self) -> Self {
        match self {
            Self::Lt => Self::Gt,
            Self::Gt => Self::Lt,
            Self::Le => Self::Ge,
            Self::Ge => Self::Le,
            other => other,
        }
    }
}

/// A known function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    /// `\sin`.
    Sin,
    /// `\cos`.
    Cos,
    /// `\tan`.
    Tan,
    /// `\sec`.
    Sec,
    /// `\csc`.
    Csc,
    /// `\cot`.
    Cot,
    /// `\arcsin` (and `\sin^{-1}`).
    Asin,
    /// `\arccos` (and `\cos^{-1}`).
    Acos,
    /// `\arctan` (and `\tan^{-1}`).
    Atan,
    /// `\sinh`.
    Sinh,
    /// `\cosh`.
    Cosh,
    /// `\tanh`.
    Tanh,
    /// The natural logarithm.
    Ln,
    /// The exponential.
    Exp,
    /// `|x|`.
    Abs,
    /// `x!`.
    Factorial,
    /// `\lfloor x \rfloor`.
    Floor,
    /// `\lceil x \rceil`.
    Ceil,
}

/// An answer as math-verify reads it (a sympy expression there).
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// An exact rational (integers included).
    Num(BigRational),
    /// A decimal literal (sympy's `Float`).
    Float(f64),
    /// A variable, its name as math-verify writes it (single letters lower-cased).
    Sym(String),
    /// π.
    Pi,
    /// Euler's number.
    E,
    /// Infinity.
    Inf,
    /// A sum.
    Add(Vec<Expr>),
    /// A product.
    Mul(Vec<Expr>),
    /// A power.
    Pow(Box<Expr>, Box<Expr>),
    /// A logarithm: value, base.
    Log(Box<Expr>, Box<Expr>),
    /// A known function of one argument.
    Func(Func, Box<Expr>),
    /// An unknown function applied: `f(x)`.
    Apply(String, Vec<Expr>),
    /// `x%`: `x / 100`, kept apart as math-verify compares `28%` with `28`.
    Percent(Box<Expr>),
    /// A relation.
    Rel(Rel, Box<Expr>, Box<Expr>),
    /// A chain of relations (`a < b < c`).
    And(Vec<Expr>),
    /// A finite set (and a comma-separated list of answers).
    Set(Vec<Expr>),
    /// A tuple.
    Tuple(Vec<Expr>),
    /// An interval: start, end, left open, right open.
    Interval(Box<Expr>, Box<Expr>, bool, bool),
    /// A union of sets.
    Union(Vec<Expr>),
    /// A matrix: rows, then its cells row by row.
    Matrix(usize, Vec<Expr>),
}

/// The largest exponent computed exactly.
const MAX_EXACT_EXPONENT: u32 = 4096;
/// The most bits of an exact power's numerator or denominator.
const MAX_EXACT_BITS: u64 = 16_384;

impl Expr {
    /// An integer.
    #[must_use]
    pub fn int(n: i64) -> Self {
        Self::Num(BigRational::from_integer(BigInt::from(n)))
    }

    /// `-x`.
    #[must_use]
    pub fn negate(x: Self) -> Self {
        match x {
            Self::Num(n) => Self::Num(-n),
            Self::Float(f) => Self::Float(-f),
            other => Self::Mul(vec![Self::int(-1), other]),
        }
    }

    /// `a / b`.
    #[must_use]
    pub fn quotient(a: Self, b: Self) -> Self {
        Self::Mul(vec![a, Self::Pow(Box::new(b), Box::new(Self::int(-1)))])
    }

    /// Whether this is a relation or a chain of them.
    #[must_use]
    pub fn is_relation(&self) -> bool {
        match self {
            Self::Rel(..) => true,
            Self::And(items) => {
                !items.is_empty() && items.iter().all(|i| matches!(i, Self::Rel(..)))
            }
            _ => false,
        }
    }

    /// Whether this is a set-like value (a set, tuple, interval or union).
    #[must_use]
    pub fn is_set(&self) -> bool {
        matches!(
            self,
            Self::Set(_) | Self::Tuple(_) | Self::Interval(..) | Self::Union(_)
        )
    }

    /// Whether the expression has a variable or unknown function.
    #[must_use]
    pub fn has_symbols(&self) -> bool {
        self.any(|e| matches!(e, Self::Sym(_) | Self::Apply(..)))
    }

    /// Whether the expression holds a decimal literal.
    #[must_use]
    pub fn has_float(&self) -> bool {
        self.any(|e| matches!(e, Self::Float(_)))
    }

    /// The names of the variables, sorted, without repeats.
    #[must_use]
    pub fn symbols(&self) -> Vec<String> {
        let mut names = Vec::new();
        self.visit(&mut |e| match e {
            Self::Sym(name) => names.push(name.clone()),
            Self::Apply(name, _) => names.push(format!("{name}()")),
            _ => {}
        });
        names.sort();
        names.dedup();
        names
    }

    /// The same expression with variables renamed by `rename` (`None` keeps a name).
    #[must_use]
    pub fn map_symbols(&self, rename: &dyn Fn(&str) -> Option<String>) -> Self {
        let map = |items: &[Self]| items.iter().map(|x| x.map_symbols(rename)).collect();
        let boxed = |x: &Self| Box::new(x.map_symbols(rename));
        match self {
            Self::Sym(name) => Self::Sym(rename(name).unwrap_or_else(|| name.clone())),
            Self::Add(v) => Self::Add(map(v)),
            Self::Mul(v) => Self::Mul(map(v)),
            Self::Apply(name, v) => Self::Apply(name.clone(), map(v)),
            Self::And(v) => Self::And(map(v)),
            Self::Set(v) => Self::Set(map(v)),
            Self::Tuple(v) => Self::Tuple(map(v)),
            Self::Union(v) => Self::Union(map(v)),
            Self::Matrix(r, v) => Self::Matrix(*r, map(v)),
            Self::Pow(a, b) => Self::Pow(boxed(a), boxed(b)),
            Self::Log(a, b) => Self::Log(boxed(a), boxed(b)),
            Self::Rel(r, a, b) => Self::Rel(*r, boxed(a), boxed(b)),
            Self::Interval(a, b, l, r) => Self::Interval(boxed(a), boxed(b), *l, *r),
            Self::Func(f, a) => Self::Func(*f, boxed(a)),
            Self::Percent(a) => Self::Percent(boxed(a)),
            other => other.clone(),
        }
    }

    /// Calls `f` on each direct child.
    pub(crate) fn visit_children<'a>(&'a self, f: &mut impl FnMut(&'a Self)) {
        for child in self.children() {
            f(child);
        }
    }

    /// The direct children (without allocating).
    fn children(&self) -> impl Iterator<Item = &Self> {
        let (items, first, second): (&[Self], Option<&Self>, Option<&Self>) = match self {
            Self::Num(_) | Self::Float(_) | Self::Sym(_) | Self::Pi | Self::E | Self::Inf => {
                (&[], None, None)
            }
            Self::Add(v)
            | Self::Mul(v)
            | Self::Apply(_, v)
            | Self::And(v)
            | Self::Set(v)
            | Self::Tuple(v)
            | Self::Union(v)
            | Self::Matrix(_, v) => (v, None, None),
            Self::Pow(a, b) | Self::Log(a, b) | Self::Rel(_, a, b) | Self::Interval(a, b, ..) => {
                (&[], Some(a), Some(b))
            }
            Self::Func(_, a) | Self::Percent(a) => (&[], Some(a), None),
        };
        items.iter().chain(first).chain(second)
    }

    /// Whether some node satisfies `f` (stopping at the first): recursively near the root
    /// (most answers are shallow, and nothing is allocated), with an explicit stack below.
    pub(crate) fn any(&self, f: impl Fn(&Self) -> bool) -> bool {
        fn shallow(e: &Expr, f: &dyn Fn(&Expr) -> bool, depth: u32) -> bool {
            if depth == 0 {
                return deep(e, f);
            }
            f(e) || e.children().any(|c| shallow(c, f, depth - 1))
        }
        fn deep(e: &Expr, f: &dyn Fn(&Expr) -> bool) -> bool {
            let mut stack = vec![e];
            while let Some(e) = stack.pop() {
                if f(e) {
                    return true;
                }
                stack.extend(e.children());
            }
            false
        }
        shallow(self, &f, 32)
    }

    /// Calls `f` on every node, without recursion (an explicit stack).
    pub fn visit(&self, f: &mut impl FnMut(&Self)) {
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            f(e);
            stack.extend(e.children());
        }
    }

    /// The exact rational value, where the expression is a rational number (sums, products,
    /// integer powers and percents of rationals; factorials of small integers) of at most
    /// 16 384 bits: a quick structural value, the comparisons use exact normal forms.
    #[must_use]
    pub fn exact(&self) -> Option<BigRational> {
        match self {
            Self::Num(n) => Some(n.clone()),
            Self::Add(items) => items.iter().try_fold(BigRational::zero(), |acc, x| {
                let sum = acc + x.exact()?;
                (bits(&sum) <= MAX_EXACT_BITS).then_some(sum)
            }),
            Self::Mul(items) => items.iter().try_fold(BigRational::one(), |acc, x| {
                let x = x.exact()?;
                if bits(&acc) + bits(&x) > MAX_EXACT_BITS {
                    return None;
                }
                Some(acc * x)
            }),
            Self::Percent(x) => Some(x.exact()? / BigRational::from_integer(BigInt::from(100))),
            Self::Pow(base, exponent) => {
                let base = base.exact()?;
                let exponent = exponent.exact()?;
                if !exponent.is_integer() {
                    return exact_root(&base, &exponent);
                }
                let e = exponent.to_integer().to_i64()?;
                let magnitude = u32::try_from(e.unsigned_abs()).ok()?;
                if magnitude > MAX_EXACT_EXPONENT {
                    return None;
                }
                let bits = base.numer().bits().max(base.denom().bits());
                if bits.saturating_mul(u64::from(magnitude)) > MAX_EXACT_BITS {
                    return None;
                }
                if base.is_zero() && e < 0 {
                    return None;
                }
                // Numerator and denominator apart: a reduced fraction's powers stay reduced,
                // and no gcd (quadratic in the bits) runs at each squaring.
                let power = BigRational::new_raw(
                    num_traits::pow(base.numer().clone(), magnitude as usize),
                    num_traits::pow(base.denom().clone(), magnitude as usize),
                );
                Some(if e < 0 { power.recip() } else { power })
            }
            Self::Func(Func::Factorial, x) => {
                let n = x.exact()?;
                if !n.is_integer() || n.is_negative() {
                    return None;
                }
                let n = n.to_integer().to_u32()?;
                if n > 1000 {
                    return None;
                }
                Some(BigRational::from_integer(
                    (1..=n).fold(BigInt::one(), |acc, k| acc * k),
                ))
            }
            Self::Func(Func::Abs, x) => Some(x.exact()?.abs()),
            _ => None,
        }
    }

    /// The value in floating point, with each variable's value from `var` (`NaN` where the
    /// expression is not a number).
    #[must_use]
    pub fn eval(&self, var: &dyn Fn(&str) -> f64) -> f64 {
        match self {
            Self::Num(n) => ratio_f64(n),
            Self::Float(f) => *f,
            Self::Sym(name) => var(name),
            Self::Apply(name, args) => {
                let mut h = var(name);
                for a in args {
                    h = (h * 1.618_033_988_749_895 + a.eval(var)).sin() + 1.5;
                }
                h
            }
            Self::Pi => std::f64::consts::PI,
            Self::E => std::f64::consts::E,
            Self::Inf => f64::INFINITY,
            Self::Add(items) => items.iter().map(|x| x.eval(var)).sum(),
            Self::Mul(items) => items.iter().map(|x| x.eval(var)).product(),
            Self::Pow(base, exponent) => {
                if let Some(e) = exponent.exact().filter(|e| !e.is_integer())
                    && let Some(b) = base.exact()
                {
                    // Odd roots of negative numbers are real, as sympy's `real_root` for LaTeX.
                    if b.is_negative() && e.denom() % 2 == BigInt::one() {
                        let value = (-ratio_f64(&b)).powf(ratio_f64(&e));
                        return if e.numer() % 2 == BigInt::zero() {
                            value
                        } else {
                            -value
                        };
                    }
                }
                base.eval(var).powf(exponent.eval(var))
            }
            Self::Log(x, base) => x.eval(var).ln() / base.eval(var).ln(),
            Self::Func(f, x) => {
                let x = x.eval(var);
                match f {
                    Func::Sin => x.sin(),
                    Func::Cos => x.cos(),
                    Func::Tan => x.tan(),
                    Func::Sec => 1.0 / x.cos(),
                    Func::Csc => 1.0 / x.sin(),
                    Func::Cot => 1.0 / x.tan(),
                    Func::Asin => x.asin(),
                    Func::Acos => x.acos(),
                    Func::Atan => x.atan(),
                    Func::Sinh => x.sinh(),
                    Func::Cosh => x.cosh(),
                    Func::Tanh => x.tanh(),
                    Func::Ln => x.ln(),
                    Func::Exp => x.exp(),
                    Func::Abs => x.abs(),
                    Func::Floor => x.floor(),
                    Func::Ceil => x.ceil(),
                    Func::Factorial => gamma_factorial(x),
                }
            }
            Self::Percent(x) => x.eval(var) / 100.0,
            _ => f64::NAN,
        }
    }
}

fn bits(n: &BigRational) -> u64 {
    n.numer().bits().max(n.denom().bits())
}

/// `base^exponent` exactly where both are rational and the root is exact (`4^(1/2) = 2`).
fn exact_root(base: &BigRational, exponent: &BigRational) -> Option<BigRational> {
    if base.is_negative() {
        return None;
    }
    let q = exponent.denom().to_u32()?;
    if q > 64 {
        return None;
    }
    let root = |n: &BigInt| -> Option<BigInt> {
        let r = n.nth_root(q);
        (num_traits::pow(r.clone(), q as usize) == *n).then_some(r)
    };
    let rooted = BigRational::new(root(base.numer())?, root(base.denom())?);
    let p = BigRational::from_integer(exponent.numer().clone());
    Expr::Pow(Box::new(Expr::Num(rooted)), Box::new(Expr::Num(p))).exact()
}

/// A rational as the nearest double (through its decimal text where the parts overflow).
pub(crate) fn ratio_f64(n: &BigRational) -> f64 {
    match (n.numer().to_f64(), n.denom().to_f64()) {
        (Some(a), Some(b)) if a.is_finite() && b.is_finite() => a / b,
        _ => {
            let shift = n.numer().bits().saturating_sub(n.denom().bits());
            if shift > 1100 {
                return if n.is_negative() {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                };
            }
            let scaled = n.numer() * BigInt::from(1_u64 << 53) / n.denom();
            let scaled = scaled.to_f64().unwrap_or(f64::NAN);
            scaled / 2f64.powi(53)
        }
    }
}

/// `x!` for real `x` (the gamma function at `x + 1`, by Lanczos; exact for small integers).
fn gamma_factorial(x: f64) -> f64 {
    if x >= 0.0 && x.fract() == 0.0 && x <= 170.0 {
        let mut out = 1.0;
        let mut k = 2.0;
        while k <= x {
            out *= k;
            k += 1.0;
        }
        return out;
    }
    if x > 171.0 {
        return f64::INFINITY;
    }
    lanczos_gamma(x + 1.0)
}

fn lanczos_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return std::f64::consts::PI / ((std::f64::consts::PI * x).sin() * lanczos_gamma(1.0 - x));
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    (2.0 * std::f64::consts::PI).sqrt() * t.powf(x + 0.5) * (-t).exp() * a
}

/// A short text for an expression, for a grader's `info` (close to sympy's `str`).
#[must_use]
pub fn show(expr: &Expr) -> String {
    shown(expr, 0)
}

/// `expr` as text, in parentheses where it binds looser than `outer` (0: anything goes, 1: a
/// term of a sum, 2: a factor, 3: a power's base or exponent).
fn shown(expr: &Expr, outer: u8) -> String {
    let list = |items: &[Expr], sep: &str| {
        items
            .iter()
            .map(|e| shown(e, 0))
            .collect::<Vec<_>>()
            .join(sep)
    };
    let wrap = |text: String, own: u8| {
        if own < outer {
            format!("({text})")
        } else {
            text
        }
    };
    match expr {
        Expr::Num(n) if n.is_integer() => wrap(n.to_string(), if n.is_negative() { 2 } else { 4 }),
        Expr::Num(n) => wrap(n.to_string(), 2),
        Expr::Float(f) => wrap(format!("{f}"), if *f < 0.0 { 2 } else { 4 }),
        Expr::Sym(s) => s.clone(),
        Expr::Pi => "pi".to_owned(),
        Expr::E => "E".to_owned(),
        Expr::Inf => "oo".to_owned(),
        Expr::Add(v) => {
            let mut text = String::new();
            for (i, term) in v.iter().enumerate() {
                let t = shown(term, 1);
                if i > 0 {
                    match t.strip_prefix('-') {
                        Some(rest) => {
                            text.push_str(" - ");
                            text.push_str(rest);
                        }
                        None => {
                            text.push_str(" + ");
                            text.push_str(&t);
                        }
                    }
                } else {
                    text.push_str(&t);
                }
            }
            wrap(text, 1)
        }
        Expr::Mul(v) => {
            let mut num = Vec::new();
            let mut den = Vec::new();
            for factor in v {
                match factor {
                    Expr::Pow(base, exponent) if **exponent == Expr::int(-1) => {
                        den.push(shown(base, 3))
                    }
                    Expr::Num(n) if *n == -BigRational::one() && v.len() > 1 => {
                        num.push("-".to_owned())
                    }
                    other => num.push(shown(other, 2)),
                }
            }
            let mut text = num.join("*").replace("-*", "-");
            if text.is_empty() {
                text = "1".to_owned();
            }
            for d in den {
                text.push('/');
                text.push_str(&d);
            }
            wrap(text, 2)
        }
        Expr::Pow(a, b) => wrap(format!("{}**{}", shown(a, 3), shown(b, 3)), 3),
        Expr::Log(a, b) => format!("log({}, {})", shown(a, 0), shown(b, 0)),
        Expr::Func(f, a) => format!("{}({})", format!("{f:?}").to_lowercase(), shown(a, 0)),
        Expr::Apply(name, args) => format!("{name}({})", list(args, ", ")),
        Expr::Percent(a) => format!("{}%", shown(a, 3)),
        Expr::Rel(r, a, b) => {
            let op = match r {
                Rel::Eq => "=",
                Rel::Ne => "!=",
                Rel::Lt => "<",
                Rel::Le => "<=",
                Rel::Gt => ">",
                Rel::Ge => ">=",
            };
            format!("{} {op} {}", shown(a, 0), shown(b, 0))
        }
        Expr::And(v) => list(v, " & "),
        Expr::Set(v) => format!("{{{}}}", list(v, ", ")),
        Expr::Tuple(v) => format!("({})", list(v, ", ")),
        Expr::Interval(a, b, l, r) => format!(
            "{}{}, {}{}",
            if *l { '(' } else { '[' },
            shown(a, 0),
            shown(b, 0),
            if *r { ')' } else { ']' }
        ),
        Expr::Union(v) => list(v, " U "),
        Expr::Matrix(rows, v) => format!("Matrix({rows}; {})", list(v, ", ")),
    }
}
