//! The work one parse or comparison may do: units of big-number arithmetic and expression
//! steps, an optional deadline and an optional cancel flag, all checked inside the loops that
//! do the work (a native thread cannot be pre-empted, so a caller's deadline is only as good as
//! the places that look at it).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::error::MathError;

/// How much one call may compute before it stops with a typed failure.
///
/// Work is counted in units of about one machine-word multiplication: multiplying two
/// numbers of `a` and `b` words costs `a × b`, every step over an expression costs one. The
/// default, [`Budget::DEFAULT_WORK`], is a few tens of milliseconds on one core; every answer
/// the anchors' own test cases hold needs less than a thousandth of it.
///
/// A deadline and a cancel flag stop the same loops: a caller that holds its own deadline
/// (a Python call, a trainer's step) passes it here, and an answer past it is
/// [`MathError::Deadline`] or [`MathError::Cancelled`], never a hang.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::AtomicBool;
/// use grader_core::math::{Budget, MathError, VerifyOptions, parse, verify_parsed_in};
///
/// let gold = parse("$\\frac{1}{2}$")?;
/// // A sum is not compared by exponents: its value would be worked out, past the budget.
/// let answer = parse("$\\boxed{99^{620100}+1}$")?;
/// let mut budget = Budget::new();
/// let verdict = verify_parsed_in(&gold, &answer, &VerifyOptions::default(), &mut budget);
/// assert!(matches!(verdict, Err(MathError::TooMuchWork { .. })));
///
/// let cancel = Arc::new(AtomicBool::new(true));
/// let mut budget = Budget::new().with_cancel(cancel);
/// let verdict = verify_parsed_in(&gold, &gold, &VerifyOptions::default(), &mut budget);
/// assert!(matches!(verdict, Err(MathError::Cancelled { .. })));
/// # Ok::<(), MathError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Budget {
    work_left: u64,
    limit: u64,
    deadline: Option<Instant>,
    cancel: Option<Arc<AtomicBool>>,
    /// Steps since the clock and the flag were last read.
    since_check: u32,
}

impl Default for Budget {
    fn default() -> Self {
        Self::new()
    }
}

/// How many steps pass between two readings of the clock and the cancel flag.
const CHECK_EVERY: u32 = 256;

impl Budget {
    /// The work of one comparison by default: 50 million units.
    pub const DEFAULT_WORK: u64 = 50_000_000;

    /// A budget of [`Budget::DEFAULT_WORK`], no deadline and no cancel flag.
    #[must_use]
    pub fn new() -> Self {
        Self::with_work(Self::DEFAULT_WORK)
    }

    /// A budget of `work` units.
    #[must_use]
    pub fn with_work(work: u64) -> Self {
        Self {
            work_left: work,
            limit: work,
            deadline: None,
            cancel: None,
            since_check: 0,
        }
    }

    /// The same budget, stopped at `deadline`.
    #[must_use]
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// The same budget, stopped `timeout` from now (math-verify's `parsing_timeout` and
    /// `timeout_seconds`).
    #[must_use]
    pub fn with_timeout(self, timeout: Duration) -> Self {
        match Instant::now().checked_add(timeout) {
            Some(deadline) => self.with_deadline(deadline),
            None => self,
        }
    }

    /// The same budget, stopped once `flag` is set.
    #[must_use]
    pub fn with_cancel(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel = Some(flag);
        self
    }

    /// The work done so far.
    #[must_use]
    pub fn used(&self) -> u64 {
        self.limit - self.work_left
    }

    /// The work this budget started with.
    #[must_use]
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Counts `units` of work: an error once the work, the deadline or the flag runs out.
    pub(crate) fn charge(&mut self, units: u64) -> Result<(), MathError> {
        if units > self.work_left {
            self.work_left = 0;
            return Err(MathError::TooMuchWork {
                grader: "math",
                limit: self.limit,
            });
        }
        self.work_left -= units;
        self.since_check += 1;
        if self.since_check >= CHECK_EVERY || units > 10_000 {
            self.since_check = 0;
            self.check()?;
        }
        Ok(())
    }

    /// Reads the cancel flag and the clock.
    pub(crate) fn check(&self) -> Result<(), MathError> {
        if let Some(flag) = &self.cancel
            && flag.load(Ordering::Relaxed)
        {
            return Err(MathError::Cancelled { grader: "math" });
        }
        if let Some(deadline) = self.deadline
            && Instant::now() >= deadline
        {
            return Err(MathError::Deadline { grader: "math" });
        }
        Ok(())
    }
}

/// The cost of multiplying numbers of `a` and `b` bits, in word products.
pub(crate) fn product_cost(a: u64, b: u64) -> u64 {
    (a / 64 + 1).saturating_mul(b / 64 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_runs_out_with_a_typed_error() {
        let mut budget = Budget::with_work(10);
        assert!(budget.charge(4).is_ok());
        assert_eq!(budget.used(), 4);
        assert!(matches!(
            budget.charge(7),
            Err(MathError::TooMuchWork { limit: 10, .. })
        ));
    }

    #[test]
    fn a_passed_deadline_stops_the_next_check() {
        let budget = Budget::new().with_deadline(Instant::now());
        assert!(matches!(budget.check(), Err(MathError::Deadline { .. })));
        let flag = Arc::new(AtomicBool::new(false));
        let budget = Budget::new().with_cancel(Arc::clone(&flag));
        assert!(budget.check().is_ok());
        flag.store(true, Ordering::Relaxed);
        assert!(matches!(budget.check(), Err(MathError::Cancelled { .. })));
    }
}
