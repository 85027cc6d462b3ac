//! What a collapsed row of the results table says before a click: the subscores that failed
//! or fired, each with the first line of why (the reason the terminal gives: `exit code 1:
//! AssertionError …`, `timed out after 10s`, `penalty −0.5 fired`), or that all passed.

use grader_core::SubScore;
use grader_core::report::subscore_reason;

use super::data::{fired, sub_failed};

/// How many failed subscores a row names; the others are counted.
pub(super) const NAMED: usize = 3;

/// One subscore that went against the agent, as a row names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Wrong {
    /// The subscore's name (with the path to the child that failed when its own info says
    /// nothing: `checks › types`).
    pub(super) name: String,
    /// Why, in a line.
    pub(super) why: String,
}

/// The top-level subscores that failed or fired, in order, each with why.
pub(super) fn wrong(subscores: &[SubScore], threshold: f64) -> Vec<Wrong> {
    subscores
        .iter()
        .filter(|sub| sub_failed(sub, threshold))
        .map(|sub| describe(sub, threshold))
        .collect()
}

fn describe(sub: &SubScore, threshold: f64) -> Wrong {
    let mut name = sub.name().to_owned();
    let mut why = subscore_reason(sub);
    // A combination (`all`, `any`) says nothing itself: the first child that failed says why.
    let mut node = sub;
    while why.is_none() {
        let Some(child) = node
            .children()
            .and_then(|children| children.iter().find(|child| sub_failed(child, threshold)))
        else {
            break;
        };
        name.push_str(" › ");
        name.push_str(child.name());
        why = subscore_reason(child);
        node = child;
    }
    let value = if fired(sub) {
        format!("penalty {} fired", weight_text(sub.weight() * sub.value()))
    } else {
        format!("value {:.4}", sub.value())
    };
    Wrong {
        name,
        why: match why {
            Some(why) if fired(sub) => format!("{value}: {why}"),
            Some(why) => why,
            None => value,
        },
    }
}

/// A weight or a penalty as the page shows it: `0.7`, `−0.5` (a true minus sign).
pub(super) fn weight_text(weight: f64) -> String {
    crate::text::signed(weight)
}

#[cfg(test)]
mod tests {
    use super::*;
    use grader_core::info_from_value;
    use serde_json::json;

    fn sub(name: &str, value: f64, weight: f64, info: serde_json::Value) -> SubScore {
        let sub = SubScore::new(name, value)
            .and_then(|sub| sub.with_weight(weight))
            .expect("a valid subscore");
        match info {
            serde_json::Value::Null => sub,
            info => sub.with_info(info_from_value(info).expect("an object")),
        }
    }

    #[test]
    fn failed_and_fired_subscores_say_why_in_a_line() {
        let subscores = [
            sub(
                "tests",
                0.0,
                0.5,
                json!({"exit_code": 1, "stdout": "..F\nAssertionError: 2 != 3\n", "stderr": ""}),
            ),
            sub(
                "slow",
                0.0,
                0.3,
                json!({"exit_code": null, "timed_out": true, "timeout": 10}),
            ),
            sub("lint", 1.0, 0.2, json!({"exit_code": 0})),
            sub("deleted tests", 1.0, -0.5, serde_json::Value::Null),
            sub("checks", 0.0, 0.1, serde_json::Value::Null).with_children(vec![sub(
                "types",
                0.0,
                1.0,
                json!({"error": "mypy crashed"}),
            )]),
        ];
        let said: Vec<(String, String)> = wrong(&subscores, 1.0)
            .into_iter()
            .map(|wrong| (wrong.name, wrong.why))
            .collect();
        let expected = [
            ("tests", "exit code 1: AssertionError: 2 != 3"),
            ("slow", "timed out after 10s"),
            ("deleted tests", "penalty −0.5 fired"),
            ("checks › types", "error: mypy crashed"),
        ];
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(name, why)| ((*name).to_owned(), (*why).to_owned()))
            .collect();
        assert_eq!(said, expected);
    }
}
