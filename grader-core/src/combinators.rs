//! Grading trees: [`any`], [`all`] and [`cascade`] make one subscore out of several children,
//! keeping them as its `children`. Each is a [`Tree`], which is itself a [`Grader`], so trees
//! nest and are graded like every other grader.
//!
//! Children are anything that [`IntoNode`]: graders still to run (bare, since a child's weight
//! has no effect on an `any` or an `all`), their gradings, finished [`SubScore`]s, or the
//! `Result`s of awaited gradings. A tree runs its children concurrently ([`cascade`]: one stage
//! after another), under the failure policy of the gather it is in unless given its own.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use grader_core::{Gather, Grader, SubScore, all, any, grader};
//!
//! #[grader]
//! fn lint_clean(warnings: u32) -> bool {
//!     warnings == 0
//! }
//!
//! #[grader]
//! async fn formatted(diff_lines: u32) -> bool {
//!     diff_lines == 0
//! }
//!
//! let result = Gather::new()
//!     .add(SubScore::new("tests", 1.0)?.with_weight(0.6)?)
//!     .add(all("quality", (LintClean { warnings: 0 }, Formatted { diff_lines: 3 })).grade(0.4))
//!     .await?;
//! let quality = result.subscore("quality").unwrap();
//! assert_eq!(quality.value(), 0.0);
//! assert_eq!(quality.children().unwrap()[0].name(), "lint_clean");
//! assert!((result.reward() - 0.6).abs() < 1e-12);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use std::borrow::Cow;
use std::fmt;
use std::future::Future;

use futures_util::FutureExt as _;
use serde_json::{Value, json};

use crate::error::{CombineError, Failure};
use crate::gather::OnError;
use crate::grade::dedupe_names;
use crate::grader::{AtOnce, Grader, SyncGrader};
use crate::grading::Grading;
use crate::limit::{Scope, Scoped};
use crate::node::{Finished, IntoNode, Node, Settled, run_all, settle, worst};
use crate::score::{Info, Score, SubScore};

/// How a [`Tree`] combines its children.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Any,
    All,
    Cascade { threshold: f64 },
}

/// A node that combines its children: made by [`any`], [`all`] or [`cascade`]. It is a
/// [`Grader`] named as given, with no parameters of its own; grade it with
/// [`grade`](Grader::grade) like any other.
#[must_use = "a tree does nothing until it is graded"]
pub struct Tree<'a> {
    kind: Kind,
    name: String,
    children: Vec<Node<'a>>,
    on_error: Option<OnError>,
    limit: Option<usize>,
}

impl fmt::Debug for Tree<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tree")
            .field("kind", &self.kind)
            .field("name", &self.name)
            .field("children", &self.children)
            .field("on_error", &self.on_error)
            .field("limit", &self.limit)
            .finish()
    }
}

/// Several children to put in a tree at once: an array or a `Vec` of one item type, or a tuple
/// of up to twelve items of different types. (An iterator: `.collect::<Vec<_>>()` it.)
pub trait Children<'a> {
    /// The children, in order.
    fn into_nodes(self) -> Vec<Node<'a>>;
}

impl<'a, T: IntoNode<'a>> Children<'a> for Vec<T> {
    fn into_nodes(self) -> Vec<Node<'a>> {
        self.into_iter().map(IntoNode::into_node).collect()
    }
}

impl<'a, T: IntoNode<'a>, const N: usize> Children<'a> for [T; N] {
    fn into_nodes(self) -> Vec<Node<'a>> {
        self.into_iter().map(IntoNode::into_node).collect()
    }
}

macro_rules! children_tuple {
    ($($name:ident),+) => {
        impl<'a, $($name: IntoNode<'a>),+> Children<'a> for ($($name,)+) {
            #[allow(non_snake_case)]
            fn into_nodes(self) -> Vec<Node<'a>> {
                let ($($name,)+) = self;
                vec![$($name.into_node()),+]
            }
        }
    };
}

children_tuple!(A);
children_tuple!(A, B);
children_tuple!(A, B, C);
children_tuple!(A, B, C, D);
children_tuple!(A, B, C, D, E);
children_tuple!(A, B, C, D, E, F);
children_tuple!(A, B, C, D, E, F, G);
children_tuple!(A, B, C, D, E, F, G, H);
children_tuple!(A, B, C, D, E, F, G, H, I);
children_tuple!(A, B, C, D, E, F, G, H, I, J);
children_tuple!(A, B, C, D, E, F, G, H, I, J, K);
children_tuple!(A, B, C, D, E, F, G, H, I, J, K, L);

/// A node named `name` that passes if any child passes: its value is the maximum of the
/// children's values. The children are kept, in order, as its `children`, with names made
/// unique as [`Grade::from_subscores`](crate::Grade::from_subscores) does. The reference's
/// default name is `"any"`; its `combine_any(weight, subscores)` is
/// `any("any", subscores).grade(weight).now()`.
///
/// ```
/// use grader_core::{Grader, SubScore, any};
///
/// let node = any("tests-or-lint", [SubScore::new("check", 0.0)?, SubScore::new("check", 1.0)?])
///     .grade(0.5)
///     .now()?;
/// assert_eq!(node.value(), 1.0);
/// let names: Vec<&str> = node.children().unwrap().iter().map(|c| c.name()).collect();
/// assert_eq!(names, ["check-1", "check-2"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Grading it fails with [`Failure::Combine`] when it has no children.
pub fn any<'a>(name: impl Into<String>, children: impl Children<'a>) -> Tree<'a> {
    Tree::new(Kind::Any, name.into(), children.into_nodes())
}

/// A node named `name` that passes only if all children pass: its value is the minimum of the
/// children's values. Otherwise as [`any`]; the reference's default name is `"all"`.
///
/// ```
/// use grader_core::{Grader, SubScore, all};
///
/// let node = all("all", [SubScore::new("a", 0.2)?, SubScore::new("b", 1.0)?]).grade(1.0).now()?;
/// assert_eq!(node.value(), 0.2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn all<'a>(name: impl Into<String>, children: impl Children<'a>) -> Tree<'a> {
    Tree::new(Kind::All, name.into(), children.into_nodes())
}

/// A node that runs its stages one after another and stops at the first whose value reaches
/// `threshold`: cheap checks first, the expensive one only when they cannot decide. Its value
/// is the deciding stage's, or the last stage's when none reaches the threshold. Stages after
/// the deciding one are kept as children marked `skipped`. Its info says which stage decided
/// (`decided_by`, `null` when none did) and every stage's value (`stages`, `null` for one that
/// did not run or failed).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use grader_core::text::{ExactMatch, F1Score};
/// use grader_core::{Grader, cascade};
///
/// let answer = "Paris";
/// let node = cascade(
///     "answer",
///     1.0,
///     (
///         ExactMatch { answer, expected: "paris", normalize_text: true },
///         F1Score { answer, reference: "Paris, France" }, // not run: the exact match decided
///     ),
/// )
/// .grade(1.0)
/// .await?;
/// assert_eq!(node.value(), 1.0);
/// assert_eq!(node.info().unwrap()["decided_by"], "exact_match");
/// assert_eq!(node.children().unwrap()[1].info().unwrap()["skipped"], "an earlier stage decided");
/// # Ok::<(), grader_core::GraderError>(())
/// # }).unwrap();
/// ```
///
/// A failing stage fails the cascade under [`OnError::Fail`]; under the lenient policies it
/// counts as not reaching the threshold and the next stage runs (in a cascade graded as a
/// penalty, it counts as fired, 1.0, and decides). Conditions set with
/// [`Grading::when`](crate::Grading::when) on stages are not used: the cascade decides what runs.
pub fn cascade<'a>(name: impl Into<String>, threshold: f64, stages: impl Children<'a>) -> Tree<'a> {
    Tree::new(
        Kind::Cascade { threshold },
        name.into(),
        stages.into_nodes(),
    )
}

impl<'a> Tree<'a> {
    fn new(kind: Kind, name: String, children: Vec<Node<'a>>) -> Self {
        Tree {
            kind,
            name,
            children,
            on_error: None,
            limit: None,
        }
    }

    /// The grading of this node at `weight`: [`Grader::grade`], callable without importing the
    /// trait.
    pub fn grade(self, weight: f64) -> Grading<'a, Self> {
        Grading::new(self, weight)
    }

    /// Adds a child.
    #[allow(clippy::should_implement_trait)] // a builder step, not `+`
    pub fn add(mut self, child: impl IntoNode<'a>) -> Self {
        self.children.push(child.into_node());
        self
    }

    /// What to do when a child fails, instead of the enclosing gather's policy (or
    /// [`OnError::Fail`] when there is none).
    pub fn on_error(mut self, policy: OnError) -> Self {
        self.on_error = Some(policy);
        self
    }

    /// Runs at most `limit` children at once (0 is taken as 1).
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit.max(1));
        self
    }

    async fn combine(self) -> Result<Score, Failure> {
        let Tree {
            kind,
            name,
            children,
            on_error,
            limit,
        } = self;
        if children.is_empty() {
            return Err(CombineError::Empty { what: name }.into());
        }
        let mut scope = Scope::current();
        let policy = on_error.or(scope.on_error).unwrap_or_default();
        scope.on_error = Some(policy);
        // Whether this node's value counts against the agent (it is graded as a penalty, or
        // is inside a tree that is): its children's failures and skips score the worst for
        // the agent in that direction, whatever their own weights.
        let against = scope.against.unwrap_or(false);
        scope.against = Some(against);
        let finished = match kind {
            Kind::Cascade { threshold } => {
                let stages = run_stages(children, threshold, policy, against);
                Scoped::new(scope.clone(), stages).await
            }
            Kind::Any | Kind::All => Scoped::new(scope.clone(), run_all(children, limit)).await,
        };
        let total = finished.len();
        let settled =
            settle(finished, policy, Some(against)).map_err(|outcomes| Failure::Children {
                failed: outcomes.into_iter().filter_map(Result::err).collect(),
                total,
            })?;
        if settled.failed {
            scope.note_failure();
        }
        let mut info = Info::new();
        let value = match kind {
            Kind::Any => first_extreme(&settled.subscores, 0.0, |value, best| value > best),
            Kind::All => first_extreme(&settled.subscores, 1.0, |value, best| value < best),
            Kind::Cascade { threshold } => cascade_value(&settled, threshold, against, &mut info),
        };
        let Settled {
            mut subscores,
            zeroed_by,
            ..
        } = settled;
        let value = if zeroed_by.is_empty() {
            value
        } else {
            let names = zeroed_by.into_iter().map(Value::String).collect();
            info.insert("zeroed_by".to_owned(), Value::Array(names));
            worst(against)
        };
        dedupe_names(&mut subscores);
        let mut score = Score::new(value);
        score.children = Some(subscores);
        if !info.is_empty() {
            score.info = Some(info);
        }
        Ok(score)
    }
}

/// The first value of `subscores` that no later one `beats`, as Python's `max` and `min` pick
/// it: on a tie the first stays, so `any` of (-0.0, 0.0) is -0.0, as in the reference. `empty`
/// when there are none.
fn first_extreme(subscores: &[SubScore], empty: f64, beats: impl Fn(f64, f64) -> bool) -> f64 {
    let mut values = subscores.iter().map(SubScore::value);
    let Some(first) = values.next() else {
        return empty;
    };
    values.fold(
        first,
        |best, value| if beats(value, best) { value } else { best },
    )
}

/// Runs the stages in order until one reaches `threshold`; the rest are skipped. A stage that
/// fails under a lenient policy counts as the worst value for the agent: not reaching the
/// threshold, or, in a cascade that counts against the agent, fired (1.0).
async fn run_stages(
    stages: Vec<Node<'_>>,
    threshold: f64,
    policy: OnError,
    against: bool,
) -> Vec<Finished> {
    let mut finished = Vec::with_capacity(stages.len());
    let mut decided = false;
    for stage in stages {
        if decided {
            finished.push(stage.skip(DECIDED, against));
            continue;
        }
        let mut outcome = run_all(vec![stage.unconditional()], None).await;
        let Some(stage) = outcome.pop() else { continue };
        decided = match &stage.outcome {
            Ok(sub) => sub.value() >= threshold,
            Err(_) if policy == OnError::Fail => true,
            Err(_) => worst(against) >= threshold,
        };
        finished.push(stage);
    }
    finished
}

/// What a stage after the deciding one says in its `skipped` info.
const DECIDED: &str = "an earlier stage decided";

/// A cascade's value, and `decided_by` and `stages` in its info. Failed stages have the value
/// [`settle`] gave them (the worst for the agent); stages after the deciding one were skipped.
fn cascade_value(settled: &Settled, threshold: f64, against: bool, info: &mut Info) -> f64 {
    let stages = || {
        settled
            .subscores
            .iter()
            .zip(&settled.skipped)
            .zip(&settled.errored)
            .map(|((sub, skipped), errored)| (sub, *skipped, *errored))
    };
    let considered = || stages().filter(|(_, skipped, _)| !skipped);
    let decided = considered().find(|(sub, _, _)| sub.value() >= threshold);
    let value = decided
        .or_else(|| considered().next_back())
        .map_or(worst(against), |(sub, _, _)| sub.value());
    info.insert(
        "decided_by".to_owned(),
        decided.map_or(Value::Null, |(sub, _, _)| {
            Value::String(sub.name().to_owned())
        }),
    );
    let values = stages()
        .map(|(sub, skipped, errored)| {
            let value = if skipped || errored {
                Value::Null
            } else {
                json!(sub.value())
            };
            json!({ "name": sub.name(), "value": value })
        })
        .collect();
    info.insert("stages".to_owned(), Value::Array(values));
    value
}

impl Grader for Tree<'_> {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.name)
    }

    fn records_parameters(&self) -> bool {
        false
    }

    fn score(self) -> impl Future<Output = Result<Score, Failure>> + Send {
        self.combine()
    }

    /// Combines at once children that have all finished already (subscores and outcomes), as
    /// [`score_now`](SyncGrader::score_now) does; a tree with a child still to run is awaited.
    fn score_at_once(self) -> AtOnce<Self> {
        if self.children.iter().all(Node::is_done) {
            AtOnce::Scored(self.score_now())
        } else {
            AtOnce::Awaits(self)
        }
    }
}

impl SyncGrader for Tree<'_> {
    /// Combines children that have all finished already (subscores and outcomes); a tree with
    /// a child still to run fails with [`Failure::Runtime`] without starting anything: await
    /// its grading instead.
    fn score_now(self) -> Result<Score, Failure> {
        if let Some(pending) = self.children.iter().find(|child| !child.is_done()) {
            return Err(Failure::Runtime(format!(
                "`{}` has a child still to run ({pending:?}); await its grading instead of \
                 running it with `.now()`",
                self.name
            )));
        }
        self.combine()
            .now_or_never()
            .unwrap_or_else(|| Err(Failure::Runtime("a finished child did not finish".into())))
    }
}
