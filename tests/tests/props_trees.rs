//! Random grading trees of sync, async, failing, panicking and skipped graders give the reward
//! the same tree gives when combined by hand from its leaves; every failed or skipped node is
//! visible; no panic escapes.
#![allow(clippy::unwrap_used)]

use std::borrow::Cow;

use grader_core::{Failure, Gather, Grader, Node, OnError, Score, SubScore, all, any};
use proptest::prelude::*;

/// What a leaf does.
#[derive(Debug, Clone, Copy)]
enum Leaf {
    Sync(f64),
    Async(f64),
    Fails,
    Panics,
    Skipped,
}

/// A tree to build twice: as graders, and by hand.
#[derive(Debug, Clone)]
enum Tree {
    Leaf(Leaf),
    Any(Vec<Tree>),
    All(Vec<Tree>),
}

struct Check(Leaf);

impl Grader for Check {
    fn name(&self) -> Cow<'_, str> {
        match self.0 {
            Leaf::Sync(_) => "sync".into(),
            Leaf::Async(_) => "async".into(),
            Leaf::Fails => "fails".into(),
            Leaf::Panics => "panics".into(),
            Leaf::Skipped => "skipped".into(),
        }
    }

    async fn score(self) -> Result<Score, Failure> {
        match self.0 {
            Leaf::Sync(value) => Ok(Score::new(value)),
            // Never runs: its condition does not hold. Were it run, it would help the agent.
            Leaf::Skipped => Ok(Score::new(1.0)),
            Leaf::Async(value) => {
                tokio::task::yield_now().await;
                Ok(Score::new(value))
            }
            Leaf::Fails => Err(Failure::message("the check could not run")),
            Leaf::Panics => panic!("a bug in the check"),
        }
    }
}

fn node(tree: &Tree, weight: f64) -> Node<'static> {
    use grader_core::IntoNode as _;
    match tree {
        Tree::Leaf(Leaf::Skipped) => Check(Leaf::Skipped)
            .grade(weight)
            .when(|_| false)
            .into_node(),
        Tree::Leaf(leaf) => Check(*leaf).grade(weight).into_node(),
        Tree::Any(children) => any(
            "any",
            children.iter().map(|c| node(c, 1.0)).collect::<Vec<_>>(),
        )
        .grade(weight)
        .into_node(),
        Tree::All(children) => all(
            "all",
            children.iter().map(|c| node(c, 1.0)).collect::<Vec<_>>(),
        )
        .grade(weight)
        .into_node(),
    }
}

/// The value a node must have under a lenient policy, by hand: failed or skipped leaves are the
/// worst for the agent, 0 when the item counts for it and fired (1) when it counts against it
/// (a penalty, and every leaf of a tree graded as a penalty, whatever its own weight); trees
/// are the max or min of their children.
fn expected_value(tree: &Tree, against: bool) -> f64 {
    match tree {
        Tree::Leaf(Leaf::Sync(value) | Leaf::Async(value)) => *value,
        Tree::Leaf(Leaf::Fails | Leaf::Panics | Leaf::Skipped) => {
            if against {
                1.0
            } else {
                0.0
            }
        }
        Tree::Any(children) => children
            .iter()
            .map(|c| expected_value(c, against))
            .fold(0.0, f64::max),
        Tree::All(children) => children
            .iter()
            .map(|c| expected_value(c, against))
            .fold(1.0, f64::min),
    }
}

/// Whether any leaf fails or panics.
fn fails(tree: &Tree) -> bool {
    match tree {
        Tree::Leaf(leaf) => matches!(leaf, Leaf::Fails | Leaf::Panics),
        Tree::Any(children) | Tree::All(children) => children.iter().any(fails),
    }
}

/// How many leaves fail (or panic) and how many are skipped.
fn count(tree: &Tree) -> (usize, usize) {
    match tree {
        Tree::Leaf(Leaf::Fails | Leaf::Panics) => (1, 0),
        Tree::Leaf(Leaf::Skipped) => (0, 1),
        Tree::Leaf(_) => (0, 0),
        Tree::Any(children) | Tree::All(children) => children
            .iter()
            .map(count)
            .fold((0, 0), |(a, b), (c, d)| (a + c, b + d)),
    }
}

/// How many nodes of a subscore tree carry `info.error` and `info.skipped`.
fn visible(sub: &SubScore) -> (usize, usize) {
    let info = sub.info();
    let own = (
        usize::from(info.is_some_and(|i| i.contains_key("error"))),
        usize::from(info.is_some_and(|i| i.contains_key("skipped"))),
    );
    sub.children()
        .unwrap_or_default()
        .iter()
        .map(visible)
        .fold(own, |(a, b), (c, d)| (a + c, b + d))
}

fn leaf() -> impl Strategy<Value = Leaf> {
    let value = prop_oneof![Just(0.0), Just(1.0), 0.0..=1.0];
    prop_oneof![
        3 => value.clone().prop_map(Leaf::Sync),
        3 => value.prop_map(Leaf::Async),
        1 => Just(Leaf::Fails),
        1 => Just(Leaf::Panics),
        1 => Just(Leaf::Skipped),
    ]
}

fn tree() -> impl Strategy<Value = Tree> {
    leaf()
        .prop_map(Tree::Leaf)
        .prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 1..4).prop_map(Tree::Any),
                prop::collection::vec(inner, 1..4).prop_map(Tree::All),
            ]
        })
}

fn weight() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.5), Just(1.0), Just(2.0), Just(-0.5), 0.1..3.0]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn trees_combine_like_their_leaves_by_hand(
        first in (0.0..=1.0_f64, 0.1..2.0_f64),
        items in prop::collection::vec((tree(), weight()), 0..6),
        policy in prop_oneof![Just(OnError::Fail), Just(OnError::Zero), Just(OnError::Exclude)],
    ) {
        grader_tests::quiet_expected_panics(&["a bug in the check"]);
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        // A passing leaf first, so that a positive weight always remains.
        let mut all_items = vec![(Tree::Leaf(Leaf::Sync(first.0)), first.1)];
        all_items.extend(items);
        let gather = all_items
            .iter()
            .fold(Gather::new().on_error(policy), |gather, (tree, weight)| {
                gather.add(node(tree, *weight))
            });
        let outcome = runtime.block_on(gather);
        let any_fails = all_items.iter().any(|(tree, _)| fails(tree));

        if policy == OnError::Fail && any_fails {
            let error = outcome.expect_err("a failure under Fail fails the gather");
            prop_assert!(error.failures().count() >= 1);
            return Ok(());
        }
        let result = outcome.unwrap();
        prop_assert_eq!(result.is_error, any_fails);

        // By hand: each top item's value, its weight under the policy, then R6-R7.
        let mut positive = 0.0;
        let mut terms = Vec::new();
        for (tree, weight) in &all_items {
            let value = expected_value(tree, *weight < 0.0);
            let failed_leaf = matches!(tree, Tree::Leaf(Leaf::Fails | Leaf::Panics));
            let weight = if failed_leaf && policy == OnError::Exclude && *weight > 0.0 {
                0.0
            } else {
                *weight
            };
            if weight > 0.0 {
                positive += weight;
            }
            terms.push((value, weight));
        }
        let expected: f64 = terms
            .iter()
            .map(|(value, weight)| if *weight > 0.0 { value * weight / positive } else { value * weight })
            .sum();
        prop_assert!((result.reward() - expected).abs() < 1e-9, "{} vs {}", result.reward(), expected);

        // Every failed and skipped leaf is visible in the breakdown.
        let shown = result
            .subscores
            .as_deref()
            .unwrap()
            .iter()
            .map(visible)
            .fold((0, 0), |(a, b), (c, d)| (a + c, b + d));
        let wanted = all_items
            .iter()
            .map(|(tree, _)| count(tree))
            .fold((0, 0), |(a, b), (c, d)| (a + c, b + d));
        prop_assert_eq!(shown, wanted);
    }
}
