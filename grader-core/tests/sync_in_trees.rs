//! A synchronous check in a gather or a tree runs as it starts, with no future of its own
//! (`Grader::score_at_once`): it must give what awaiting the same check gives, in every tree,
//! under every policy, with a panic, a failure, a gate, a requirement or a redaction; and a
//! grading that takes a slot of a shared limiter still takes it.
#![allow(clippy::unwrap_used, missing_docs)]

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use grader_core::grader::AtOnce;
use grader_core::params::ParametersWriter;
use grader_core::{
    Failure, Gather, GatherError, Grader, Info, Limiter, OnError, Resource, Score, SubScore,
    SyncGrader, all, any, cascade, grader,
};

/// A check whose value is given; a value outside `[0, 1]` is an invalid score.
#[grader]
fn fixed(value: f64) -> f64 {
    value
}

/// A check that fails with a message.
#[grader]
fn refuses(reason: &str) -> Result<f64, String> {
    Err(reason.to_owned())
}

/// A check that panics.
#[grader]
fn explodes(fuse: u32) -> f64 {
    panic!("boom after {fuse}")
}

/// `G`, its check awaited: the grader as it was graded before checks could run at once
/// (`score_at_once` left to its default).
struct Awaited<G>(G);

impl<G: Grader + Send> Grader for Awaited<G> {
    fn name(&self) -> Cow<'_, str> {
        self.0.name()
    }

    fn parameters(&self) -> Info {
        self.0.parameters()
    }

    fn write_parameters(&self, out: &mut ParametersWriter) {
        self.0.write_parameters(out);
    }

    fn resource(&self) -> Option<Resource> {
        self.0.resource()
    }

    fn records_parameters(&self) -> bool {
        self.0.records_parameters()
    }

    async fn score(self) -> Result<Score, Failure> {
        self.0.score().await
    }
}

/// Which way each grading of a tree is built: its checks run at once, or awaited.
#[derive(Clone, Copy, Debug)]
enum Way {
    AtOnce,
    Awaited,
}

/// Every grading the trees below use, built `way`: the same names, weights and options.
fn items<'a>(way: Way) -> Vec<grader_core::Node<'a>> {
    use grader_core::IntoNode;
    macro_rules! node {
        ($grader:expr, $weight:expr $(, $option:ident($($arg:expr),*))*) => {
            match way {
                Way::AtOnce => $grader.grade($weight)$(.$option($($arg),*))*.into_node(),
                Way::Awaited => Awaited($grader).grade($weight)$(.$option($($arg),*))*.into_node(),
            }
        };
    }
    vec![
        node!(Fixed { value: 0.5 }, 0.3, named("half")),
        node!(Fixed { value: 1.0 }, 0.2, named("gate"), required()),
        node!(Fixed { value: 1.0 }, -0.4, named("penalty")),
        node!(Fixed { value: 0.25 }, 0.1, redact("value")),
        node!(
            Fixed { value: 0.75 },
            0.2,
            named("gated"),
            when(|earlier: &grader_core::Earlier<'_>| earlier.passed("gate"))
        ),
        node!(
            Fixed { value: 0.75 },
            0.2,
            named("closed"),
            when(|earlier: &grader_core::Earlier<'_>| earlier.passed("half"))
        ),
        node!(Fixed { value: 0.1 }, 0.2, named("half")),
        node!(Fixed { value: 0.3 }.boxed(), 0.1, named("boxed")),
        node!(
            any(
                "finished",
                [
                    SubScore::new("a", 0.2).unwrap(),
                    SubScore::new("b", 0.9).unwrap()
                ]
            ),
            0.2
        ),
    ]
}

/// Gradings that fail: an error, panics (one of a penalty), an invalid score, a weight that is
/// not finite, a misspelt redaction.
fn failing<'a>(way: Way) -> Vec<grader_core::Node<'a>> {
    use grader_core::IntoNode;
    let pick = |at_once: grader_core::Node<'a>, awaited: grader_core::Node<'a>| match way {
        Way::AtOnce => at_once,
        Way::Awaited => awaited,
    };
    vec![
        pick(
            Refuses { reason: "no" }.grade(0.2).into_node(),
            Awaited(Refuses { reason: "no" }).grade(0.2).into_node(),
        ),
        pick(
            Explodes { fuse: 3 }.grade(0.3).into_node(),
            Awaited(Explodes { fuse: 3 }).grade(0.3).into_node(),
        ),
        pick(
            Fixed { value: 1.5 }.grade(0.1).into_node(),
            Awaited(Fixed { value: 1.5 }).grade(0.1).into_node(),
        ),
        pick(
            Explodes { fuse: 4 }.grade(-0.3).into_node(),
            Awaited(Explodes { fuse: 4 }).grade(-0.3).into_node(),
        ),
        pick(
            Fixed { value: 0.5 }.grade(f64::NAN).into_node(),
            Awaited(Fixed { value: 0.5 }).grade(f64::NAN).into_node(),
        ),
        pick(
            Fixed { value: 0.5 }
                .grade(0.2)
                .redact("missing")
                .into_node(),
            Awaited(Fixed { value: 0.5 })
                .grade(0.2)
                .redact("missing")
                .into_node(),
        ),
    ]
}

/// A gather of the items, of trees of them (as a penalty too), and of a cascade.
fn gather<'a>(way: Way, policy: Option<OnError>, with_failures: bool) -> Gather<'a> {
    let children = |extra: bool| {
        let mut nodes = items(way);
        if extra {
            nodes.extend(failing(way));
        }
        nodes
    };
    let mut gather = Gather::new().extend(children(with_failures));
    gather = gather
        .add(all("all", children(with_failures)).grade(0.5))
        .add(any("any", children(with_failures)).grade(0.5))
        .add(all("all-against", children(with_failures)).grade(-0.5))
        .add(
            any(
                "nested",
                (
                    all("inner", children(with_failures)),
                    any("inner-any", children(false)).on_error(OnError::Zero),
                ),
            )
            .grade(0.5),
        )
        .add(cascade("cascade", 0.9, children(with_failures)).grade(0.4))
        .add(cascade("cascade-against", 0.9, children(with_failures)).grade(-0.4));
    match policy {
        Some(policy) => gather.on_error(policy),
        None => gather,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn quiet_panics() {
    std::panic::set_hook(Box::new(|_| {}));
}

/// What a gathering gave, in a form two runs can be compared by.
fn outcome(result: Result<grader_core::EvaluationResult, GatherError>) -> String {
    match result {
        Ok(result) => serde_json::to_string(&result).unwrap(),
        Err(error) => {
            let completed: Vec<String> = error
                .completed()
                .map(|sub| serde_json::to_string(sub).unwrap())
                .collect();
            let failures: Vec<String> = error.failures().map(|e| format!("{e:?}")).collect();
            format!("error: {error}\ncompleted: {completed:?}\nfailures: {failures:?}")
        }
    }
}

#[test]
fn checks_run_at_once_give_what_awaiting_them_gives_in_every_tree_and_policy() {
    quiet_panics();
    let runtime = runtime();
    for with_failures in [false, true] {
        for policy in [None, Some(OnError::Zero), Some(OnError::Exclude)] {
            let limiter = Limiter::new().limit(Resource::Cpu, 1);
            let at_once = runtime.block_on(gather(Way::AtOnce, policy, with_failures));
            let awaited = runtime.block_on(gather(Way::Awaited, policy, with_failures));
            let (at_once, awaited) = (outcome(at_once), outcome(awaited));
            assert_eq!(at_once, awaited, "{policy:?}, failures: {with_failures}");
            // The same under a shared limiter (these checks take no slot of it).
            let limited =
                runtime.block_on(gather(Way::AtOnce, policy, with_failures).limiter(&limiter));
            assert_eq!(outcome(limited), at_once, "{policy:?} under a limiter");
        }
    }
    // The trees' results are not trivial: the gate held, the closed one was skipped, the
    // failures were scored by the policy.
    let result = runtime
        .block_on(gather(Way::AtOnce, Some(OnError::Zero), true))
        .unwrap();
    assert_eq!(result.subscore("gated").unwrap().value(), 0.75);
    let closed = result.subscore("closed").unwrap();
    assert!(closed.info().unwrap().contains_key("skipped"));
    let all = result.subscore("all").unwrap();
    assert_eq!(all.value(), 0.0);
    let children = all.children().unwrap();
    let panicked = children
        .iter()
        .find(|sub| sub.name() == "explodes-1")
        .unwrap();
    let error = panicked.info().unwrap()["error"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(error.contains("boom after 3"), "{error}");
    assert!(result.is_error);
}

#[test]
fn a_panicking_check_run_at_once_fails_as_an_awaited_one_does() {
    quiet_panics();
    let runtime = runtime();
    let run = |way: Way| {
        let limiter = Limiter::new().limit(Resource::Cpu, 2);
        let tree = match way {
            Way::AtOnce => all("checks", (Fixed { value: 1.0 }, Explodes { fuse: 7 })),
            Way::Awaited => all(
                "checks",
                (Awaited(Fixed { value: 1.0 }), Awaited(Explodes { fuse: 7 })),
            ),
        };
        runtime.block_on(Gather::new().limiter(&limiter).add(tree.grade(1.0)))
    };
    let error = run(Way::AtOnce).unwrap_err();
    let failure = &error.failures().next().unwrap().failure;
    let Failure::Children { failed, total } = failure else {
        panic!("{failure:?}");
    };
    assert_eq!(*total, 2);
    assert_eq!(failed[0].grader, "explodes");
    assert_eq!(failed[0].parameters["fuse"], 7);
    assert!(
        matches!(&failed[0].failure, Failure::Panicked { message } if message == "boom after 7"),
        "{:?}",
        failed[0].failure
    );
    assert_eq!(
        outcome(Err(error)),
        outcome(run(Way::Awaited)),
        "the same failure, awaited"
    );
}

/// A synchronous check that counts which way it ran, and how many slots of its class were
/// taken while it ran.
#[derive(Clone)]
struct Counted {
    resource: Option<Resource>,
    limiter: Limiter,
    at_once: Arc<AtomicUsize>,
    awaited: Arc<AtomicUsize>,
    slots_seen: Arc<AtomicUsize>,
}

impl Counted {
    fn check(&self) -> Result<Score, Failure> {
        let held = self.limiter.in_use(&Resource::Cpu);
        self.slots_seen.fetch_max(held, Ordering::SeqCst);
        Ok(Score::new(1.0))
    }
}

impl Grader for Counted {
    fn name(&self) -> Cow<'_, str> {
        "counted".into()
    }

    fn resource(&self) -> Option<Resource> {
        self.resource.clone()
    }

    async fn score(self) -> Result<Score, Failure> {
        self.awaited.fetch_add(1, Ordering::SeqCst);
        self.check()
    }

    fn score_at_once(self) -> AtOnce<Self> {
        self.at_once.fetch_add(1, Ordering::SeqCst);
        AtOnce::Scored(self.check())
    }
}

impl SyncGrader for Counted {
    fn score_now(self) -> Result<Score, Failure> {
        self.check()
    }
}

#[test]
fn a_check_that_takes_a_slot_is_awaited_and_holds_its_slot_the_others_run_at_once() {
    let runtime = runtime();
    let limiter = Limiter::new().limit(Resource::Cpu, 1);
    let counted = |resource: Option<Resource>| Counted {
        resource,
        limiter: limiter.clone(),
        at_once: Arc::default(),
        awaited: Arc::default(),
        slots_seen: Arc::default(),
    };

    // No class: each runs at once, in the gather and in a tree.
    let free = counted(None);
    let result = runtime
        .block_on(
            Gather::new()
                .limiter(&limiter)
                .add(free.clone().grade(1.0).named("a"))
                .add(all("tree", vec![free.clone(), free.clone()]).grade(1.0)),
        )
        .unwrap();
    assert_eq!(result.reward(), 1.0);
    assert_eq!(free.at_once.load(Ordering::SeqCst), 3);
    assert_eq!(free.awaited.load(Ordering::SeqCst), 0);
    assert_eq!(free.slots_seen.load(Ordering::SeqCst), 0);

    // Boxed, and in a tree whose children have all finished: at once too.
    let finished = || all("finished", [SubScore::new("done", 1.0).unwrap()]);
    let result = runtime
        .block_on(
            Gather::new()
                .add(free.clone().boxed().grade(1.0).named("boxed"))
                .add(finished().grade(1.0)),
        )
        .unwrap();
    assert_eq!(result.reward(), 1.0);
    assert_eq!(free.at_once.load(Ordering::SeqCst), 4);
    assert!(matches!(finished().score_at_once(), AtOnce::Scored(Ok(_))));
    let pending = all("pending", (Fixed { value: 1.0 },));
    assert!(matches!(pending.score_at_once(), AtOnce::Awaits(_)));

    // A class, declared or given per grading: awaited, inside its slot.
    let limited = counted(Some(Resource::Cpu));
    let given = counted(None);
    runtime
        .block_on(
            Gather::new()
                .limiter(&limiter)
                .add(limited.clone().grade(1.0).named("a"))
                .add(all("tree", vec![limited.clone(), limited.clone()]).grade(1.0))
                .add(given.clone().grade(1.0).named("b").resource(Resource::Cpu)),
        )
        .unwrap();
    assert_eq!(limited.at_once.load(Ordering::SeqCst), 0);
    assert_eq!(limited.awaited.load(Ordering::SeqCst), 3);
    assert_eq!(limited.slots_seen.load(Ordering::SeqCst), 1);
    assert_eq!(given.awaited.load(Ordering::SeqCst), 1);
    assert_eq!(given.slots_seen.load(Ordering::SeqCst), 1);
    assert_eq!(limiter.in_use(&Resource::Cpu), 0);

    // Retries and a time limit are the awaited run's: the check is awaited.
    let retried = counted(None);
    runtime
        .block_on(
            Gather::new()
                .add(retried.clone().grade(1.0).retries(2))
                .add(
                    retried
                        .clone()
                        .grade(1.0)
                        .named("limited")
                        .time_limit(std::time::Duration::from_secs(60)),
                ),
        )
        .unwrap();
    assert_eq!(retried.at_once.load(Ordering::SeqCst), 0);
    assert_eq!(retried.awaited.load(Ordering::SeqCst), 2);
}

#[test]
fn a_timed_gather_times_checks_run_at_once() {
    let runtime = runtime();
    let result = runtime
        .block_on(
            Gather::new()
                .timed()
                .add(Fixed { value: 1.0 }.grade(1.0))
                .add(all("tree", (Fixed { value: 0.5 },)).grade(1.0)),
        )
        .unwrap();
    let fixed = result.subscore("fixed").unwrap().info().unwrap();
    let keys: Vec<&str> = fixed.keys().map(String::as_str).collect();
    assert_eq!(keys, ["elapsed_seconds", "_parameters"]);
    let child: &SubScore = &result.subscore("tree").unwrap().children().unwrap()[0];
    assert!(child.info().unwrap()["elapsed_seconds"].is_f64());
}
