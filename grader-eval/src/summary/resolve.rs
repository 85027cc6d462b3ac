//! Which line of a (sample, epoch) counts when there are several: [`Resolver`] keeps one by
//! [`Keep`], notes the lines left out, and counts and names the pairs whose lines disagree.

use super::options::Keep;
use super::spill::Entry;
use super::{Conflict, Summary};

/// Keeps one line per (sample, epoch), sample by sample.
#[derive(Debug)]
pub(super) struct Resolver {
    keep: Keep,
    /// The log places of the lines left out.
    pub(super) dropped: Vec<u64>,
    /// Pairs whose lines have different fingerprints.
    pub(super) conflicts: usize,
    /// The first few of those.
    pub(super) conflicting: Vec<Conflict>,
}

impl Resolver {
    pub(super) fn new(keep: Keep) -> Self {
        Resolver {
            keep,
            dropped: Vec::new(),
            conflicts: 0,
            conflicting: Vec::new(),
        }
    }

    /// Leaves one line of each epoch in `entries` (every line of sample `id`, by epoch and
    /// arrival), the first or the last as the resolver keeps.
    pub(super) fn sample(&mut self, id: &[u8], entries: &mut Vec<Entry>) {
        let mut kept = 0;
        let mut start = 0;
        while start < entries.len() {
            let epoch = entries[start].epoch;
            let end = start
                + entries[start..]
                    .iter()
                    .take_while(|entry| entry.epoch == epoch)
                    .count();
            let group = &entries[start..end];
            let chosen = match self.keep {
                Keep::Last => end - 1,
                _ => start,
            };
            if group.len() > 1 {
                let fingerprint = group[0].fingerprint;
                if group.iter().any(|entry| entry.fingerprint != fingerprint) {
                    self.conflicts += 1;
                    if self.conflicting.len() < Summary::CONFLICTS_NAMED {
                        self.conflicting.push(Conflict {
                            id: String::from_utf8_lossy(id).into_owned(),
                            epoch,
                            lines: group.len(),
                        });
                    }
                }
                self.dropped.extend(
                    (start..end)
                        .filter(|at| *at != chosen)
                        .map(|at| entries[at].logged),
                );
            }
            entries[kept] = entries[chosen];
            kept += 1;
            start = end;
        }
        entries.truncate(kept);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(epoch: u32, logged: u64, fingerprint: u64) -> Entry {
        Entry {
            epoch,
            reward: logged as f64,
            logged,
            fingerprint,
            subs: 0,
            nsubs: 0,
        }
    }

    #[test]
    fn one_line_per_epoch_is_kept_and_disagreements_are_named() {
        let lines = || {
            vec![
                entry(1, 0, 7),
                entry(1, 4, 7),
                entry(2, 1, 7),
                entry(2, 3, 8),
                entry(2, 5, 7),
                entry(3, 2, 9),
            ]
        };
        let mut first = Resolver::new(Keep::First);
        let mut entries = lines();
        first.sample(b"q", &mut entries);
        let logged: Vec<u64> = entries.iter().map(|entry| entry.logged).collect();
        assert_eq!(logged, [0, 1, 2]);
        assert_eq!(first.dropped, [4, 3, 5]);
        assert_eq!(first.conflicts, 1);
        assert_eq!(
            first.conflicting,
            [Conflict {
                id: "q".to_owned(),
                epoch: 2,
                lines: 3
            }]
        );
        let mut last = Resolver::new(Keep::Last);
        let mut entries = lines();
        last.sample(b"q", &mut entries);
        let logged: Vec<u64> = entries.iter().map(|entry| entry.logged).collect();
        assert_eq!(logged, [4, 5, 2]);
        assert_eq!(
            (last.dropped.as_slice(), last.conflicts),
            (&[0, 1, 3][..], 1)
        );
    }
}
