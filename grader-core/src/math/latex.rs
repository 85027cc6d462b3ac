//! Why this file is long: one recursive-descent parser, its grammar from numbers to matrices, is
//! easiest to check against latex2sympy2_extended in one place.
//! A bounded recursive-descent parser for the LaTeX (and plain) answers math-verify reads with
//! latex2sympy2_extended (and sympy's `parse_expr`): numbers, fractions, roots, powers,
//! functions, percents, relations, sets, tuples, intervals, unions and matrices.
//!
//! Every nesting level counts against [`Limits::depth`](super::Limits), every node against
//! [`Limits::nodes`](super::Limits) and every number's digits against
//! [`Limits::digits`](super::Limits), so no input recurses or allocates without bound.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};

use super::error::{MathError, excerpt};
use super::expr::{Expr, Func, Rel};
use super::limits::Limits;

/// Parses a normalised LaTeX answer; `Ok(None)` where it is not an expression math-verify
/// reads.
pub(crate) fn parse_latex(text: &str, limits: &Limits) -> Result<Option<Expr>, MathError> {
    // `a = b \approx c`: the relation before `\approx`, or what follows it.
    let text = match text.split_once("\\approx") {
        Some((before, after)) => {
            if before.contains('=') {
                before
            } else {
                after
            }
        }
        None => text,
    };
    // `1,234,567` alone is one number (latex2sympy2_extended's `comma_number_regex`).
    if is_comma_number(text) {
        let trimmed = text.trim();
        // latex2sympy's `convert_number`: `0,111` is the decimal 0.111.
        if trimmed.starts_with('0') {
            let decimal = trimmed.replace(',', ".");
            if decimal.matches('.').count() > 1 {
                return Ok(None);
            }
            return Parser::new(&decimal, limits, false).parse_all();
        }
        let joined: String = trimmed.chars().filter(|c| *c != ',').collect();
        return Parser::new(&joined, limits, false).parse_all();
    }
    Parser::new(text, limits, false).parse_all()
}

/// `^\s*-?\d{1,3}(,\d{3})+(\.\d+)?\s*$`.
fn is_comma_number(text: &str) -> bool {
    let t = text.trim();
    let t = t.strip_prefix('-').unwrap_or(t);
    let (whole, decimals) = match t.split_once('.') {
        Some((w, d)) => (w, Some(d)),
        None => (t, None),
    };
    if decimals.is_some_and(|d| d.is_empty() || !d.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    let groups: Vec<&str> = whole.split(',').collect();
    groups.len() > 1
        && (1..=3).contains(&groups[0].len())
        && groups.iter().all(|g| g.bytes().all(|b| b.is_ascii_digit()))
        && groups[1..].iter().all(|g| g.len() == 3)
}

/// Parses a plain expression as sympy's `parse_expr` does (`**` for powers, no implicit
/// products); `Ok(None)` where it is not one.
pub(crate) fn parse_plain(text: &str, limits: &Limits) -> Result<Option<Expr>, MathError> {
    Parser::new(text, limits, true).parse_all()
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    limits: &'a Limits,
    depth: usize,
    nodes: usize,
    abs_depth: usize,
    plain: bool,
    /// Inside a function's argument without parentheses (latex2sympy's `mp_nofunc`): a
    /// product stops before the next function.
    nofunc: bool,
}

/// A parse that failed: `Err(None)` for "not an expression", `Err(Some(error))` for a limit.
type Step<T> = Result<T, Option<MathError>>;

fn fail<T>() -> Step<T> {
    Err(None)
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, limits: &'a Limits, plain: bool) -> Self {
        Self {
            text,
            pos: 0,
            limits,
            depth: 0,
            nodes: 0,
            abs_depth: 0,
            plain,
            nofunc: false,
        }
    }

    fn parse_all(mut self) -> Result<Option<Expr>, MathError> {
        let result = self.top();
        match result {
            Ok(expr) => {
                self.skip_space();
                Ok((self.pos >= self.text.len()).then_some(expr))
            }
            Err(None) => Ok(None),
            Err(Some(error)) => Err(error),
        }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn skip_space(&mut self) {
        let bytes = self.text.as_bytes();
        loop {
            match bytes.get(self.pos) {
                Some(b) if b.is_ascii_whitespace() => self.pos += 1,
                Some(b'~') if !self.plain => self.pos += 1,
                Some(b'\\') if !self.plain => match bytes.get(self.pos + 1) {
                    Some(b',' | b';' | b':' | b' ' | b'!') => self.pos += 2,
                    Some(b'q') => {
                        let rest = self.rest();
                        let len = if rest.starts_with("\\quad") {
                            5
                        } else if rest.starts_with("\\qquad") {
                            6
                        } else {
                            return;
                        };
                        // `\quadx` is `\quad x`, as latex2sympy2_extended reads it.
                        self.pos += len;
                    }
                    _ => return,
                },
                Some(b) if *b >= 0x80 => match self.rest().chars().next() {
                    Some(c) if c.is_whitespace() => self.pos += c.len_utf8(),
                    _ => return,
                },
                _ => return,
            }
        }
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        // The first byte first: most tries fail there, without a call to compare slices.
        if self.text.as_bytes().get(self.pos) == token.as_bytes().first()
            && self.rest().starts_with(token)
        {
            // A command must not run on into letters: `\in` is not `\infty`.
            if token.starts_with('\\')
                && token.len() > 1
                && token[1..].chars().all(|c| c.is_ascii_alphabetic())
                && self.rest()[token.len()..].starts_with(|c: char| c.is_ascii_alphabetic())
            {
                return false;
            }
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn node(&mut self, expr: Expr) -> Step<Expr> {
        self.nodes += 1;
        if self.nodes > self.limits.nodes {
            return Err(Some(MathError::TooManyNodes {
                grader: "math",
                answer: excerpt(self.text),
                limit: self.limits.nodes,
            }));
        }
        Ok(expr)
    }

    fn enter(&mut self) -> Step<()> {
        self.depth += 1;
        if self.depth > self.limits.depth {
            return Err(Some(MathError::TooDeep {
                grader: "math",
                answer: excerpt(self.text),
                limit: self.limits.depth,
            }));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// A comma (or semicolon) separated list at the top: a set, or `a = 1, 2, 3`.
    fn top(&mut self) -> Step<Expr> {
        let items = self.list(&[")", "]", "\\}", "}"])?;
        if items.len() == 1 {
            return items.into_iter().next().ok_or(None);
        }
        if let Some(Expr::Rel(Rel::Eq, lhs, rhs)) = items.first()
            && items[1..].iter().all(|i| !i.is_relation())
        {
            let mut values = vec![(**rhs).clone()];
            values.extend(items[1..].iter().cloned());
            let set = flatten_set(values);
            return self.node(Expr::Rel(Rel::Eq, lhs.clone(), Box::new(set)));
        }
        Ok(flatten_set(items))
    }

    fn list(&mut self, closers: &[&str]) -> Step<Vec<Expr>> {
        let mut items = vec![self.relation()?];
        loop {
            self.skip_space();
            if self.eat(",") || self.eat(";") {
                self.skip_space();
                if self.rest().is_empty() || closers.iter().any(|c| self.rest().starts_with(c)) {
                    break;
                }
                items.push(self.relation()?);
            } else {
                break;
            }
            if items.len() > self.limits.nodes {
                return self.node(Expr::Inf).map(|_| Vec::new());
            }
        }
        Ok(items)
    }

    fn relation_op(&mut self) -> Option<Rel> {
        self.skip_space();
        match self.text.as_bytes().get(self.pos) {
            Some(b'\\' | b'<' | b'>' | b'!' | b'=') => {}
            Some(b) if *b >= 0x80 => {}
            _ => return None,
        }
        const OPS: &[(&str, Rel)] = &[
            ("\\leqslant", Rel::Le),
            ("\\geqslant", Rel::Ge),
            ("\\leq", Rel::Le),
            ("\\geq", Rel::Ge),
            ("\\le", Rel::Le),
            ("\\ge", Rel::Ge),
            ("\\lt", Rel::Lt),
            ("\\gt", Rel::Gt),
            ("\\neq", Rel::Ne),
            ("\\ne", Rel::Ne),
            ("\\in", Rel::Eq),
            ("<=", Rel::Le),
            (">=", Rel::Ge),
            ("!=", Rel::Ne),
            ("=", Rel::Eq),
            ("<", Rel::Lt),
            (">", Rel::Gt),
            ("≤", Rel::Le),
            ("≥", Rel::Ge),
            ("≠", Rel::Ne),
        ];
        OPS.iter().find(|(op, _)| self.eat(op)).map(|&(_, rel)| rel)
    }

    fn relation(&mut self) -> Step<Expr> {
        let first = self.union()?;
        let mut relations = Vec::new();
        let mut left = first;
        while let Some(rel) = self.relation_op() {
            let right = self.union()?;
            relations.push(self.node(Expr::Rel(rel, Box::new(left), Box::new(right.clone())))?);
            left = right;
        }
        match relations.len() {
            0 => Ok(left),
            1 => relations.pop().ok_or(None),
            _ => self.node(Expr::And(relations)),
        }
    }

    fn union(&mut self) -> Step<Expr> {
        let first = self.additive()?;
        let mut parts = vec![first];
        while self.eat("\\cup") {
            parts.push(self.additive()?);
        }
        if parts.len() == 1 {
            return parts.pop().ok_or(None);
        }
        if !parts.iter().all(Expr::is_set) {
            return fail();
        }
        self.node(Expr::Union(parts))
    }

    fn additive(&mut self) -> Step<Expr> {
        self.skip_space();
        // A leading `\pm`: both signs.
        let mut terms: Vec<Expr> = Vec::new();
        let mut pm: Option<usize> = None;
        if self.eat("\\pm") || self.eat("\\mp") || self.eat("±") {
            let t = self.term()?;
            pm = Some(0);
            terms.push(t);
        } else {
            terms.push(self.term()?);
        }
        loop {
            if self.eat("+") {
                terms.push(self.term()?);
            } else if self.eat("-") || self.eat("−") {
                let t = self.term()?;
                terms.push(Expr::negate(t));
            } else if self.eat("\\pm") || self.eat("\\mp") || self.eat("±") {
                if pm.is_some() {
                    return fail();
                }
                pm = Some(terms.len());
                terms.push(self.term()?);
            } else {
                break;
            }
            self.node(Expr::Inf)?;
        }
        let sum = |terms: Vec<Expr>| {
            if terms.len() == 1 {
                terms.into_iter().next().unwrap_or(Expr::Inf)
            } else {
                Expr::Add(terms)
            }
        };
        match pm {
            None => Ok(sum(terms)),
            Some(i) => {
                let mut minus = terms.clone();
                minus[i] = Expr::negate(minus[i].clone());
                let (a, b) = (sum(minus), sum(terms));
                Ok(Expr::Set(vec![a, b]))
            }
        }
    }

    /// latex2sympy's `mp`: factors written side by side (`unary`), joined by explicit
    /// products and quotients, left to right (`1/2x` is `1/(2x)`).
    fn term(&mut self) -> Step<Expr> {
        let mut factors = vec![self.unary()?];
        loop {
            self.skip_space();
            if self.plain && self.rest().starts_with("**") {
                break;
            }
            if self.eat("\\cdot")
                || self.eat("\\times")
                || self.eat("*")
                || self.eat("×")
                || self.eat("\\ast")
            {
                factors.push(self.unary()?);
            } else if self.eat("\\div")
                || self.eat("/")
                || self.eat("÷")
                || (!self.plain && self.eat(":"))
            {
                let d = self.unary()?;
                // latex2sympy divides two numbers at once: `1/3` is the rational 1/3.
                if !self.plain
                    && factors.len() == 1
                    && let Some(q) = rational_quotient(&factors[0], &d)
                {
                    factors[0] = q;
                } else {
                    factors.push(Expr::Pow(Box::new(d), Box::new(Expr::int(-1))));
                }
            } else {
                break;
            }
            self.node(Expr::Inf)?;
        }
        if factors.len() == 1 {
            factors.pop().ok_or(None)
        } else {
            Ok(Expr::Mul(factors))
        }
    }

    /// latex2sympy's `postfix+`: factors written side by side. An integer followed by a
    /// positive fraction of integers (or another integer) is a mixed number: `4\frac{4}{7}`
    /// is 32/7, as latex2sympy's `interpret_as_mixed_fractions` reads it.
    fn chain(&mut self) -> Step<Expr> {
        let mut items = vec![self.postfix()?];
        if !self.plain {
            loop {
                self.skip_space();
                if !self.starts_primary() || (self.nofunc && self.starts_function()) {
                    break;
                }
                items.push(self.postfix()?);
                self.node(Expr::Inf)?;
            }
        }
        let mut acc = items.pop().ok_or(None)?;
        while let Some(left) = items.pop() {
            acc = match (integer_literal(&left), positive_fraction(&acc)) {
                (Some(whole), Some(part)) => {
                    Expr::Num(BigRational::from_integer(whole.clone()) + part)
                }
                _ => match acc {
                    Expr::Mul(mut rest) if !matches!(rest.last(), Some(Expr::Pow(_, e)) if **e == Expr::int(-1)) =>
                    {
                        rest.insert(0, left);
                        Expr::Mul(rest)
                    }
                    other => Expr::Mul(vec![left, other]),
                },
            };
        }
        Ok(acc)
    }

    /// Whether a function command (`\sin`, `\log`, `\sqrt`…) starts here.
    fn starts_function(&self) -> bool {
        let rest = self.rest();
        let Some(after) = rest.strip_prefix('\\') else {
            return false;
        };
        let name: String = after
            .chars()
            .take_while(char::is_ascii_alphabetic)
            .collect();
        function(&name).is_some()
            || matches!(
                name.as_str(),
                "log" | "ln" | "exp" | "sqrt" | "operatorname" | "sum" | "prod" | "int" | "lim"
            )
    }

    /// Whether an implicit product's next factor starts here.
    fn starts_primary(&self) -> bool {
        let rest = self.rest();
        let Some(c) = rest.chars().next() else {
            return false;
        };
        if c == '|' {
            return self.abs_depth == 0;
        }
        if c == '\\' {
            let name: String = rest[1..]
                .chars()
                .take_while(char::is_ascii_alphabetic)
                .collect();
            return !matches!(
                name.as_str(),
                "cdot"
                    | "times"
                    | "div"
                    | "pm"
                    | "mp"
                    | "cup"
                    | "le"
                    | "leq"
                    | "ge"
                    | "geq"
                    | "lt"
                    | "gt"
                    | "ne"
                    | "neq"
                    | "in"
                    | "leqslant"
                    | "geqslant"
                    | "approx"
                    | "end"
                    | "right"
                    | "rfloor"
                    | "rceil"
                    | "rangle"
                    | "rvert"
                    | "vert"
                    | "mod"
                    | "ast"
                    | "quad"
                    | "qquad"
                    | ""
            );
        }
        c.is_alphanumeric() || c == '(' || c == '{' || c == '['
    }

    fn unary(&mut self) -> Step<Expr> {
        self.skip_space();
        if self.eat("-") || self.eat("−") {
            self.enter()?;
            let x = self.unary();
            self.leave();
            return Ok(Expr::negate(x?));
        }
        if self.eat("+") {
            self.enter()?;
            let x = self.unary();
            self.leave();
            return x;
        }
        self.chain()
    }

    fn postfix(&mut self) -> Step<Expr> {
        let mut base = self.primary()?;
        // Each power, factorial or percent nests the expression one level deeper.
        let outer = self.depth;
        let result = self.suffixes(&mut base);
        self.depth = outer;
        result.map(|()| base)
    }

    fn suffixes(&mut self, base: &mut Expr) -> Step<()> {
        loop {
            self.skip_space();
            let rest = self.rest();
            if rest.starts_with("**")
                || rest.starts_with(['^', '!', '%'])
                || rest.starts_with("\\%")
            {
                self.enter()?;
            }
            if (self.plain && rest.starts_with("**")) || (!self.plain && rest.starts_with('^')) {
                self.pos += if self.plain { 2 } else { 1 };
                if self.degree() {
                    continue;
                }
                let exponent = if self.plain {
                    self.unary()?
                } else {
                    self.script()?
                };
                *base = self.node(Expr::Pow(
                    Box::new(std::mem::replace(base, Expr::Inf)),
                    Box::new(exponent),
                ))?;
            } else if rest.starts_with('!') && !rest.starts_with("!=") {
                self.pos += 1;
                *base = self.node(Expr::Func(
                    Func::Factorial,
                    Box::new(std::mem::replace(base, Expr::Inf)),
                ))?;
            } else if rest.starts_with("\\%") || rest.starts_with('%') {
                self.pos += if rest.starts_with('%') { 1 } else { 2 };
                *base = self.node(Expr::Percent(Box::new(std::mem::replace(base, Expr::Inf))))?;
            } else if rest.starts_with("°") {
                self.pos += "°".len();
            } else if !self.plain
                && rest.starts_with('_')
                && matches!(*base, Expr::Num(_) | Expr::Float(_))
            {
                // `204_5`: a base, read as the digits.
                self.pos += 1;
                let _ = self.script()?;
            } else {
                return Ok(());
            }
        }
    }

    /// `^\circ` or `^{\circ}`: degrees, dropped.
    fn degree(&mut self) -> bool {
        self.skip_space();
        for token in ["\\circ", "{\\circ}", "{ \\circ }", "{\\circ }"] {
            if self.rest().starts_with(token) {
                self.pos += token.len();
                return true;
            }
        }
        false
    }

    /// A command's argument in braces (latex2sympy's grammar: `\frac12` and `\sqrt2` are
    /// read only after the `malformed_operators` normalization has braced them).
    fn braced(&mut self) -> Step<Expr> {
        self.skip_space();
        if !self.eat("{") {
            return fail();
        }
        self.enter()?;
        let saved = std::mem::replace(&mut self.nofunc, false);
        let inner = self.top();
        self.nofunc = saved;
        self.leave();
        match inner {
            Ok(x) if self.eat("}") => Ok(x),
            Ok(_) => fail(),
            Err(e) => Err(e),
        }
    }

    /// A superscript's or subscript's argument: `{…}`, or an atom (a whole number, a
    /// letter, a Greek letter, `\pi`, `\infty`): `2^10` is 2¹⁰, `x^-1` is not read.
    fn script(&mut self) -> Step<Expr> {
        self.skip_space();
        if self.rest().starts_with('{') {
            return self.braced();
        }
        self.enter()?;
        let result = match self.peek() {
            Some(c) if c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) if c.is_alphabetic() && c != '\\' => {
                self.pos += c.len_utf8();
                self.node(symbol(&c.to_string()))
            }
            Some('\\') => {
                let name: String = self.rest()[1..]
                    .chars()
                    .take_while(char::is_ascii_alphabetic)
                    .collect();
                if GREEK.contains(&name.as_str()) || matches!(name.as_str(), "pi" | "infty") {
                    self.primary()
                } else {
                    fail()
                }
            }
            _ => fail(),
        };
        self.leave();
        result
    }

    fn group(&mut self, open: &str) -> Step<Expr> {
        self.enter()?;
        let saved_abs = self.abs_depth;
        self.abs_depth = 0;
        let saved_nofunc = std::mem::replace(&mut self.nofunc, false);
        let items = self.list(&[")", "]", "\\}", "}", "\\rangle"]);
        self.abs_depth = saved_abs;
        self.nofunc = saved_nofunc;
        let items = items?;
        self.skip_space();
        let close = if self.eat(")") {
            ")"
        } else if self.eat("]") {
            "]"
        } else if self.eat("\\}") {
            "\\}"
        } else if self.eat("}") {
            "}"
        } else if self.eat("\\rangle") {
            ")"
        } else {
            return fail();
        };
        self.leave();
        match (open, close) {
            ("\\{", "\\}") | ("{", "}") if items.len() > 1 => Ok(flatten_set(items)),
            ("\\{", "\\}") => Ok(dedup_set(items)),
            ("{", "}") => items.into_iter().next().ok_or(None),
            ("(" | "[", ")" | "]") if items.len() == 2 => {
                let (a, b) = (items[0].clone(), items[1].clone());
                let ordered = interval_order(&a, &b);
                match ordered {
                    Some(true) => Ok(Expr::Interval(
                        Box::new(a),
                        Box::new(b),
                        open == "(",
                        close == ")",
                    )),
                    _ if open == "(" && close == ")" => Ok(Expr::Tuple(items)),
                    _ => fail(),
                }
            }
            ("(", ")") if items.len() == 1 => items.into_iter().next().ok_or(None),
            ("[", "]") if items.len() == 1 => items.into_iter().next().ok_or(None),
            ("(" | "[", ")" | "]") if items.len() > 2 => Ok(Expr::Tuple(items)),
            _ => fail(),
        }
    }

    fn number(&mut self) -> Step<Expr> {
        let rest = self.rest();
        let bytes = rest.as_bytes();
        let mut i = 0;
        let mut digits = String::new();
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            digits.push(char::from(bytes[i]));
            i += 1;
        }
        let mut fraction = String::new();
        if bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                fraction.push(char::from(bytes[i]));
                i += 1;
            }
            if digits.is_empty() {
                digits.push('0');
            }
        } else if self.plain && bytes.get(i) == Some(&b'.') && !digits.is_empty() {
            // Python's `3.` is the float 3.0 (latex2sympy's grammar has no such number).
            i += 1;
            fraction.push('0');
        }
        if digits.is_empty() {
            return fail();
        }
        // latex2sympy's `E_NOTATION`: `1.7E5` and `3E8` are decimals (a lower-case `e` is
        // Euler's number).
        let mut exponent = String::new();
        if !self.plain && bytes.get(i) == Some(&b'E') {
            let mut j = i + 1;
            let sign = matches!(bytes.get(j), Some(b'+' | b'-'));
            if sign {
                j += 1;
            }
            let start = j;
            while bytes.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            if j > start {
                exponent = rest[i + 1..j].to_owned();
                i = j;
            }
        }
        let count = digits.len() + fraction.len() + exponent.len();
        if count > self.limits.digits {
            return Err(Some(MathError::TooManyDigits {
                grader: "math",
                answer: excerpt(self.text),
                digits: count,
                limit: self.limits.digits,
            }));
        }
        self.pos += i;
        if !exponent.is_empty() {
            let fraction = if fraction.is_empty() {
                "0"
            } else {
                fraction.as_str()
            };
            let value: f64 = format!("{digits}.{fraction}e{exponent}")
                .parse()
                .map_err(|_| None)?;
            return self.node(Expr::Float(value));
        }
        if fraction.is_empty() {
            let n: BigInt = digits.parse().map_err(|_| None)?;
            self.node(Expr::Num(BigRational::from_integer(n)))
        } else {
            let value: f64 = format!("{digits}.{fraction}").parse().map_err(|_| None)?;
            self.node(Expr::Float(value))
        }
    }

    fn primary(&mut self) -> Step<Expr> {
        self.skip_space();
        let Some(c) = self.peek() else {
            return fail();
        };
        if c.is_ascii_digit()
            || (c == '.' && self.rest()[1..].starts_with(|d: char| d.is_ascii_digit()))
        {
            return self.number();
        }
        if c == '(' || c == '[' {
            self.pos += 1;
            return self.group(if c == '(' { "(" } else { "[" });
        }
        if c == '{' {
            self.pos += 1;
            return self.group("{");
        }
        if c == '|' && !self.plain {
            self.pos += 1;
            self.enter()?;
            self.abs_depth += 1;
            let inner = self.additive();
            self.abs_depth -= 1;
            self.leave();
            let inner = inner?;
            if !self.eat("|") {
                return fail();
            }
            return self.node(Expr::Func(Func::Abs, Box::new(inner)));
        }
        if c == '\\' && !self.plain {
            return self.command();
        }
        if c == 'π' {
            self.pos += c.len_utf8();
            return self.node(Expr::Pi);
        }
        if c == '∞' {
            self.pos += c.len_utf8();
            return self.node(Expr::Inf);
        }
        if c.is_alphabetic() {
            if self.plain {
                let name: String = self
                    .rest()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                self.pos += name.len();
                return self.node(match name.as_str() {
                    "pi" => Expr::Pi,
                    "E" => Expr::E,
                    "oo" => Expr::Inf,
                    _ => Expr::Sym(name),
                });
            }
            self.pos += c.len_utf8();
            let mut name = c.to_string();
            // A subscript makes one symbol: `a_3`, `a_{37}`.
            if self.rest().starts_with('_') {
                self.pos += 1;
                let sub = self.subscript()?;
                name = format!("{}_{}", name.to_lowercase(), sub);
                return self.node(Expr::Sym(name));
            }
            if matches!(c, 'f' | 'g' | 'h') && self.rest().starts_with('(') {
                self.pos += 1;
                self.enter()?;
                let args = self.list(&[")"]);
                self.leave();
                let args = args?;
                if !self.eat(")") {
                    return fail();
                }
                return self.node(Expr::Apply(name, args));
            }
            return self.node(symbol(&name));
        }
        fail()
    }

    /// A subscript's text: `{37}` as `{37}`, one character as itself.
    fn subscript(&mut self) -> Step<String> {
        let rest = self.rest();
        if rest.starts_with('{') {
            let close = super::normalize::closing_brace(rest.as_bytes(), 0).ok_or(None)?;
            let inner = &rest[1..close];
            self.pos += close + 1;
            let inner_lower = inner.to_lowercase();
            if inner.chars().count() == 1 {
                return Ok(inner_lower);
            }
            return Ok(format!("{{{inner_lower}}}"));
        }
        let c = rest.chars().next().ok_or(None)?;
        if !c.is_alphanumeric() {
            return fail();
        }
        self.pos += c.len_utf8();
        Ok(c.to_lowercase().to_string())
    }

    fn command(&mut self) -> Step<Expr> {
        let rest = self.rest();
        let name: String = rest[1..]
            .chars()
            .take_while(char::is_ascii_alphabetic)
            .collect();
        if name.is_empty() {
            if rest.starts_with("\\{") {
                self.pos += 2;
                return self.group("\\{");
            }
            return fail();
        }
        self.pos += 1 + name.len();
        match name.as_str() {
            "frac" | "dfrac" | "tfrac" | "cfrac" => {
                let a = self.braced()?;
                let b = self.braced()?;
                match rational_quotient(&a, &b) {
                    Some(q) => self.node(q),
                    None => self.node(Expr::quotient(a, b)),
                }
            }
            "binom" | "dbinom" | "tbinom" => {
                let n = self.braced()?;
                let k = self.braced()?;
                let fact = |x: Expr| Expr::Func(Func::Factorial, Box::new(x));
                let n_k = Expr::Add(vec![n.clone(), Expr::negate(k.clone())]);
                self.node(Expr::quotient(fact(n), Expr::Mul(vec![fact(k), fact(n_k)])))
            }
            "sqrt" => {
                self.skip_space();
                let index = if self.rest().starts_with('[') {
                    self.pos += 1;
                    self.enter()?;
                    let index = self.additive();
                    self.leave();
                    let index = index?;
                    if !self.eat("]") {
                        return fail();
                    }
                    Some(index)
                } else {
                    None
                };
                let x = self.braced()?;
                let exponent = match index {
                    None => Expr::Num(BigRational::new(BigInt::one(), BigInt::from(2))),
                    Some(n) => Expr::Pow(Box::new(n), Box::new(Expr::int(-1))),
                };
                self.node(Expr::Pow(Box::new(x), Box::new(exponent)))
            }
            "pi" => self.node(Expr::Pi),
            "infty" | "infin" => self.node(Expr::Inf),
            "exp" => {
                let x = self.function_argument()?;
                self.node(Expr::Pow(Box::new(Expr::E), Box::new(x)))
            }
            "ln" | "log" => {
                // latex2sympy: `\log` is base 10 unless a subscript says otherwise, `\ln` base e.
                self.skip_space();
                let base = if self.rest().starts_with('_') {
                    self.pos += 1;
                    self.script()?
                } else if name == "log" {
                    Expr::int(10)
                } else {
                    Expr::E
                };
                self.skip_space();
                let mut power = None;
                if self.rest().starts_with('^') {
                    self.pos += 1;
                    power = Some(self.script()?);
                }
                let x = self.function_argument()?;
                let log = self.node(Expr::Log(Box::new(x), Box::new(base)))?;
                match power {
                    Some(p) => self.node(Expr::Pow(Box::new(log), Box::new(p))),
                    None => Ok(log),
                }
            }
            "text" | "mbox" | "textbf" | "mathrm" | "operatorname" => self.text_command(),
            "begin" => self.matrix(),
            "lbrace" => self.group("\\{"),
            "langle" => self.group("("),
            "lfloor" | "lceil" => {
                self.enter()?;
                let saved = std::mem::replace(&mut self.nofunc, false);
                let x = self.additive();
                self.nofunc = saved;
                self.leave();
                let x = x?;
                let closer = if name == "lfloor" {
                    "\\rfloor"
                } else {
                    "\\rceil"
                };
                if !self.eat(closer) {
                    return fail();
                }
                let f = if name == "lfloor" {
                    Func::Floor
                } else {
                    Func::Ceil
                };
                self.node(Expr::Func(f, Box::new(x)))
            }
            "vert" | "lvert" => {
                self.enter()?;
                let x = self.additive();
                self.leave();
                let x = x?;
                if !(self.eat("\\vert") || self.eat("\\rvert")) {
                    return fail();
                }
                self.node(Expr::Func(Func::Abs, Box::new(x)))
            }
            other => {
                if let Some(f) = function(other) {
                    return self.function(f);
                }
                if GREEK.contains(&other) {
                    return self.node(Expr::Sym(other.to_owned()));
                }
                fail()
            }
        }
    }

    /// `\sin^2 x`, `\sin^{-1}(x)`, `\cos(x)`.
    fn function(&mut self, f: Func) -> Step<Expr> {
        self.skip_space();
        let mut power = None;
        if self.rest().starts_with('^') {
            self.pos += 1;
            let p = self.script()?;
            power = Some(p);
        }
        let inverse = power
            .as_ref()
            .is_some_and(|p| p.exact() == Some(-BigRational::one()));
        let f = if inverse {
            match f {
                Func::Sin => Func::Asin,
                Func::Cos => Func::Acos,
                Func::Tan => Func::Atan,
                other => other,
            }
        } else {
            f
        };
        let x = self.function_argument()?;
        let applied = self.node(Expr::Func(f, Box::new(x)))?;
        match power {
            Some(p) if !inverse => self.node(Expr::Pow(Box::new(applied), Box::new(p))),
            _ => Ok(applied),
        }
    }

    /// A function's argument: `(…)`, or latex2sympy's `mp_nofunc` (the product that
    /// follows, up to the next function: `\sin 2x` is sin(2x), `\sin x \cos x` two factors).
    fn function_argument(&mut self) -> Step<Expr> {
        self.skip_space();
        self.enter()?;
        let x = if self.eat("(") {
            let saved = std::mem::replace(&mut self.nofunc, false);
            let inner = self.top();
            self.nofunc = saved;
            match inner {
                Ok(x) if self.eat(")") => Ok(x),
                Ok(_) => fail(),
                Err(e) => Err(e),
            }
        } else {
            let saved = std::mem::replace(&mut self.nofunc, true);
            let x = self.term();
            self.nofunc = saved;
            x
        };
        self.leave();
        x
    }

    /// `\text{...}`: a unit-free word is a symbol (lower-cased, without spaces), a number is a
    /// number.
    fn text_command(&mut self) -> Step<Expr> {
        self.skip_space();
        let rest = self.rest();
        if !rest.starts_with('{') {
            return fail();
        }
        let close = super::normalize::closing_brace(rest.as_bytes(), 0).ok_or(None)?;
        let inner = rest[1..close].trim();
        self.pos += close + 1;
        let inner = inner.trim_start_matches('(').trim_end_matches(')');
        if inner.is_empty() {
            return fail();
        }
        if inner.chars().all(|c| c.is_ascii_digit()) {
            return Parser::new(inner, self.limits, false).top();
        }
        let word: String = inner
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_lowercase();
        self.node(Expr::Sym(word))
    }

    /// `\begin{pmatrix} a & b \\ c & d \end{pmatrix}` (and `bmatrix`, `matrix`, `array`).
    fn matrix(&mut self) -> Step<Expr> {
        let rest = self.rest();
        let close = rest.find('}').ok_or(None)?;
        let env = rest.get(1..close).ok_or(None)?.to_owned();
        if !rest.starts_with('{') || !(env.ends_with("matrix") || env == "array") {
            return fail();
        }
        self.pos += close + 1;
        if env == "array" {
            self.skip_space();
            if self.rest().starts_with('{') {
                let c = super::normalize::closing_brace(self.rest().as_bytes(), 0).ok_or(None)?;
                self.pos += c + 1;
            }
        }
        self.enter()?;
        let mut cells = Vec::new();
        let mut rows = 0;
        let mut width = None;
        let end = format!("\\end{{{env}}}");
        loop {
            let mut row = Vec::new();
            loop {
                row.push(self.relation()?);
                if !self.eat("&") {
                    break;
                }
            }
            if let Some(w) = width
                && w != row.len()
            {
                return fail();
            }
            width = Some(row.len());
            rows += 1;
            cells.extend(row);
            let more = self.eat("\\\\");
            self.skip_space();
            if self.rest().starts_with(&end) {
                self.pos += end.len();
                break;
            }
            if !more {
                return fail();
            }
        }
        self.leave();
        self.node(Expr::Matrix(rows, cells))
    }
}

/// Greek letters read as symbols.
const GREEK: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "varepsilon",
    "zeta",
    "eta",
    "theta",
    "vartheta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "rho",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "varphi",
    "chi",
    "psi",
    "omega",
    "Gamma",
    "Delta",
    "Theta",
    "Lambda",
    "Xi",
    "Sigma",
    "Phi",
    "Psi",
    "Omega",
];

fn function(name: &str) -> Option<Func> {
    Some(match name {
        "sin" => Func::Sin,
        "cos" => Func::Cos,
        "tan" => Func::Tan,
        "sec" => Func::Sec,
        "csc" => Func::Csc,
        "cot" => Func::Cot,
        "arcsin" => Func::Asin,
        "arccos" => Func::Acos,
        "arctan" => Func::Atan,
        "sinh" => Func::Sinh,
        "cosh" => Func::Cosh,
        "tanh" => Func::Tanh,
        _ => return None,
    })
}

/// `a / b` as one rational where both are rationals and `b` is not 0 (latex2sympy's
/// `Rational` for `\frac{1}{3}` and `1/3`).
fn rational_quotient(a: &Expr, b: &Expr) -> Option<Expr> {
    match (a, b) {
        (Expr::Num(a), Expr::Num(b)) if !b.is_zero() => Some(Expr::Num(quotient(a, b))),
        _ => None,
    }
}

/// `a / b` (`b ≠ 0`), reduced on machine words where both are small integers (a big
/// rational's division reduces by a big gcd).
fn quotient(a: &BigRational, b: &BigRational) -> BigRational {
    use num_integer::Integer;
    use num_traits::ToPrimitive;
    if a.is_integer()
        && b.is_integer()
        && let (Some(n), Some(d)) = (a.numer().to_i64(), b.numer().to_i64())
        && n != i64::MIN
        && d != i64::MIN
    {
        let g = n.gcd(&d).max(1);
        let (n, d) = if d < 0 {
            (-n / g, -d / g)
        } else {
            (n / g, d / g)
        };
        return BigRational::new_raw(n.into(), d.into());
    }
    a / b
}

/// The integer of an integer literal.
fn integer_literal(x: &Expr) -> Option<&BigInt> {
    match x {
        Expr::Num(n) if n.is_integer() => Some(n.numer()),
        _ => None,
    }
}

/// The value of a positive rational literal: a number, or a fraction of two (`\frac{4}{7}`),
/// as latex2sympy's `is_Rational` with `p > 0`.
fn positive_fraction(x: &Expr) -> Option<BigRational> {
    let value = match x {
        Expr::Num(n) => n.clone(),
        Expr::Mul(items) if items.len() == 2 => match (&items[0], &items[1]) {
            (Expr::Num(a), Expr::Pow(b, e)) if **e == Expr::int(-1) => match &**b {
                Expr::Num(b) if !b.is_zero() => a / b,
                _ => return None,
            },
            _ => return None,
        },
        _ => return None,
    };
    (value > BigRational::zero()).then_some(value)
}

/// A one-letter symbol as latex2sympy reads it: `e` is Euler's number, other letters are
/// lower-cased variables.
fn symbol(name: &str) -> Expr {
    if name == "e" {
        return Expr::E;
    }
    Expr::Sym(name.to_lowercase())
}

/// A list of answers as one set: the members of sets in it are members of the whole.
fn flatten_set(items: Vec<Expr>) -> Expr {
    let mut out: Vec<Expr> = Vec::new();
    for item in items {
        match item {
            Expr::Set(inner) => out.extend(inner),
            other => out.push(other),
        }
    }
    dedup_set(out)
}

/// A set without repeated members (as sympy's `FiniteSet`); each member's exact value is
/// worked out once (and bounded, see [`Expr::exact`]).
pub(crate) fn dedup_set(items: Vec<Expr>) -> Expr {
    let mut out: Vec<Expr> = Vec::with_capacity(items.len());
    let mut values: Vec<Option<BigRational>> = Vec::with_capacity(items.len());
    for item in items {
        let value = item.exact();
        let repeated = out
            .iter()
            .zip(&values)
            .any(|(o, v)| *o == item || (value.is_some() && *v == value));
        if !repeated {
            out.push(item);
            values.push(value);
        }
    }
    Expr::Set(out)
}

/// Whether `(a, b)` reads as an interval: both ends numbers with `a < b` (`Some(true)`), a
/// tuple where `a ≥ b`, `None` where either end is not a number.
fn interval_order(a: &Expr, b: &Expr) -> Option<bool> {
    if a.has_symbols() || b.has_symbols() || a.is_set() || b.is_set() {
        return None;
    }
    let (x, y) = (a.eval(&|_| f64::NAN), b.eval(&|_| f64::NAN));
    if x.is_nan() || y.is_nan() {
        return None;
    }
    if let (Some(p), Some(q)) = (a.exact(), b.exact()) {
        return Some(p < q);
    }
    let _ = BigRational::zero();
    Some(x < y)
}
