//! A run's progress bar on a terminal (feature `progress`): lines done, errors and the mean
//! reward so far; nothing without the feature.

impl Drop for Progress {
    /// A run dropped mid-way (cancelled) clears its bar too.
    fn drop(&mut self) {
        self.finish();
    }
}

/// The progress bar, or nothing.
pub(super) struct Progress {
    #[cfg(feature = "progress")]
    bar: Option<indicatif::ProgressBar>,
    #[cfg(feature = "progress")]
    stats: (u64, u64, crate::metrics::RunningMean),
}

impl Progress {
    #[cfg_attr(not(feature = "progress"), allow(unused_variables))]
    pub(super) fn new(enabled: bool, total: Option<u64>) -> Self {
        #[cfg(feature = "progress")]
        {
            use std::io::IsTerminal as _;
            let bar = (enabled && std::io::stderr().is_terminal()).then(|| {
                let bar = total.map_or_else(
                    indicatif::ProgressBar::no_length,
                    indicatif::ProgressBar::new,
                );
                let style = indicatif::ProgressStyle::with_template(
                    "{bar:30} {pos}/{len} {msg} {per_sec} eta {eta}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
                bar.set_style(style);
                bar
            });
            Progress {
                bar,
                stats: (0, 0, crate::metrics::RunningMean::default()),
            }
        }
        #[cfg(not(feature = "progress"))]
        Progress {}
    }

    #[cfg_attr(
        not(feature = "progress"),
        allow(unused_variables, clippy::unused_self)
    )]
    pub(super) fn record(&mut self, reward: Option<f64>) {
        #[cfg(feature = "progress")]
        if let Some(bar) = &self.bar {
            self.stats.0 += 1;
            match reward {
                Some(reward) => self.stats.2.push(reward),
                None => self.stats.1 += 1,
            }
            bar.set_message(format!(
                "errors {} mean {:.4}",
                self.stats.1,
                self.stats.2.mean()
            ));
            bar.inc(1);
        }
    }

    #[cfg_attr(not(feature = "progress"), allow(clippy::unused_self))]
    pub(super) fn finish(&mut self) {
        #[cfg(feature = "progress")]
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
