//! State that belongs to one process, made again in a child made by `fork`.
//!
//! A child made by `fork` (Python's `os.fork()`, `multiprocessing` with the `fork` start method)
//! is a copy of this process with a single thread: the one that called `fork`. What this module
//! keeps for the whole process, the starter threads' queue, the sweeper's channel, the tag its
//! commands carry and what it knows of its own ancestors and running commands, describes the
//! parent there: jobs sent to the parent's threads would wait forever, and the parent's tag
//! would let each process stop the other's commands. A [`PerProcess`] value is checked against
//! the calling process's id and made afresh where it changed.

use std::sync::{Mutex, OnceLock, PoisonError};

/// A value made the first time a process asks for it, and again in each child made by `fork`.
///
/// The first process to make it keeps it in a [`OnceLock`]: read without a lock, as a plain
/// `OnceLock` would be. A forked child makes its own, kept behind a mutex that the process
/// that made the `OnceLock`'s value never takes (so no thread of it can have held that mutex
/// when it forked). Each child's value is leaked: one per process.
pub(super) struct PerProcess<T: 'static> {
    first: OnceLock<(u32, T)>,
    forked: Mutex<Option<(u32, &'static T)>>,
}

impl<T: Send + Sync + 'static> PerProcess<T> {
    /// An empty cell.
    pub(super) const fn new() -> Self {
        Self {
            first: OnceLock::new(),
            forked: Mutex::new(None),
        }
    }

    /// This process's value, if it made one.
    pub(super) fn get(&'static self) -> Option<&'static T> {
        self.get_in(std::process::id())
    }

    /// This process's value, made by `make` unless it has one. Two threads that ask at once
    /// may both call `make`; one value is kept and the other dropped.
    pub(super) fn get_or_init(&'static self, make: impl FnOnce() -> T) -> &'static T {
        self.get_or_init_in(std::process::id(), make)
    }

    fn get_in(&'static self, pid: u32) -> Option<&'static T> {
        match self.first.get() {
            Some((owner, value)) if *owner == pid => Some(value),
            Some(_) => self
                .lock_forked()
                .and_then(|(owner, value)| (owner == pid).then_some(value)),
            None => None,
        }
    }

    fn get_or_init_in(&'static self, pid: u32, make: impl FnOnce() -> T) -> &'static T {
        if let Some(value) = self.get_in(pid) {
            return value;
        }
        let made = match self.first.set((pid, make())) {
            Ok(()) => None,
            Err((_, made)) => Some(made),
        };
        if let Some((owner, kept)) = self.first.get()
            && *owner == pid
        {
            // Set by this call, or by another thread of this process first (`made` dropped).
            return kept;
        }
        let Some(made) = made else {
            unreachable!("a value this call set is this process's")
        };
        // A forked child: its own value, unless another of its threads was first.
        let mut forked = self.forked.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((owner, kept)) = *forked
            && owner == pid
        {
            return kept;
        }
        let leaked: &'static T = Box::leak(Box::new(made));
        *forked = Some((pid, leaked));
        leaked
    }

    fn lock_forked(&self) -> Option<(u32, &'static T)> {
        *self.forked.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::PerProcess;

    #[test]
    fn a_value_is_made_once_per_process() {
        static CELL: PerProcess<String> = PerProcess::new();
        assert_eq!(CELL.get_in(10), None);
        let first = CELL.get_or_init_in(10, || "first".to_owned());
        assert_eq!(first, "first");
        // The same process gets the same value and makes nothing.
        let again = CELL.get_or_init_in(10, || unreachable!("made twice"));
        assert!(std::ptr::eq(first, again));
        // A forked child (another pid) has none until it makes its own.
        assert_eq!(CELL.get_in(11), None);
        assert_eq!(CELL.get_or_init_in(11, || "child".to_owned()), "child");
        assert_eq!(CELL.get_in(11).map(String::as_str), Some("child"));
        // Its own child in turn, while the first process keeps its value.
        assert_eq!(
            CELL.get_or_init_in(12, || "grandchild".to_owned()),
            "grandchild"
        );
        assert_eq!(CELL.get_in(10).map(String::as_str), Some("first"));
        assert_eq!(CELL.get_in(11), None);
    }

    #[test]
    fn a_child_of_a_process_that_made_none_makes_the_first() {
        static CELL: PerProcess<u32> = PerProcess::new();
        assert_eq!(*CELL.get_or_init_in(20, || 20), 20);
        assert_eq!(CELL.get_in(20), Some(&20));
    }
}
