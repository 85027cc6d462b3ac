//! Shared limits: how many commands, judge calls or CPU-heavy checks run at once across every
//! gather, tree and evaluation that shares one [`Limiter`].
//!
//! A [`Limiter`] holds one slot count per [`Resource`] class. Code graded inside
//! [`Limiter::scope`] (or inside a [`Gather`](crate::Gather) given the limiter) takes a slot of
//! its grader's class for as long as it runs: `BashGrader` takes a
//! [`Resource::Commands`] slot, and a grader of your own declares its class with
//! [`Grader::resource`](crate::Grader::resource) or per grading with
//! [`Grading::resource`](crate::Grading::resource). A grader that makes several calls of its own
//! (the LLM judge makes one HTTP call per criterion) takes a slot per call with [`acquire`].
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use grader_core::limit::{Limiter, Resource};
//! use grader_core::{Gather, Grader, grader};
//!
//! #[grader]
//! async fn slow_check(n: u32) -> bool {
//!     n < 100
//! }
//!
//! // One limiter for the whole run: at most 2 CPU-heavy checks at once, whichever gather they
//! // belong to.
//! let limiter = Limiter::new().limit(Resource::Cpu, 2);
//! let grades = (0..10).map(|sample| {
//!     Gather::new()
//!         .limiter(&limiter)
//!         .add(SlowCheck { n: sample }.grade(1.0).resource(Resource::Cpu))
//! });
//! for result in futures_util::future::join_all(grades).await {
//!     assert_eq!(result?.reward(), 1.0);
//! }
//! # Ok::<(), grader_core::GatherError>(())
//! # }).unwrap();
//! ```
//!
//! Slots are re-entrant: a grading nested inside another that already holds a slot of the same
//! class (a tree of CPU-heavy checks graded as one CPU-heavy check) runs in its parent's slot,
//! so trees nested under one limiter cannot deadlock on it. The children sharing a slot take
//! turns in it, one at a time, so that a class never has more running at once than its limit.
//!
//! Slots of different classes are not ordered: two gradings that nest classes in opposite
//! orders (a CPU-heavy tree with a judged child, beside a judged tree with a CPU-heavy child)
//! can each hold the slot the other waits for when both limits are reached. Nest classes in
//! one order throughout. Likewise, a grader should not hold a [`Permit`] from [`acquire`]
//! while it awaits a grading of the same class. Gradings moved to another task (with
//! `tokio::spawn`) leave the limiter's scope and take no slots.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::OnError;

/// A class of resource that a [`Limiter`] counts separately.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Resource {
    /// Child processes, such as the commands `BashGrader` runs.
    Commands,
    /// Calls to a model, such as the LLM judge's.
    Judge,
    /// Checks that keep a core busy.
    Cpu,
    /// A class of your own (a database, a browser, …), told apart by its name.
    Custom(&'static str),
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resource::Commands => f.write_str("commands"),
            Resource::Judge => f.write_str("judge"),
            Resource::Cpu => f.write_str("cpu"),
            Resource::Custom(name) => f.write_str(name),
        }
    }
}

/// Slot counts per [`Resource`], shared by every clone: clone it into each gather, tree or
/// evaluation that should count against the same limits. A class with no limit set is not
/// limited.
#[derive(Clone, Default)]
pub struct Limiter {
    classes: Arc<Vec<(Resource, Arc<Semaphore>, usize)>>,
}

impl fmt::Debug for Limiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for (resource, semaphore, limit) in self.classes.iter() {
            map.entry(
                &format_args!("{resource}"),
                &format_args!("{} of {limit} free", semaphore.available_permits()),
            );
        }
        map.finish()
    }
}

impl Limiter {
    /// A limiter with no limits yet.
    #[must_use]
    pub fn new() -> Self {
        Limiter::default()
    }

    /// At most `slots` graders (or calls) of class `resource` at once; 0 is taken as 1. Set
    /// limits before cloning the limiter: a clone made earlier does not see a limit set later.
    #[must_use]
    pub fn limit(mut self, resource: Resource, slots: usize) -> Self {
        let slots = slots.clamp(1, Semaphore::MAX_PERMITS);
        let classes = Arc::make_mut(&mut self.classes);
        classes.retain(|(known, _, _)| *known != resource);
        classes.push((resource, Arc::new(Semaphore::new(slots)), slots));
        self
    }

    /// The limit set for `resource`, if any.
    #[must_use]
    pub fn limit_of(&self, resource: &Resource) -> Option<usize> {
        self.semaphore(resource).map(|(_, limit)| limit)
    }

    /// How many slots of `resource` are taken now (0 for a class with no limit).
    #[must_use]
    pub fn in_use(&self, resource: &Resource) -> usize {
        self.semaphore(resource).map_or(0, |(semaphore, limit)| {
            limit - semaphore.available_permits()
        })
    }

    fn semaphore(&self, resource: &Resource) -> Option<(&Arc<Semaphore>, usize)> {
        self.classes
            .iter()
            .find(|(known, _, _)| known == resource)
            .map(|(_, semaphore, limit)| (semaphore, *limit))
    }

    /// Runs `future` with this limiter in force: every grading inside it, however deeply
    /// nested, takes its slots from this limiter.
    pub fn scope<F: Future>(&self, future: F) -> Scoped<F> {
        let context = Scope::current().with_limiter(self.clone());
        Scoped::new(context, future)
    }
}

/// A slot of a [`Limiter`], given back when dropped. Outside any limiter's scope, or for a class
/// with no limit, it holds nothing; inside a grading that already holds a slot of the class, it
/// is a turn in that slot.
#[derive(Debug)]
#[must_use = "the slot is given back as soon as the permit is dropped"]
pub struct Permit {
    _permit: Option<OwnedSemaphorePermit>,
}

/// Waits for a slot of `resource` from the limiter in force (see [`Limiter::scope`]).
///
/// For graders that make several calls of their own and should count each one.
pub async fn acquire(resource: Resource) -> Permit {
    let scope = Scope::current();
    scope.acquire(&resource).await
}

/// What the gradings of one task run under: the shared limiter, the classes already held by
/// an enclosing grading, the failure policy and whether timings are recorded.
///
/// Opaque outside this crate: a runner that polls gradings on other tasks or threads (the
/// evaluation runner's lanes) takes the scope in force with [`Scope::current`] and polls them
/// inside it with [`Scope::enter`], so that they share the caller's limiter and options.
#[derive(Clone, Default)]
pub struct Scope {
    limiter: Option<Limiter>,
    /// The classes whose slot an enclosing grading holds, each with the one turn in it that
    /// the gradings nested inside share.
    held: Vec<(Resource, Arc<Semaphore>)>,
    pub(crate) on_error: Option<OnError>,
    pub(crate) timed: bool,
    /// Set when a failure inside was scored by a lenient policy, so that the enclosing result
    /// is marked `isError` however deep it happened.
    pub(crate) failures: Option<Arc<AtomicBool>>,
    /// Whether the value of what is graded here counts against the agent: set by a grading
    /// for its check (from its weight's sign when it is graded on its own or in a gather;
    /// inherited from the tree it is a child of, where children's weights have no effect),
    /// cleared by a gather for its items. A tree scores its failed and skipped children by
    /// it, so that they never help the agent.
    pub(crate) against: Option<bool>,
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<Scope>>> = const { RefCell::new(None) };
    /// The direction a synchronous grading sets for its check ([`with_against`]), in force
    /// over the scope in `CURRENT` until the check returns; `None` when none is set.
    static AGAINST: Cell<Option<Option<bool>>> = const { Cell::new(None) };
}

impl Scope {
    /// The scope in force on this thread's current poll, or the empty one.
    #[must_use]
    pub fn current() -> Scope {
        let mut scope = CURRENT
            .with(|current| current.borrow().as_deref().cloned())
            .unwrap_or_default();
        if let Some(against) = AGAINST.get() {
            scope.against = against;
        }
        scope
    }

    /// This scope with `limiter` in force. Slots held of another limiter are not slots of
    /// this one, so they no longer count as held.
    #[must_use]
    pub fn with_limiter(mut self, limiter: Limiter) -> Scope {
        let same = self
            .limiter
            .as_ref()
            .is_some_and(|current| Arc::ptr_eq(&current.classes, &limiter.classes));
        if !same {
            self.held.clear();
        }
        self.limiter = Some(limiter);
        self
    }

    /// Takes a slot of `resource`, or a turn in the slot of it an enclosing grading holds
    /// (re-entrant), unless the class has no limit.
    pub(crate) async fn acquire(&self, resource: &Resource) -> Permit {
        let held = self
            .held
            .iter()
            .find(|(known, _)| known == resource)
            .map(|(_, turn)| Arc::clone(turn));
        let semaphore = match &self.limiter {
            _ if held.is_some() => held,
            Some(limiter) => limiter
                .semaphore(resource)
                .map(|(semaphore, _)| Arc::clone(semaphore)),
            None => None,
        };
        let permit = match semaphore {
            // The semaphore is never closed, so acquiring only fails if it were.
            Some(semaphore) => semaphore.acquire_owned().await.ok(),
            None => None,
        };
        Permit { _permit: permit }
    }

    /// Notes that a failure was scored by a lenient policy.
    pub(crate) fn note_failure(&self) {
        if let Some(failures) = &self.failures {
            failures.store(true, Ordering::Relaxed);
        }
    }

    /// This scope with a slot (or a turn) of `resource` held by the grading about to run in
    /// it, when `permit` holds one: the gradings nested inside take turns in it.
    pub(crate) fn holding(mut self, resource: Resource, permit: &Permit) -> Scope {
        if permit._permit.is_some() {
            self.held.retain(|(known, _)| *known != resource);
            self.held.push((resource, Arc::new(Semaphore::new(1))));
        }
        self
    }
}

/// Runs `f` with the scope in force but for `against` (a synchronous grading's check). Only the
/// direction changes, so no scope is made for it.
pub(crate) fn with_against<T>(against: Option<bool>, f: impl FnOnce() -> T) -> T {
    let previous = AGAINST.replace(Some(against));
    let _restore = RestoreAgainst(previous);
    f()
}

/// Puts the previous direction back when a check ends, even by unwinding.
struct RestoreAgainst(Option<Option<bool>>);

impl Drop for RestoreAgainst {
    fn drop(&mut self) {
        AGAINST.set(self.0);
    }
}

/// A future that runs with a limiter (and the enclosing gather's options) in force on every
/// poll. Made by [`Limiter::scope`].
#[must_use = "futures do nothing unless awaited"]
pub struct Scoped<F> {
    scope: Arc<Scope>,
    future: Pin<Box<F>>,
}

impl<F> fmt::Debug for Scoped<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scoped")
            .field("limiter", &self.scope.limiter)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("limiter", &self.limiter)
            .finish_non_exhaustive()
    }
}

impl Scope {
    /// `future`, polled with this scope in force (its limiter, options and held classes).
    pub fn enter<F: Future>(self, future: F) -> Scoped<F> {
        Scoped::new(self, future)
    }
}

impl<F: Future> Scoped<F> {
    pub(crate) fn new(scope: Scope, future: F) -> Self {
        Scoped {
            scope: Arc::new(scope),
            future: Box::pin(future),
        }
    }
}

/// Puts the previous scope back when a poll ends, even by unwinding.
struct Restore(Option<Arc<Scope>>);

impl Drop for Restore {
    fn drop(&mut self) {
        let previous = self.0.take();
        CURRENT.with(|current| *current.borrow_mut() = previous);
    }
}

impl<F: Future> Future for Scoped<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let scope = Arc::clone(&self.scope);
        let previous = CURRENT.with(|current| current.borrow_mut().replace(scope));
        let _restore = Restore(previous);
        // Its own scope's direction, not that of a synchronous check it is polled inside.
        let _restore_against = RestoreAgainst(AGAINST.take());
        self.future.as_mut().poll(cx)
    }
}
