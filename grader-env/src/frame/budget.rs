//! The bytes every connection's read buffer holds, counted as a whole: each connection's small
//! buffer (bounded by the number of connections) and what buffers grow by for a large frame
//! (bounded by what is left of the server's budget); and, from the same budget, what a large
//! frame costs once parsed, while its request is handled.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A shared count of buffered bytes with a limit on growth; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Budget(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    /// The most bytes buffers may grow by, all together.
    growth_limit: usize,
    /// Bytes of the connections' small buffers.
    small: AtomicUsize,
    /// Bytes buffers have grown by for large frames.
    growth: AtomicUsize,
    /// The most `small + growth` ever was.
    peak: AtomicUsize,
}

impl Budget {
    /// A budget of `total` bytes, of which `reserved` are kept for the small buffers of every
    /// connection the server may hold (growth gets the rest).
    pub(crate) fn new(total: usize, reserved: usize) -> Self {
        Budget(Arc::new(Shared {
            growth_limit: total.saturating_sub(reserved),
            small: AtomicUsize::new(0),
            growth: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        }))
    }

    /// A budget that refuses nothing (a reader on its own).
    pub(crate) fn unlimited() -> Self {
        Budget::new(usize::MAX, 0)
    }

    fn record_peak(&self) {
        self.0.peak.fetch_max(self.used(), Ordering::Relaxed);
    }

    /// Counts a connection's small buffer (never refused: the number of connections bounds
    /// them).
    pub(crate) fn charge_small(&self, bytes: usize) {
        self.0.small.fetch_add(bytes, Ordering::Relaxed);
        self.record_peak();
    }

    /// Releases a small buffer.
    pub(crate) fn release_small(&self, bytes: usize) {
        self.0.small.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Counts `bytes` of growth; `false`, counting nothing, when that would pass the limit.
    pub(crate) fn try_grow(&self, bytes: usize) -> bool {
        let limit = self.0.growth_limit;
        let grown = self
            .0
            .growth
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|&total| total <= limit)
            })
            .is_ok();
        if grown {
            self.record_peak();
        }
        grown
    }

    /// Releases `bytes` of growth.
    pub(crate) fn release_growth(&self, bytes: usize) {
        self.0.growth.fetch_sub(bytes, Ordering::AcqRel);
    }

    /// The bytes buffered now.
    pub(crate) fn used(&self) -> usize {
        self.0.small.load(Ordering::Relaxed) + self.0.growth.load(Ordering::Relaxed)
    }

    /// The most bytes ever buffered at once.
    pub(crate) fn peak(&self) -> usize {
        self.0.peak.load(Ordering::Relaxed)
    }

    /// The most bytes buffers may grow by.
    pub(crate) fn growth_limit(&self) -> usize {
        self.0.growth_limit
    }
}

/// Growth counted in a budget until dropped: what a parsed frame holds while its request is
/// handled.
#[derive(Debug)]
pub(crate) struct Held {
    budget: Option<Budget>,
    bytes: usize,
}

impl Held {
    /// Nothing held.
    pub(crate) fn nothing() -> Self {
        Held {
            budget: None,
            bytes: 0,
        }
    }

    /// `bytes` held in `budget`, or `None` when that would pass its limit.
    pub(crate) fn take(budget: &Budget, bytes: usize) -> Option<Self> {
        budget.try_grow(bytes).then(|| Held {
            budget: Some(budget.clone()),
            bytes,
        })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(budget) = &self.budget {
            budget.release_growth(self.bytes);
        }
    }
}
