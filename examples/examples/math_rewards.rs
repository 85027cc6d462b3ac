//! Math rewards for a batch of completions, as a trainer computes them: TRL's `accuracy_reward`
//! configuration of math-verify, with exact verdicts, golds read whole, and what a training run
//! sees when a gold cannot be read or an answer is past a bound.
//!
//! Six completions answer three problems. The example scores each with `MathVerifyWith` under
//! TRL's configuration, prints the reward, what each side was read as and the semantics, then
//! shows the two places where exact semantics and math-verify's own (parity) part, and
//! Inspect's `math()` scorer on the same completions.
//!
//! Run it with `cargo run -p grader-examples --example math_rewards`.

use std::error::Error;

use grader_core::math::{MathConfig, MathVerifyWith, inspect_math};

const SAMPLES: &[(&str, &str)] = &[
    // (gold, completion)
    (
        "2\\sqrt{3}",
        "The side is $\\sqrt{12}$, so the answer is $\\boxed{2\\sqrt{3}}$.",
    ),
    ("2\\sqrt{3}", "So the answer is \\boxed{2}."),
    (
        "(-\\infty, 2]",
        "<think>x ≤ 2</think> The set is \\boxed{(-\\infty, 2]}",
    ),
    ("(-\\infty, 2]", "The answer is \\boxed{2}"),
    ("18446744073709551616", "It is $\\boxed{2^{64}}$."),
    ("18446744073709551616", "It is $\\boxed{2^{64}-1}$."),
];

fn main() -> Result<(), Box<dyn Error>> {
    let trl = MathConfig::trl_accuracy_reward();
    println!("== TRL's accuracy_reward configuration, exact verdicts");
    for (gold, completion) in SAMPLES {
        let score = MathVerifyWith {
            answer: completion,
            gold,
            config: &trl,
        }
        .grade(1.0)
        .now()?;
        let info = score.info().expect("the grader records what it read");
        println!(
            "reward {} | gold {} | answer {} | semantics {}",
            score.value(),
            info["gold_parsed"],
            info["answer_parsed"],
            info["math_semantics"]
        );
    }

    println!("== where exact semantics and math-verify's own part");
    let parity = trl.clone().parity();
    for (gold, completion) in [
        ("\\frac{1}{2^{99}}", "\\boxed{\\frac{1}{2^{98}}}"),
        ("2^{64}x", "\\boxed{(2^{64}-1)x}"),
    ] {
        let exact = MathVerifyWith {
            answer: completion,
            gold,
            config: &trl,
        }
        .grade(1.0)
        .now()?;
        let theirs = MathVerifyWith {
            answer: completion,
            gold,
            config: &parity,
        }
        .grade(1.0)
        .now()?;
        println!(
            "{gold} against {completion}: exact {}, math-verify {}",
            exact.value(),
            theirs.value()
        );
    }

    println!("== a gold read only in part is an error, not a reward");
    let error = MathVerifyWith {
        answer: "\\boxed{5}",
        gold: "the answer is 5 or 6",
        config: &trl,
    }
    .grade(1.0)
    .now()
    .expect_err("a fragment of the gold");
    println!("{error}");

    println!("== an answer past a bound scores 0, with the reason");
    let past = MathVerifyWith {
        answer: "\\boxed{99^{620100}+1}",
        gold: "5",
        config: &trl,
    }
    .grade(1.0)
    .now()?;
    println!(
        "reward {} | {}",
        past.value(),
        past.info().expect("info")["answer_error"]
    );

    println!("== Inspect's math() on the same completions");
    for (gold, completion) in SAMPLES {
        let score = inspect_math(completion, &[gold])?;
        println!(
            "{:?} | answer {:?}",
            score.status,
            score.answer.unwrap_or_default()
        );
    }
    Ok(())
}
