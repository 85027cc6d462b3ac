//! Writing graders: sync and async `#[grader]` functions, `skip`, a name override, a
//! hand-written `Grader`, `any`/`all`, and a penalty.
//!
//! A support agent was asked "Where is order 1042?". Two answers are graded with the same
//! rubric: a good one, and one that gets the status wrong and leaks an internal note, which
//! costs a penalty. Penalties are not clamped: the second reward is below 0.
//!
//! Run it with `cargo run -p grader-examples --example custom_graders`.

use std::borrow::Cow;
use std::error::Error;
use std::time::Duration;

use grader_core::params::json_safe;
use grader_core::text::{contains, contains_any};
use grader_core::{
    EvaluationResult, Failure, Gather, Grader, Info, Score, SubScore, all, any, grader,
};

const GOOD: &str = "Order 1042 has shipped with UPS and arrives May 6: ups.com/track?n=1Z999";
const BAD: &str = "It is being prepared (internal: fraud check pending). UPS tracking: 1Z999";

/// Stands in for the shop's order service, which a grader asks for the truth.
struct Orders;

impl Orders {
    async fn status(&self, api_key: &str, order: u32) -> Result<&'static str, String> {
        tokio::time::sleep(Duration::from_millis(5)).await; // a network call
        match (api_key, order) {
            ("", _) => Err("the order service needs an API key".to_owned()),
            (_, 1042) => Ok("shipped"),
            _ => Err(format!("order {order} not found")),
        }
    }
}

/// A synchronous grader: passes when the answer names the order.
#[grader]
fn names_the_order(answer: &str, order: u32) -> bool {
    answer.contains(&order.to_string())
}

/// An async grader named `status`: asks the order service for the real status and passes when
/// the answer states it. `orders` has no JSON form, so `_parameters` shows a placeholder;
/// `api_key` is a secret, so it is not recorded at all. An `Err` fails the grade.
#[grader(name = "status", skip(api_key))]
async fn states_the_status(
    answer: &str,
    order: u32,
    orders: &Orders,
    api_key: &str,
) -> Result<(f64, Info), String> {
    let status = orders.status(api_key, order).await?;
    let mut info = Info::new();
    info.insert("actual".into(), status.into());
    Ok((contains(answer, status), info))
}

/// A penalty: 1.0 when the answer quotes an internal note.
#[grader]
fn leaks_internal_notes(answer: &str, notes: &[&str]) -> f64 {
    contains_any(answer, notes)
}

/// A hand-written grader: full marks up to `max_words`, then less, down to 0 at twice as many.
/// It chooses what to record: the budget, not the whole answer.
struct WordBudget<'a> {
    answer: &'a str,
    max_words: usize,
}

impl Grader for WordBudget<'_> {
    fn name(&self) -> Cow<'_, str> {
        "word_budget".into()
    }

    fn parameters(&self) -> Info {
        let mut params = Info::new();
        params.insert("max_words".into(), json_safe(&self.max_words, "usize"));
        params
    }

    async fn score(self) -> Result<Score, Failure> {
        let words = self.answer.split_whitespace().count();
        let over = words.saturating_sub(self.max_words) as f64 / self.max_words.max(1) as f64;
        let mut info = Info::new();
        info.insert("words".into(), words.into());
        Ok(Score::new((1.0 - over).max(0.0)).with_info(info))
    }
}

/// The rubric. Positive weights sum to 1; the penalty is subtracted on top. Every grader,
/// sync, async or hand-written, is graded the same way and gathered concurrently.
async fn grade(answer: &str, orders: &Orders) -> Result<EvaluationResult, Box<dyn Error>> {
    let order = 1042;
    let result = Gather::new()
        .add(NamesTheOrder { answer, order }.grade(0.1))
        .add(
            StatesTheStatus {
                answer,
                order,
                orders,
                api_key: "sk-example",
            }
            .grade(0.4),
        )
        .add(
            WordBudget {
                answer,
                max_words: 20,
            }
            .grade(0.1),
        )
        // `all` passes only if every check passes, `any` if one does; the checks are children,
        // and need no weights of their own.
        .add(
            all(
                "delivery",
                [
                    SubScore::new("carrier", contains(answer, "UPS"))?,
                    SubScore::new("date", contains(answer, "May 6"))?,
                ],
            )
            .grade(0.2),
        )
        .add(
            any(
                "tracking",
                [
                    SubScore::new("number", contains(answer, "1Z999"))?,
                    SubScore::new("link", contains(answer, "ups.com/track"))?,
                ],
            )
            .grade(0.2),
        )
        .add(
            LeaksInternalNotes {
                answer,
                notes: &["fraud check", "refund override"],
            }
            .grade(-0.5),
        )
        .await?;
    // A synchronous grader can also be graded on the spot, without a runtime.
    let named = NamesTheOrder { answer, order }.grade(1.0).now()?;
    assert_eq!(
        named.value(),
        result.subscores.as_deref().unwrap_or_default()[0].value()
    );
    Ok(result)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let good = grade(GOOD, &Orders).await?;
    println!("== a good answer (`{{:#}}` adds each grader's parameters):\n{good:#}");
    println!("== as JSON:\n{}\n", serde_json::to_string_pretty(&good)?);

    let bad = grade(BAD, &Orders).await?;
    println!("== a wrong answer that leaks a note:\n{bad}");

    if (good.reward() - 1.0).abs() > 1e-9 || (bad.reward() - -0.2).abs() > 1e-9 {
        let rewards = (good.reward(), bad.reward());
        return Err(format!("expected the rewards 1 and -0.2; got {rewards:?}").into());
    }
    Ok(())
}
