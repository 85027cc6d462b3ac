//! math-verify's `verify`: whether two parsed answers are the same, by its rules (assignments
//! read as their value, relations compared through their difference, sets and tuples element
//! by element, symbols by name, numbers exactly or rounded where one is a decimal), the
//! values compared by [`numeric`](super::numeric) on exact normal forms.

use std::borrow::Cow;

use num_traits::{Signed, Zero};

use super::error::MathError;
use super::expr::{Expr, Rel};
use super::numeric::{self, Ctx};

/// Whether `x` divides by zero somewhere (sympy's `zoo`): math-verify never matches it.
fn has_zoo(x: &Expr) -> bool {
    x.any(|e| {
        matches!(e, Expr::Pow(base, exponent)
            if base.exact().is_some_and(|b| b.is_zero())
                && exponent.exact().is_some_and(|p| p.is_negative()))
    })
}

/// Whether every leaf of `x` is a variable (math-verify's `is_expr_of_only_symbols`).
fn only_symbols(x: &Expr) -> bool {
    match x {
        Expr::Sym(_) => true,
        Expr::Apply(..) => true,
        Expr::Add(v) | Expr::Mul(v) | Expr::Tuple(v) => v.iter().all(only_symbols),
        Expr::Pow(base, exponent) => {
            only_symbols(base)
                && exponent
                    .exact()
                    .is_some_and(|e| e == -num_rational::BigRational::from_integer(1.into()))
        }
        Expr::Func(_, a) => only_symbols(a),
        _ => false,
    }
}

fn is_equation(x: &Expr) -> bool {
    match x {
        Expr::Rel(Rel::Eq, ..) => true,
        Expr::And(v) => !v.is_empty() && v.iter().all(|r| matches!(r, Expr::Rel(Rel::Eq, ..))),
        _ => false,
    }
}

fn is_assignment(x: &Expr) -> bool {
    match x {
        Expr::Rel(Rel::Eq, lhs, _) => only_symbols(lhs),
        Expr::And(v) => {
            is_equation(x) && matches!(v.first(), Some(Expr::Rel(_, lhs, _)) if only_symbols(lhs))
        }
        _ => false,
    }
}

fn last_relation(x: &Expr) -> &Expr {
    match x {
        Expr::And(v) => v.last().map_or(x, last_relation),
        other => other,
    }
}

fn first_relation(x: &Expr) -> &Expr {
    match x {
        Expr::And(v) => v.first().unwrap_or(x),
        other => other,
    }
}

fn sides(x: &Expr) -> Option<(&Expr, &Expr)> {
    match x {
        Expr::Rel(_, a, b) => Some((a, b)),
        _ => None,
    }
}

/// `a - b`.
fn minus(a: &Expr, b: &Expr) -> Expr {
    Expr::Add(vec![a.clone(), Expr::negate(b.clone())])
}

/// `pred` with its variables renamed to the gold's, in sorted order, where both have as many
/// (math-verify's `strict=False`).
fn renamed(gold: &Expr, pred: &Expr) -> Option<Expr> {
    let (g, p) = (gold.symbols(), pred.symbols());
    if g.len() != p.len() || g == p || g.iter().chain(&p).any(|s| s.ends_with("()")) {
        return None;
    }
    let map: std::collections::HashMap<&str, &str> = p
        .iter()
        .map(String::as_str)
        .zip(g.iter().map(String::as_str))
        .collect();
    Some(pred.map_symbols(&|name| map.get(name).map(|s| (*s).to_owned())))
}

/// math-verify's `sympy_expr_eq`.
pub(crate) fn expr_eq(gold: &Expr, pred: &Expr, ctx: &mut Ctx<'_>) -> Result<bool, MathError> {
    ctx.budget.charge(1)?;
    // Copied only where rewritten.
    let mut gold = Cow::Borrowed(gold);
    let mut pred = Cow::Borrowed(pred);
    if !ctx.options.strict
        && let Some(renamed) = renamed(&gold, &pred)
    {
        pred = Cow::Owned(renamed);
    }
    let (gold_assign, pred_assign) = (is_assignment(&gold), is_assignment(&pred));
    let (gold_eq, pred_eq) = (is_equation(&gold), is_equation(&pred));
    if gold_assign
        && let (Some((lhs, _)), Some((_, rhs))) =
            (sides(first_relation(&gold)), sides(last_relation(&gold)))
    {
        gold = Cow::Owned(Expr::Rel(
            Rel::Eq,
            Box::new(lhs.clone()),
            Box::new(rhs.clone()),
        ));
    }
    if pred_assign
        && let (Some((lhs, _)), Some((_, rhs))) =
            (sides(first_relation(&pred)), sides(last_relation(&pred)))
    {
        pred = Cow::Owned(Expr::Rel(
            Rel::Eq,
            Box::new(lhs.clone()),
            Box::new(rhs.clone()),
        ));
    }
    if pred_eq && !gold_eq {
        if let Some((_, rhs)) = sides(last_relation(&pred)) {
            pred = Cow::Owned(rhs.clone());
        }
    } else if gold_assign
        && !pred_eq
        && let Some((_, rhs)) = sides(last_relation(&gold))
    {
        gold = Cow::Owned(rhs.clone());
    }
    if gold.is_relation()
        && pred.is_set()
        && let Some(set) = relation_as_set(&gold)
    {
        gold = Cow::Owned(set);
    }
    if ctx.options.allow_set_relation_comp
        && pred.is_relation()
        && gold.is_set()
        && let Some(set) = relation_as_set(&pred)
    {
        pred = Cow::Owned(set);
    }
    if has_zoo(&gold) {
        return Ok(false);
    }
    if gold == pred {
        return Ok(true);
    }
    if gold.is_relation() && pred.is_relation() {
        return relations_eq(&gold, &pred, ctx);
    }
    if gold.is_set() || pred.is_set() {
        return sets_eq(&gold, &pred, ctx);
    }
    if matches!(*gold, Expr::Sym(_)) || matches!(*pred, Expr::Sym(_)) {
        return Ok(symbols_eq(&gold, &pred));
    }
    if gold.is_relation() || pred.is_relation() {
        return Ok(false);
    }
    numeric::values_eq(&gold, &pred, ctx)
}

/// A relation of one variable with numbers as the interval it holds on (sympy's `as_set`, for
/// `x < 3` and `a < x \le b`).
fn relation_as_set(x: &Expr) -> Option<Expr> {
    let variable = |e: &Expr| matches!(e, Expr::Sym(_) | Expr::Apply(..));
    let number = |e: &Expr| !e.has_symbols() && !e.eval(&|_| f64::NAN).is_nan();
    let bound = |e: &Expr| Box::new(e.clone());
    let inf = || Box::new(Expr::Inf);
    let minus_inf = || Box::new(Expr::negate(Expr::Inf));
    match x {
        Expr::Rel(rel, a, b) => {
            let (rel, c) = if variable(a) && number(b) {
                (*rel, b)
            } else if variable(b) && number(a) {
                (rel.flipped(), a)
            } else {
                return None;
            };
            match rel {
                Rel::Lt => Some(Expr::Interval(minus_inf(), bound(c), true, true)),
                Rel::Le => Some(Expr::Interval(minus_inf(), bound(c), true, false)),
                Rel::Gt => Some(Expr::Interval(bound(c), inf(), true, true)),
                Rel::Ge => Some(Expr::Interval(bound(c), inf(), false, true)),
                _ => None,
            }
        }
        Expr::And(items) if items.len() == 2 => {
            let (Expr::Rel(r1, a, x1), Expr::Rel(r2, x2, b)) = (&items[0], &items[1]) else {
                return None;
            };
            if x1 != x2 || !variable(x1) || !number(a) || !number(b) {
                return None;
            }
            let lower = matches!(r1, Rel::Lt | Rel::Le) && matches!(r2, Rel::Lt | Rel::Le);
            let upper = matches!(r1, Rel::Gt | Rel::Ge) && matches!(r2, Rel::Gt | Rel::Ge);
            if lower {
                Some(Expr::Interval(
                    bound(a),
                    bound(b),
                    *r1 == Rel::Lt,
                    *r2 == Rel::Lt,
                ))
            } else if upper {
                Some(Expr::Interval(
                    bound(b),
                    bound(a),
                    *r2 == Rel::Gt,
                    *r1 == Rel::Gt,
                ))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// math-verify's `sympy_compare_relational`.
fn relations_eq(gold: &Expr, pred: &Expr, ctx: &mut Ctx<'_>) -> Result<bool, MathError> {
    if let (Expr::And(g), Expr::And(p)) = (gold, pred) {
        if g.len() != p.len() {
            return Ok(false);
        }
        for (x, y) in g.iter().zip(p) {
            if !relations_eq(x, y, ctx)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    let (Expr::Rel(rg, gl, gr), Expr::Rel(rp, pl, pr)) = (gold, pred) else {
        return Ok(false);
    };
    let (dg, dp) = (minus(gl, gr), minus(pl, pr));
    if rg == rp && expr_eq(&dg, &dp, ctx)? {
        return Ok(true);
    }
    if rg.flipped() == *rp && *rg != Rel::Eq && *rg != Rel::Ne && expr_eq(&dg, &minus(pr, pl), ctx)?
    {
        return Ok(true);
    }
    // sympy's `solve`: the same solutions where one difference is a multiple of the other.
    match (rg, rp) {
        (Rel::Eq, Rel::Eq) => numeric::proportional(&dg, &dp, 0, ctx),
        _ if rg == rp => numeric::proportional(&dg, &dp, 1, ctx),
        _ if rg.flipped() == *rp => numeric::proportional(&dg, &dp, -1, ctx),
        _ => Ok(false),
    }
}

/// math-verify's `sympy_compare_symbols`.
fn symbols_eq(gold: &Expr, pred: &Expr) -> bool {
    let is_e_name = |x: &Expr| matches!(x, Expr::Sym(n) if n.to_lowercase() == "e");
    if (is_e_name(gold) && *pred == Expr::E) || (is_e_name(pred) && *gold == Expr::E) {
        return true;
    }
    let concat = |x: &Expr| -> Option<String> {
        match x {
            Expr::Mul(v) => v
                .iter()
                .map(|a| match a {
                    Expr::Sym(n) => Some(n.clone()),
                    Expr::E => Some("e".to_owned()),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    };
    if let (Expr::Sym(g), Some(p)) = (gold, concat(pred)) {
        return g.to_lowercase() == p.to_lowercase();
    }
    if let (Some(g), Expr::Sym(p)) = (concat(gold), pred) {
        return p.to_lowercase() == g.to_lowercase();
    }
    if let (Expr::Sym(g), Expr::Sym(p)) = (gold, pred) {
        let fold = |n: &str| {
            if n.chars().count() > 1 {
                n.to_lowercase()
            } else {
                n.to_owned()
            }
        };
        return fold(g) == fold(p);
    }
    gold == pred
}

fn elements(x: &Expr) -> Option<&[Expr]> {
    match x {
        Expr::Set(v) | Expr::Tuple(v) => Some(v),
        _ => None,
    }
}

/// Sorted by numeric value where every element has one; `None` otherwise.
fn sorted(items: &[Expr]) -> Option<Vec<&Expr>> {
    let mut keyed: Vec<(f64, &Expr)> = Vec::with_capacity(items.len());
    for item in items {
        let item_value = match item {
            Expr::Rel(Rel::Eq, _, rhs) => rhs.eval(&|_| f64::NAN),
            other => other.eval(&|_| f64::NAN),
        };
        if item_value.is_nan() {
            return None;
        }
        keyed.push((item_value, item));
    }
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
    Some(keyed.into_iter().map(|(_, e)| e).collect())
}

/// Element by element, in order; or, for sets whose elements have no numeric order, by
/// matching each gold element with a distinct equal one (and, under exact semantics, where
/// numeric order ties or misleads, by matching too).
fn deep_eq(gold: &Expr, pred: &Expr, ctx: &mut Ctx<'_>) -> Result<bool, MathError> {
    let (Some(g), Some(p)) = (elements(gold), elements(pred)) else {
        return Ok(false);
    };
    if g.len() != p.len() {
        return Ok(false);
    }
    let gold_set = matches!(gold, Expr::Set(_));
    let pred_set = matches!(pred, Expr::Set(_));
    if gold_set || (pred_set && !matches!(gold, Expr::Tuple(_))) {
        let sorted_gold = if gold_set {
            sorted(g)
        } else {
            Some(g.iter().collect())
        };
        if let (Some(a), Some(b)) = (sorted_gold, sorted(p)) {
            if pairwise(&a, &b, ctx)? {
                return Ok(true);
            }
            if ctx.parity() || !gold_set {
                return Ok(false);
            }
        }
        // No numeric order (or one that ties): match elements.
        let mut used = vec![false; p.len()];
        for x in g {
            let mut found = None;
            for (i, y) in p.iter().enumerate() {
                if !used[i] && expr_eq(x, y, ctx)? {
                    found = Some(i);
                    break;
                }
            }
            match found {
                Some(i) => used[i] = true,
                None => return Ok(false),
            }
        }
        return Ok(true);
    }
    pairwise(
        &g.iter().collect::<Vec<_>>(),
        &p.iter().collect::<Vec<_>>(),
        ctx,
    )
}

fn pairwise(a: &[&Expr], b: &[&Expr], ctx: &mut Ctx<'_>) -> Result<bool, MathError> {
    for (x, y) in a.iter().zip(b) {
        if !expr_eq(x, y, ctx)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// math-verify's `sympy_compare_sets`.
fn sets_eq(gold: &Expr, pred: &Expr, ctx: &mut Ctx<'_>) -> Result<bool, MathError> {
    let wrap = |x: &Expr| {
        if x.is_set() {
            x.clone()
        } else {
            Expr::Set(vec![x.clone()])
        }
    };
    let (a, b) = (wrap(gold), wrap(pred));
    if let (Expr::Interval(s1, e1, l1, r1), Expr::Interval(s2, e2, l2, r2)) = (&a, &b) {
        return Ok(l1 == l2 && r1 == r2 && expr_eq(s1, s2, ctx)? && expr_eq(e1, e2, ctx)?);
    }
    if a == b {
        return Ok(true);
    }
    if let (Expr::Union(x), Expr::Union(y)) = (&a, &b) {
        if x.len() != y.len() {
            return Ok(false);
        }
        for (p, q) in x.iter().zip(y) {
            if !sets_eq(p, q, ctx)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    if elements(&a).is_some() && elements(&b).is_some() {
        return deep_eq(&a, &b, ctx);
    }
    let open_pair = |x: &Expr| match x {
        Expr::Interval(s, e, true, true) => Some(Expr::Tuple(vec![(**s).clone(), (**e).clone()])),
        _ => None,
    };
    if let (Some(pair), Some(items)) = (open_pair(&a), elements(&b)) {
        return Ok(items.len() == 2 && deep_eq(&pair, &b, ctx)?);
    }
    if let (Some(items), Some(pair)) = (elements(&a), open_pair(&b)) {
        return Ok(items.len() == 2 && deep_eq(&a, &pair, ctx)?);
    }
    Ok(false)
}
