//! Two different exact values are never equal, and every exact form of a value is equal to
//! it (SPEC D36); where math-verify's verdict is wrong ours is right, and `Semantics::Parity`
//! gives math-verify's own (SPEC D37); every answer gets a verdict or a typed failure in
//! bounded work (SPEC D35).

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use grader_core::math::{
    Budget, Limits, MathConfig, MathError, MathVerify, MathVerifyWith, Semantics, VerifyOptions,
    parse, parse_with, verify, verify_parsed_in, verify_parsed_with, verify_with,
};
use num_bigint::BigInt;
use proptest::prelude::*;

/// `verify` under exact semantics and under parity (its parses and its comparison).
fn both(gold: &str, answer: &str) -> (bool, bool) {
    let parity = MathConfig::math_verify().parity();
    (
        verify(gold, answer).expect("bounded"),
        verify_with(gold, answer, &parity).expect("bounded"),
    )
}

fn int(digits: &str) -> BigInt {
    digits.parse().expect("digits")
}

/// math-verify's wrong verdicts (Math-Verify#14 and those the issue lists), each with ours and
/// math-verify's: exact semantics gives the first, parity the second.
#[test]
fn math_verify_false_verdicts_are_right_and_parity_keeps_them() {
    let cases: &[(&str, &str, bool, bool)] = &[
        ("$\\frac{1}{2004!}$", "$\\frac{1}{2006!}$", false, true),
        ("$\\frac{1}{2^{99}}$", "$\\frac{1}{2^{98}}$", false, true),
        ("$2^{64}x$", "$(2^{64}-1)x$", false, true),
        (
            "$1 - \\frac{1}{\\mathrm{e}}$",
            "$1 + \\frac{1}{\\mathrm{e}}$",
            false,
            true,
        ),
        ("$\\pi+10^{-20}$", "$\\pi$", false, true),
        // math-verify is already right on these: both semantics agree with it.
        ("$1-\\frac{1}{e}$", "$1+\\frac{1}{e}$", false, false),
        ("$\\pm 2021$", "$2021$", false, false),
        ("$12:00$", "$1:00$", false, false),
        ("10000000001", "10000000000", false, false),
        ("$2^{64}$", "18446744073709551615", false, false),
        ("$15!$", "1307674368001", false, false),
        (
            "$\\frac{1}{3}$",
            "$\\frac{3333333333}{10000000000}$",
            false,
            false,
        ),
        ("$10^{-11}$", "$0$", false, false),
        ("$2^{-40}$", "$2^{-41}$", false, false),
        ("$x+10^{12}$", "$x+10^{12}+1$", false, false),
        ("$2^{51}x$", "$(2^{51}-1)x$", false, false),
    ];
    for &(gold, answer, exact, parity) in cases {
        assert_eq!(both(gold, answer), (exact, parity), "{gold} vs {answer}");
    }
}

/// latex2sympy's readings of the cases the issue lists, with math-verify's verdicts.
#[test]
fn latex2sympy_readings() {
    for (gold, answer) in [
        ("$1.7E5$", "170000"),
        ("$3E8$", "300000000"),
        ("$\\log 100$", "2"),
        ("$\\log_2 8$", "3"),
        ("$\\lfloor 3.7\\rfloor$", "3"),
        ("$\\lceil 3.2\\rceil$", "4"),
        ("$4\\frac{4}{7}$", "$\\frac{32}{7}$"),
        ("$\\sin 2x$", "$\\sin(2x)$"),
        ("$\\sin x \\cdot y$", "$\\sin(xy)$"),
        ("$1/2x$", "$\\frac{1}{2x}$"),
        ("$2^10$", "1024"),
    ] {
        assert_eq!(both(gold, answer), (true, true), "{gold} vs {answer}");
    }
    for (gold, answer) in [
        ("$1.7e5$", "170000"),
        ("$\\lfloor 3.7\\rfloor$", "3.7"),
        ("$4\\frac{4}{7}$", "$\\frac{16}{7}$"),
        ("$\\sin 2x$", "$\\sin(2)x$"),
        ("$\\log 100$", "$\\ln 100$"),
    ] {
        assert_eq!(both(gold, answer), (false, false), "{gold} vs {answer}");
    }
}

/// An exact value, another exact form of it, and a value near it.
#[derive(Debug, Clone)]
struct Case {
    value: String,
    same: String,
    near: String,
}

fn big_integer() -> impl Strategy<Value = Case> {
    ("[1-9][0-9]{10,60}", 1u32..1000).prop_map(|(digits, k)| {
        let n = int(&digits);
        Case {
            value: n.to_string(),
            same: format!("${} + {k}$", &n - k),
            near: (n + BigInt::from(1)).to_string(),
        }
    })
}

fn fraction() -> impl Strategy<Value = Case> {
    ("[1-9][0-9]{5,30}", "[1-9][0-9]{5,30}", 2u32..50).prop_map(|(p, q, k)| {
        let (p, q) = (int(&p), int(&q));
        Case {
            value: format!("$\\frac{{{p}}}{{{q}}}$"),
            same: format!("$\\frac{{{}}}{{{}}}$", &p * k, &q * k),
            near: format!("$\\frac{{{}}}{{{}}}$", &p * k + 1, &q * k),
        }
    })
}

fn power() -> impl Strategy<Value = Case> {
    (2u32..200, 20u32..300).prop_map(|(b, e)| {
        let n = num_traits::pow(BigInt::from(b), e as usize);
        Case {
            value: format!("${b}^{{{e}}}$"),
            same: n.to_string(),
            near: (n - BigInt::from(1)).to_string(),
        }
    })
}

fn factorial() -> impl Strategy<Value = Case> {
    (15u32..300).prop_map(|n| {
        let f: BigInt = (1..=n).map(BigInt::from).product();
        Case {
            value: format!("${n}!$"),
            same: f.to_string(),
            near: (f + BigInt::from(1)).to_string(),
        }
    })
}

fn tiny() -> impl Strategy<Value = Case> {
    (11u32..200, 1u32..9).prop_map(|(k, d)| Case {
        value: format!("${d}\\cdot 10^{{-{k}}}$"),
        same: format!("$\\frac{{{d}}}{{10^{{{k}}}}}$"),
        near: format!("${d}\\cdot 10^{{-{}}}$", k + 1),
    })
}

fn polynomial() -> impl Strategy<Value = Case> {
    (
        "[1-9][0-9]{12,40}",
        "[1-9][0-9]{0,40}",
        prop::sample::select(vec!["x", "y", "n"]),
    )
        .prop_map(|(c, d, v)| {
            let (c, d) = (int(&c), int(&d));
            Case {
                value: format!("${c}{v} + {d}$"),
                same: format!("${d} + {}{v} + {v}$", &c - 1),
                near: format!("${}{v} + {d}$", &c + 1),
            }
        })
}

fn root() -> impl Strategy<Value = Case> {
    (2u32..50, 2u32..30).prop_map(|(a, b)| Case {
        value: format!("${a}\\sqrt{{{}}}$", b),
        same: format!("$\\sqrt{{{}}}$", a * a * b),
        near: format!("$\\sqrt{{{}}}$", a * a * b + 1),
    })
}

fn any_case() -> impl Strategy<Value = Case> {
    prop_oneof![
        big_integer(),
        fraction(),
        power(),
        factorial(),
        tiny(),
        polynomial(),
        root()
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn exact_values_equal_their_forms_and_nothing_near(case in any_case()) {
        prop_assert!(verify(&case.value, &case.same).expect("bounded"), "{case:?}");
        prop_assert!(verify(&case.same, &case.value).expect("bounded"), "{case:?}");
        prop_assert!(!verify(&case.value, &case.near).expect("bounded"), "{case:?}");
        prop_assert!(!verify(&case.near, &case.value).expect("bounded"), "{case:?}");
    }
}

/// Runs `work` on a thread of its own and waits for it, up to a generous bound: a hang is a
/// failure, not a stalled test run. This bounds the test, it does not time the code.
fn within_guard<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(work());
    });
    rx.recv_timeout(Duration::from_secs(300))
        .expect("the comparison finished within the hang guard")
}

/// The red team's answers: products of big powers that grew cubically. Each gets a verdict
/// (products of powers compare by their exponents) or a typed failure naming the bound, and
/// the work counted stays within the budget.
#[test]
fn big_powers_get_a_verdict_or_a_typed_failure_in_bounded_work() {
    let limits = Limits {
        answer: 1 << 16,
        nodes: 1 << 14,
        ..Limits::default()
    };
    let product = |n: usize, base: &str| vec![format!("{base}^{{2340}}"); n].join("\\cdot ");
    let cases: Vec<(String, Option<bool>)> = vec![
        (format!("\\boxed{{{}}}", product(40, "99")), Some(false)),
        (format!("\\boxed{{{}}}", product(265, "99")), Some(false)),
        (format!("\\boxed{{{}}}", product(265, "98")), Some(false)),
        ("\\boxed{(99^{2340})^{265}}".to_owned(), Some(false)),
        ("\\boxed{99^{620100}}".to_owned(), Some(false)),
        ("\\boxed{2^{10^{100}}}".to_owned(), Some(false)),
        // Sums cannot be compared by exponents: past the budget, a typed failure.
        ("\\boxed{99^{620100}+1}".to_owned(), None),
        (
            format!("\\boxed{{{}}}", vec!["99^{2340}"; 265].join("+")),
            Some(false),
        ),
    ];
    for (answer, expected) in cases {
        let (verdict, used, limit) = within_guard(move || {
            let gold = parse("$\\frac{1}{2}$").expect("small");
            let answer = parse_with(&answer, &limits).expect("within the limits");
            let mut budget = Budget::new();
            let verdict = verify_parsed_in(&gold, &answer, &VerifyOptions::default(), &mut budget);
            (verdict, budget.used(), budget.limit())
        });
        assert!(used <= limit, "{used} > {limit}");
        match expected {
            Some(v) => assert_eq!(verdict, Ok(v)),
            None => assert!(
                matches!(verdict, Err(MathError::TooMuchWork { limit: l, .. }) if l == limit),
                "{verdict:?}"
            ),
        }
    }
    // The same answer against itself is equal, by its exponents.
    let same = within_guard(move || {
        let text = format!("\\boxed{{{}}}", product(265, "99"));
        let parsed = parse_with(&text, &limits).expect("within the limits");
        verify_parsed_with(&parsed, &parsed, &VerifyOptions::default())
    });
    assert_eq!(same, Ok(true));
}

#[test]
fn the_graders_record_the_semantics_and_score_unjudgeable_answers_zero() {
    let parity = MathConfig::math_verify().parity();
    let score = MathVerifyWith {
        answer: "$\\frac{1}{2^{98}}$",
        gold: "$\\frac{1}{2^{99}}$",
        config: &parity,
    }
    .grade(1.0)
    .now()
    .expect("scored");
    assert_eq!(score.value(), 1.0);
    assert_eq!(
        score.info().expect("info")["math_semantics"],
        Semantics::Parity.version()
    );
    let exact = MathVerify {
        answer: "$\\frac{1}{2^{98}}$",
        gold: "$\\frac{1}{2^{99}}$",
    }
    .grade(1.0)
    .now()
    .expect("scored");
    assert_eq!(exact.value(), 0.0);
    assert_eq!(exact.info().expect("info")["math_semantics"], 2);
    // An answer whose comparison is past the budget: 0, with the reason.
    let answer = "\\boxed{99^{620100}+1}";
    let past = MathVerify { answer, gold: "5" }
        .grade(1.0)
        .now()
        .expect("scored");
    assert_eq!(past.value(), 0.0);
    let reason = past.info().expect("info")["answer_error"]
        .as_str()
        .expect("a reason")
        .to_owned();
    assert!(reason.contains("units of work"), "{reason}");
}

/// A bare LaTeX gold is read whole (`(-\infty, 2]` is an interval, not 2), so the answer `2`
/// scores 0; math-verify's `verify` itself keeps its extraction.
#[test]
fn bare_golds_are_read_whole() {
    assert!(verify("(-\\infty, 2]", "2").expect("small"));
    for (gold, answer, expected) in [
        ("(-\\infty, 2]", "2", 0.0),
        ("(-\\infty, 2]", "$(-\\infty, 2]$", 1.0),
        ("2\\sqrt{3}", "\\boxed{2}", 0.0),
        ("2\\sqrt{3}", "\\boxed{\\sqrt{12}}", 1.0),
        ("9\\pi", "$9$", 0.0),
        ("(1, 2)", "so $(1,2)$", 1.0),
        ("3*x-1*y+13=0", "3x + 4y + 14=0", 0.0),
    ] {
        let score = MathVerify { answer, gold }
            .grade(1.0)
            .now()
            .expect("a gold read whole");
        assert_eq!(score.value(), expected, "{gold} vs {answer}");
    }
    // A gold read only in part is the grader's error: unscored, never a 0.
    for gold in [
        "$1, 2, \\ldots, n$",
        "the answer is 5 or 6",
        "#### 72 apples",
    ] {
        let error = MathVerify { answer: "5", gold }
            .grade(1.0)
            .now()
            .expect_err("a fragment");
        assert!(
            error.to_string().contains("read from the gold")
                || error.to_string().contains("was read"),
            "{error}"
        );
    }
    // The trainers' configurations read golds whole too.
    let trl = MathConfig::trl_accuracy_reward();
    // TRL's own function cuts the gold to `2`, and says the answer `2` is right ...
    assert!(verify_with("(-\\infty, 2]", "\\boxed{2}", &trl).expect("small"));
    // ... the grader under TRL's configuration reads it whole.
    let score = MathVerifyWith {
        answer: "\\boxed{2}",
        gold: "(-\\infty, 2]",
        config: &trl,
    }
    .grade(1.0)
    .now()
    .expect("read whole");
    assert_eq!(score.value(), 0.0);
}

/// A rounding or a precision of more digits than any number holds is counted against the
/// budget like the numbers it would make: a typed failure, not a process filling its memory.
#[test]
fn huge_roundings_and_precisions_fail_typed() {
    let mut rounding = MathConfig::math_verify();
    rounding.verify.float_rounding = u32::MAX;
    let verdict = within_guard(move || verify_with("$0.25$", "$\\frac{1}{3}$", &rounding));
    assert!(
        matches!(verdict, Err(MathError::TooMuchWork { .. })),
        "{verdict:?}"
    );
    let mut precision = MathConfig::math_verify().parity();
    precision.verify.numeric_precision = u32::MAX;
    let verdict = within_guard(move || verify_with("$2^{64}x$", "$(2^{64}-1)x$", &precision));
    assert!(
        matches!(verdict, Err(MathError::TooMuchWork { .. })),
        "{verdict:?}"
    );
    // Generous but sane settings still give verdicts.
    let mut fine = MathConfig::math_verify();
    fine.verify.float_rounding = 300;
    fine.verify.numeric_precision = 300;
    assert_eq!(verify_with("$0.5$", "$\\frac{1}{2}$", &fine), Ok(true));
    assert_eq!(verify_with("$0.3333$", "$\\frac{1}{3}$", &fine), Ok(false));
}
