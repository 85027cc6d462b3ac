//! math-verify's `verify`: whether two parsed answers are the same, by its rules (assignments
//! read as their value, relations compared through their difference, sets and tuples element
//! by element, symbols by name, numbers exactly or rounded to 6 decimals when one is a
//! decimal), with sympy's `simplify` replaced by evaluation at several points.

use num_traits::{Signed, Zero};

use super::expr::{Expr, Rel};

/// The values variables take in the comparisons of expressions, one set per trial.
const TRIALS: [f64; 3] = [0.737_309_4, 1.311_867_5, 2.094_395_1];

/// A variable's value in a trial: different for each name and trial.
fn value_of(name: &str, trial: usize) -> f64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    #[allow(clippy::cast_precision_loss)] // a fraction of the hash
    let fraction = (h >> 11) as f64 / (1u64 << 53) as f64;
    TRIALS[trial % TRIALS.len()] + fraction
}

/// Whether `x` divides by zero somewhere (sympy's `zoo`): math-verify never matches it.
fn has_zoo(x: &Expr) -> bool {
    let mut found = false;
    x.visit(&mut |e| {
        if let Expr::Pow(base, exponent) = e
            && base.exact().is_some_and(|b| b.is_zero())
            && exponent.exact().is_some_and(|p| p.is_negative())
        {
            found = true;
        }
    });
    found
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

/// math-verify's `sympy_expr_eq`.
pub(crate) fn expr_eq(gold: &Expr, pred: &Expr) -> bool {
    let mut gold = gold.clone();
    let mut pred = pred.clone();
    let (gold_assign, pred_assign) = (is_assignment(&gold), is_assignment(&pred));
    let (gold_eq, pred_eq) = (is_equation(&gold), is_equation(&pred));
    if gold_assign
        && let (Some((lhs, _)), Some((_, rhs))) =
            (sides(first_relation(&gold)), sides(last_relation(&gold)))
    {
        gold = Expr::Rel(Rel::Eq, Box::new(lhs.clone()), Box::new(rhs.clone()));
    }
    if pred_assign
        && let (Some((lhs, _)), Some((_, rhs))) =
            (sides(first_relation(&pred)), sides(last_relation(&pred)))
    {
        pred = Expr::Rel(Rel::Eq, Box::new(lhs.clone()), Box::new(rhs.clone()));
    }
    if pred_eq && !gold_eq {
        if let Some((_, rhs)) = sides(last_relation(&pred)) {
            pred = rhs.clone();
        }
    } else if gold_assign
        && !pred_eq
        && let Some((_, rhs)) = sides(last_relation(&gold))
    {
        gold = rhs.clone();
    }
    if gold.is_relation()
        && pred.is_set()
        && let Some(set) = relation_as_set(&gold)
    {
        gold = set;
    }
    if has_zoo(&gold) {
        return false;
    }
    if gold == pred {
        return true;
    }
    if gold.is_relation() && pred.is_relation() {
        return relations_eq(&gold, &pred);
    }
    if gold.is_set() || pred.is_set() {
        return sets_eq(&gold, &pred);
    }
    if matches!(gold, Expr::Sym(_)) || matches!(pred, Expr::Sym(_)) {
        return symbols_eq(&gold, &pred);
    }
    if gold.is_relation() || pred.is_relation() {
        return false;
    }
    numeric_eq(&gold, &pred) || symbolic_eq(&gold, &pred)
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

/// A matrix expression's value: sums and products of matrices worked out cell by cell.
fn matrix_value(x: &Expr) -> Option<(usize, usize, Vec<Expr>)> {
    match x {
        Expr::Matrix(rows, cells) if *rows > 0 => Some((*rows, cells.len() / rows, cells.clone())),
        Expr::Add(items) => {
            let mut parts = items.iter().map(matrix_value);
            let (r, c, mut cells) = parts.next()??;
            for part in parts {
                let (r2, c2, other) = part?;
                if (r2, c2) != (r, c) {
                    return None;
                }
                cells = cells
                    .into_iter()
                    .zip(other)
                    .map(|(a, b)| Expr::Add(vec![a, b]))
                    .collect();
            }
            Some((r, c, cells))
        }
        Expr::Mul(items) if items.len() == 2 => {
            let (r1, c1, a) = matrix_value(&items[0])?;
            let (r2, c2, b) = matrix_value(&items[1])?;
            if c1 != r2 || r1 * c2 > 1024 {
                return None;
            }
            let mut cells = Vec::with_capacity(r1 * c2);
            for i in 0..r1 {
                for j in 0..c2 {
                    let terms = (0..c1)
                        .map(|k| Expr::Mul(vec![a[i * c1 + k].clone(), b[k * c2 + j].clone()]))
                        .collect();
                    cells.push(Expr::Add(terms));
                }
            }
            Some((r1, c2, cells))
        }
        _ => None,
    }
}

/// Whether `x` is a number or the percentage of one; `Some(true)` for a decimal.
fn atomic_number(x: &Expr) -> Option<bool> {
    match x {
        Expr::Num(_) => Some(false),
        Expr::Float(_) => Some(true),
        Expr::Percent(inner) => match **inner {
            Expr::Num(_) => Some(false),
            Expr::Float(_) => Some(true),
            _ => None,
        },
        _ => None,
    }
}

fn integer_value(x: &Expr) -> Option<&num_rational::BigRational> {
    match x {
        Expr::Num(n) if n.is_integer() => Some(n),
        Expr::Percent(inner) => match &**inner {
            Expr::Num(n) if n.is_integer() => Some(n),
            _ => None,
        },
        _ => None,
    }
}

/// Rounds to 6 decimals as sympy's `Float.round(6)` compares.
fn round6(x: f64) -> f64 {
    (x * 1e6).round()
}

fn close(a: f64, b: f64) -> bool {
    if a == b {
        return true;
    }
    (a - b).abs() <= 1e-10 * a.abs().max(b.abs()).max(1.0)
}

/// math-verify's `sympy_numeric_eq`.
fn numeric_eq(a: &Expr, b: &Expr) -> bool {
    if let (Some((ra, wa, ca)), Some((rb, wb, cb))) = (matrix_value(a), matrix_value(b)) {
        return (ra, wa) == (rb, wb)
            && ca
                .iter()
                .zip(&cb)
                .all(|(x, y)| numeric_eq(x, y) || symbolic_eq(x, y));
    }
    let (ka, kb) = (atomic_number(a), atomic_number(b));
    if ka.is_some() || kb.is_some() {
        if ka == Some(true) || kb == Some(true) {
            if a.has_symbols() || b.has_symbols() {
                return false;
            }
            let (x, y) = (a.eval(&|_| f64::NAN), b.eval(&|_| f64::NAN));
            return x.is_finite() && y.is_finite() && round6(x) == round6(y);
        }
        if let (Some(x), Some(y)) = (integer_value(a), integer_value(b)) {
            return x == y;
        }
        return match (a.exact(), b.exact()) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        };
    }
    if a.has_symbols() || b.has_symbols() {
        return false;
    }
    if let (Some(x), Some(y)) = (a.exact(), b.exact()) {
        return x == y;
    }
    let (x, y) = (a.eval(&|_| f64::NAN), b.eval(&|_| f64::NAN));
    x.is_finite() && y.is_finite() && close(x, y)
}

/// sympy's `simplify(a - b).is_zero`, by evaluation at several points.
fn symbolic_eq(a: &Expr, b: &Expr) -> bool {
    if a.is_set() || b.is_set() || matches!(a, Expr::Matrix(..)) || matches!(b, Expr::Matrix(..)) {
        return false;
    }
    let mut agreed = 0;
    for trial in 0..TRIALS.len() {
        let var = |name: &str| value_of(name, trial);
        let (x, y) = (a.eval(&var), b.eval(&var));
        if !(x.is_finite() && y.is_finite()) {
            continue;
        }
        if !close(x, y) {
            return false;
        }
        agreed += 1;
    }
    agreed > 0
}

/// Whether `a = k·b` for one constant `k` (positive where `sign` is 1, negative for -1, any
/// nonzero for 0), at every trial point.
fn proportional(a: &Expr, b: &Expr, sign: i32) -> bool {
    let mut ratio: Option<f64> = None;
    for trial in 0..TRIALS.len() {
        let var = |name: &str| value_of(name, trial);
        let (x, y) = (a.eval(&var), b.eval(&var));
        if !(x.is_finite() && y.is_finite()) || y == 0.0 {
            return false;
        }
        let r = x / y;
        if r == 0.0 || (sign > 0 && r < 0.0) || (sign < 0 && r > 0.0) {
            return false;
        }
        match ratio {
            None => ratio = Some(r),
            Some(k) if close(k, r) => {}
            Some(_) => return false,
        }
    }
    a.symbols() == b.symbols() && ratio.is_some()
}

/// math-verify's `sympy_compare_relational`.
fn relations_eq(gold: &Expr, pred: &Expr) -> bool {
    if let (Expr::And(g), Expr::And(p)) = (gold, pred) {
        return g.len() == p.len() && g.iter().zip(p).all(|(x, y)| relations_eq(x, y));
    }
    let (Expr::Rel(rg, gl, gr), Expr::Rel(rp, pl, pr)) = (gold, pred) else {
        return false;
    };
    let (dg, dp) = (minus(gl, gr), minus(pl, pr));
    if rg == rp && expr_eq(&dg, &dp) {
        return true;
    }
    if rg.flipped() == *rp && *rg != Rel::Eq && *rg != Rel::Ne && expr_eq(&dg, &minus(pr, pl)) {
        return true;
    }
    // sympy's `solve`: the same solutions where one difference is a multiple of the other.
    match (rg, rp) {
        (Rel::Eq, Rel::Eq) => proportional(&dg, &dp, 0),
        _ if rg == rp => proportional(&dg, &dp, 1),
        _ if rg.flipped() == *rp => proportional(&dg, &dp, -1),
        _ => false,
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
/// matching each gold element with a distinct equal one.
fn deep_eq(gold: &Expr, pred: &Expr) -> bool {
    let (Some(g), Some(p)) = (elements(gold), elements(pred)) else {
        return false;
    };
    if g.len() != p.len() {
        return false;
    }
    let pairwise = |a: Vec<&Expr>, b: Vec<&Expr>| a.iter().zip(&b).all(|(x, y)| expr_eq(x, y));
    let gold_set = matches!(gold, Expr::Set(_));
    let pred_set = matches!(pred, Expr::Set(_));
    if gold_set || (pred_set && !matches!(gold, Expr::Tuple(_))) {
        let sorted_gold = if gold_set {
            sorted(g)
        } else {
            Some(g.iter().collect())
        };
        if let (Some(a), Some(b)) = (sorted_gold, sorted(p)) {
            return pairwise(a, b);
        }
        // No numeric order: match elements.
        let mut used = vec![false; p.len()];
        return g.iter().all(|x| {
            let found = p
                .iter()
                .enumerate()
                .find(|(i, y)| !used[*i] && expr_eq(x, y))
                .map(|(i, _)| i);
            found.is_some_and(|i| {
                used[i] = true;
                true
            })
        });
    }
    pairwise(g.iter().collect(), p.iter().collect())
}

/// math-verify's `sympy_compare_sets`.
fn sets_eq(gold: &Expr, pred: &Expr) -> bool {
    let wrap = |x: &Expr| {
        if x.is_set() {
            x.clone()
        } else {
            Expr::Set(vec![x.clone()])
        }
    };
    let (a, b) = (wrap(gold), wrap(pred));
    if let (Expr::Interval(s1, e1, l1, r1), Expr::Interval(s2, e2, l2, r2)) = (&a, &b) {
        return l1 == l2 && r1 == r2 && expr_eq(s1, s2) && expr_eq(e1, e2);
    }
    if a == b {
        return true;
    }
    if let (Expr::Union(x), Expr::Union(y)) = (&a, &b) {
        return x.len() == y.len() && x.iter().zip(y).all(|(p, q)| sets_eq(p, q));
    }
    if elements(&a).is_some() && elements(&b).is_some() {
        return deep_eq(&a, &b);
    }
    let open_pair = |x: &Expr| match x {
        Expr::Interval(s, e, true, true) => Some(Expr::Tuple(vec![(**s).clone(), (**e).clone()])),
        _ => None,
    };
    if let (Some(pair), Some(items)) = (open_pair(&a), elements(&b)) {
        return items.len() == 2 && deep_eq(&pair, &b);
    }
    if let (Some(items), Some(pair)) = (elements(&a), open_pair(&b)) {
        return items.len() == 2 && deep_eq(&a, &pair);
    }
    false
}
