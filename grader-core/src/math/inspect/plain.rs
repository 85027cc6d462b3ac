//! Inspect's `_parse_plain_expression`: a plain answer read as a Python expression (Python's
//! `ast` grammar for the nodes Inspect's builder accepts: numbers, names, `+ - * / **`,
//! calls of a few functions, tuples, lists, sets and comparisons), never evaluated. What the
//! builder refuses is `None` (Inspect then tries the LaTeX parser); a limit is an error.

use num_bigint::BigInt;
use num_rational::BigRational;

use super::super::expr::{Expr, Func, Rel};

/// The most nodes of a parsed expression.
pub(super) const LIMIT_NODES: usize = 512;

/// Why a candidate was not read: Inspect's `_MathParseError` and its two kinds that stop the
/// search (`_MathLimitError`, `_MathUnsafeError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Fail {
    /// Not a mathematical answer; the next candidate is tried.
    Parse,
    /// Past one of Inspect's limits.
    Limit(&'static str),
    /// Code-shaped text.
    Unsafe,
}

/// The most bits of an integer literal.
const MAX_INTEGER_BITS: u64 = 4_096;

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Int(BigInt),
    Float(f64),
    Name(String),
    Op(&'static str),
}

const OPS: [&str; 20] = [
    "**", "==", "!=", "<=", ">=", "//", "+", "-", "*", "/", "%", "(", ")", "[", "]", "{", "}", ",",
    "<", ">",
];

/// Python's tokens of `text`, or `None` for anything Inspect's builder cannot read.
fn tokens(text: &str) -> Result<Option<Vec<Token>>, Fail> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut depth = 0usize;
    let mut line_ended = false;
    while let Some(c) = rest.chars().next() {
        if c.is_whitespace() {
            // A line break outside brackets ends the expression (Python's `eval` mode).
            if depth == 0 && (c == '\n' || c == '\r') && !out.is_empty() {
                line_ended = true;
            }
            rest = &rest[c.len_utf8()..];
            continue;
        }
        if line_ended {
            return Ok(None);
        }
        if c.is_ascii_digit() || (c == '.' && rest[1..].starts_with(|d: char| d.is_ascii_digit())) {
            let (token, len) = match number(rest)? {
                Some(found) => found,
                None => return Ok(None),
            };
            out.push(token);
            rest = &rest[len..];
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let len = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            out.push(Token::Name(rest[..len].to_owned()));
            rest = &rest[len..];
            continue;
        }
        let Some(op) = OPS.iter().find(|op| rest.starts_with(**op)) else {
            return Ok(None);
        };
        match *op {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth = depth.saturating_sub(1),
            _ => {}
        }
        out.push(Token::Op(op));
        rest = &rest[op.len()..];
    }
    Ok(Some(out))
}

/// A Python number literal at the start of `text`: the token and its length.
fn number(text: &str) -> Result<Option<(Token, usize)>, Fail> {
    let b = text.as_bytes();
    let digits = |from: usize| {
        let mut k = from;
        while k < b.len() && (b[k].is_ascii_digit() || (b[k] == b'_' && k > from)) {
            k += 1;
        }
        k
    };
    let mut i = digits(0);
    let mut float = false;
    if b.get(i) == Some(&b'.') {
        float = true;
        i = digits(i + 1);
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let end = digits(j);
        if end > j {
            float = true;
            i = end;
        }
    }
    if matches!(b.get(i), Some(b'j' | b'J')) {
        // A complex literal: not read here.
        return Ok(None);
    }
    if b.get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        return Ok(None);
    }
    let literal: String = text[..i].chars().filter(|c| *c != '_').collect();
    if float {
        let value: f64 = literal.parse().map_err(|_| Fail::Parse)?;
        if !value.is_finite() {
            return Err(Fail::Limit("non-finite numeric literal"));
        }
        return Ok(Some((Token::Float(value), i)));
    }
    // A leading zero is a syntax error in Python 3 (`012`), but `0` and `00` are fine.
    if literal.len() > 1 && literal.starts_with('0') && literal.bytes().any(|d| d != b'0') {
        return Ok(None);
    }
    let n: BigInt = literal.parse().map_err(|_| Fail::Parse)?;
    if n.bits() > MAX_INTEGER_BITS {
        return Err(Fail::Limit("integer literal is too large"));
    }
    Ok(Some((Token::Int(n), i)))
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    nodes: usize,
    depth: usize,
}

/// A node the builder refuses (`None`), or a limit.
type Step<T> = Result<Option<T>, Fail>;

macro_rules! try_some {
    ($e:expr) => {
        match $e? {
            Some(v) => v,
            None => return Ok(None),
        }
    };
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Some(Token::Op(o)) if *o == op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn node(&mut self, expr: Expr) -> Step<Expr> {
        self.nodes += 1;
        if self.nodes > LIMIT_NODES {
            return Err(Fail::Limit("plain expression contains too many nodes"));
        }
        Ok(Some(expr))
    }

    fn enter(&mut self) -> Result<(), Fail> {
        self.depth += 1;
        // Python's own parser stops nesting long before this.
        if self.depth > 200 {
            return Err(Fail::Parse);
        }
        Ok(())
    }

    /// The whole input: an expression or a tuple without parentheses.
    fn top(&mut self) -> Step<Expr> {
        let first = try_some!(self.comparison());
        if !matches!(self.peek(), Some(Token::Op(","))) {
            return Ok(Some(first));
        }
        let mut items = vec![first];
        while self.eat(",") {
            if self.peek().is_none() {
                break;
            }
            items.push(try_some!(self.comparison()));
        }
        self.node(Expr::Tuple(items))
    }

    fn comparison(&mut self) -> Step<Expr> {
        let mut values = vec![try_some!(self.additive())];
        let mut ops = Vec::new();
        loop {
            let rel = match self.peek() {
                Some(Token::Op("==")) => Rel::Eq,
                Some(Token::Op("!=")) => Rel::Ne,
                Some(Token::Op("<")) => Rel::Lt,
                Some(Token::Op("<=")) => Rel::Le,
                Some(Token::Op(">")) => Rel::Gt,
                Some(Token::Op(">=")) => Rel::Ge,
                _ => break,
            };
            self.pos += 1;
            ops.push(rel);
            values.push(try_some!(self.additive()));
        }
        if ops.is_empty() {
            return Ok(values.pop());
        }
        let mut relations = Vec::new();
        for (i, rel) in ops.into_iter().enumerate() {
            relations.push(Expr::Rel(
                rel,
                Box::new(values[i].clone()),
                Box::new(values[i + 1].clone()),
            ));
        }
        if relations.len() == 1 {
            return Ok(relations.pop());
        }
        self.node(Expr::And(relations))
    }

    fn additive(&mut self) -> Step<Expr> {
        let mut left = try_some!(self.multiplicative());
        loop {
            if self.eat("+") {
                let right = try_some!(self.multiplicative());
                left = try_some!(self.node(Expr::Add(vec![left, right])));
            } else if self.eat("-") {
                let right = try_some!(self.multiplicative());
                left = try_some!(self.node(Expr::Add(vec![left, Expr::negate(right)])));
            } else {
                return Ok(Some(left));
            }
        }
    }

    fn multiplicative(&mut self) -> Step<Expr> {
        let mut left = try_some!(self.unary());
        loop {
            if self.eat("*") {
                let right = try_some!(self.unary());
                left = try_some!(self.node(Expr::Mul(vec![left, right])));
            } else if self.eat("/") {
                let right = try_some!(self.unary());
                left = try_some!(self.node(Expr::quotient(left, right)));
            } else if matches!(self.peek(), Some(Token::Op("%" | "//"))) {
                // `Mod` and floor division: not offered here.
                return Ok(None);
            } else {
                return Ok(Some(left));
            }
        }
    }

    fn unary(&mut self) -> Step<Expr> {
        if self.eat("+") {
            self.enter()?;
            let x = self.unary();
            self.depth -= 1;
            return x;
        }
        if self.eat("-") {
            self.enter()?;
            let x = try_some!(self.unary());
            self.depth -= 1;
            return self.node(Expr::negate(x));
        }
        self.power()
    }

    fn power(&mut self) -> Step<Expr> {
        let base = try_some!(self.primary());
        if self.eat("**") {
            self.enter()?;
            let exponent = try_some!(self.unary());
            self.depth -= 1;
            return self.node(Expr::Pow(Box::new(base), Box::new(exponent)));
        }
        Ok(Some(base))
    }

    fn primary(&mut self) -> Step<Expr> {
        let Some(token) = self.peek().cloned() else {
            return Ok(None);
        };
        self.pos += 1;
        match token {
            Token::Int(n) => self.node(Expr::Num(BigRational::from_integer(n))),
            Token::Float(f) => self.node(Expr::Float(f)),
            Token::Name(name) => {
                if self.eat("(") {
                    return self.call(&name);
                }
                let expr = match name.as_str() {
                    "E" | "e" => Expr::E,
                    "pi" => Expr::Pi,
                    "inf" | "infinity" => Expr::Inf,
                    // Python's keywords end an expression: a syntax error.
                    "and" | "or" | "not" | "in" | "is" | "if" | "else" | "lambda" | "for"
                    | "None" | "True" | "False" => return Ok(None),
                    other => Expr::Sym(other.to_lowercase()),
                };
                self.node(expr)
            }
            Token::Op("(") => {
                self.enter()?;
                if self.eat(")") {
                    self.depth -= 1;
                    return self.node(Expr::Tuple(Vec::new()));
                }
                let first = try_some!(self.comparison());
                let result = if self.eat(")") {
                    Some(first)
                } else if matches!(self.peek(), Some(Token::Op(","))) {
                    let mut items = vec![first];
                    while self.eat(",") {
                        if self.eat(")") {
                            self.depth -= 1;
                            return self.node(Expr::Tuple(items));
                        }
                        items.push(try_some!(self.comparison()));
                    }
                    if !self.eat(")") {
                        return Ok(None);
                    }
                    Some(Expr::Tuple(items))
                } else {
                    None
                };
                self.depth -= 1;
                Ok(result)
            }
            Token::Op(open @ ("[" | "{")) => {
                let close = if open == "[" { "]" } else { "}" };
                self.enter()?;
                let mut items = Vec::new();
                if !self.eat(close) {
                    loop {
                        items.push(try_some!(self.comparison()));
                        if self.eat(close) {
                            break;
                        }
                        if !self.eat(",") {
                            return Ok(None);
                        }
                        if self.eat(close) {
                            break;
                        }
                    }
                } else if open == "{" {
                    // `{}` is a dict.
                    return Ok(None);
                }
                self.depth -= 1;
                self.node(if open == "[" {
                    Expr::Tuple(items)
                } else {
                    Expr::Set(items)
                })
            }
            Token::Op(_) => Ok(None),
        }
    }

    /// A call of one of Inspect's `_PLAIN_FUNCTIONS`.
    fn call(&mut self, name: &str) -> Step<Expr> {
        self.enter()?;
        let mut args = Vec::new();
        if !self.eat(")") {
            loop {
                args.push(try_some!(self.comparison()));
                if self.eat(")") {
                    break;
                }
                if !self.eat(",") {
                    return Ok(None);
                }
            }
        }
        self.depth -= 1;
        let one = |f: Func, args: Vec<Expr>| -> Option<Expr> {
            let [x] = <[Expr; 1]>::try_from(args).ok()?;
            Some(Expr::Func(f, Box::new(x)))
        };
        let expr = match (name, args.len()) {
            ("sqrt", 1) => Expr::Pow(
                Box::new(args.swap_remove(0)),
                Box::new(Expr::Num(BigRational::new(1.into(), 2.into()))),
            ),
            ("factorial", 1) => try_some!(Ok::<_, Fail>(one(Func::Factorial, args))),
            ("binomial", 2) => {
                let k = args.pop().unwrap_or(Expr::Inf);
                let n = args.pop().unwrap_or(Expr::Inf);
                let fact = |x: Expr| Expr::Func(Func::Factorial, Box::new(x));
                let n_k = Expr::Add(vec![n.clone(), Expr::negate(k.clone())]);
                Expr::quotient(fact(n), Expr::Mul(vec![fact(k), fact(n_k)]))
            }
            ("abs", 1) => try_some!(Ok::<_, Fail>(one(Func::Abs, args))),
            ("ceil", 1) => try_some!(Ok::<_, Fail>(one(Func::Ceil, args))),
            ("floor", 1) => try_some!(Ok::<_, Fail>(one(Func::Floor, args))),
            ("log" | "ln", 1) => Expr::Log(Box::new(args.swap_remove(0)), Box::new(Expr::E)),
            ("log" | "ln", 2) => {
                let base = args.pop().unwrap_or(Expr::E);
                Expr::Log(Box::new(args.swap_remove(0)), Box::new(base))
            }
            ("exp", 1) => Expr::Pow(Box::new(Expr::E), Box::new(args.swap_remove(0))),
            (f, 1) => {
                let func = match f {
                    "sin" => Func::Sin,
                    "cos" => Func::Cos,
                    "tan" => Func::Tan,
                    "asin" => Func::Asin,
                    "acos" => Func::Acos,
                    "atan" => Func::Atan,
                    "sinh" => Func::Sinh,
                    "cosh" => Func::Cosh,
                    "tanh" => Func::Tanh,
                    // `acosh`, `asinh`, `atanh`, `min`, `max`: not offered here.
                    _ => return Ok(None),
                };
                try_some!(Ok::<_, Fail>(one(func, args)))
            }
            _ => return Ok(None),
        };
        self.node(expr)
    }
}

/// `text` read as Inspect's plain builder reads it (after its own rewrites): `Ok(None)` where
/// Python's parser or the builder refuses it.
pub(super) fn parse(text: &str) -> Result<Option<Expr>, Fail> {
    let Some(tokens) = tokens(text)? else {
        return Ok(None);
    };
    if tokens.is_empty() {
        return Ok(None);
    }
    let mut parser = Parser {
        tokens,
        pos: 0,
        nodes: 0,
        depth: 0,
    };
    let expr = parser.top()?;
    Ok(expr.filter(|_| parser.pos == parser.tokens.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_python_expressions() {
        let shown = |t: &str| {
            parse(t)
                .expect("bounded")
                .map(|e| super::super::super::expr::show(&e))
        };
        assert_eq!(shown("-1 + sqrt(3)").as_deref(), Some("-1 + 3**(1/2)"));
        assert_eq!(shown("(3*sqrt(5))/7").as_deref(), Some("3*5**(1/2)/7"));
        assert_eq!(shown("2**(1/4)").as_deref(), Some("2**(1/4)"));
        assert_eq!(shown("(1, 2)").as_deref(), Some("(1, 2)"));
        assert!(shown("odd n").is_none());
        assert!(shown("x.y").is_none());
        assert!(shown("2j").is_none());
        assert!(matches!(parse("1e999"), Err(Fail::Limit(_))));
        assert!(matches!(parse(&"9".repeat(2000)), Err(Fail::Limit(_))));
    }
}
