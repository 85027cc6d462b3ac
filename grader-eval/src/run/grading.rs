//! One grading: the grading function's future, its panic caught (and its destructor's), timed
//! from its first poll, ending in its line ([`Graded`]); [`grading`] makes one of a sample and
//! an epoch.

use std::fmt::Display;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use futures_util::FutureExt as _;
use futures_util::future::Either;

use crate::line::{ErrorKind, Line};
use crate::running::{Finished, panic_message};
use grader_core::score::EvaluationResult;

/// A sample's input, target and answer, as its lines carry them: `None` when it gives none,
/// so that a sample without texts costs a grading one word.
pub(super) type Texts = Option<Box<[Option<String>; 3]>>;

pin_project_lite::pin_project! {
    /// One grading: the grading function's future, its panic caught, ending in the line.
    /// Small (the future and a few words) where an `async` block holding the same would
    /// hold the result several times over. It is timed from its first poll (it may wait in
    /// the queue before).
    struct Graded<Fut> {
        #[pin]
        future: Stage<Fut>,
        id: Arc<str>,
        epoch: u32,
        started: Option<Instant>,
        texts: Texts,
    }

    impl<Fut> PinnedDrop for Graded<Fut> {
        /// A grading dropped before it ended (cancelled, or never started) may panic in its
        /// future's destructor: that is caught here, so that whatever is dropped with it (the
        /// other gradings of its lane, those in the queue) is still dropped, and the run still
        /// hears of it.
        fn drop(this: Pin<&mut Self>) {
            let mut future = this.project().future;
            let _ = std::panic::catch_unwind(AssertUnwindSafe(|| future.set(Stage::Ended)));
        }
    }
}

pin_project_lite::pin_project! {
    /// The grading function's future until it ends; then nothing, as it is dropped as soon as
    /// it ends, where a panic of its destructor is caught too.
    #[project = StageProj]
    #[project_replace = StageReplace]
    enum Stage<Fut> {
        Running { #[pin] future: futures_util::future::CatchUnwind<AssertUnwindSafe<Fut>> },
        Ended,
    }
}

impl<Fut, E> Graded<Fut>
where
    Fut: Future<Output = Result<EvaluationResult, E>>,
    E: Display,
{
    fn new(future: Fut, id: Arc<str>, epoch: u32, texts: Texts) -> Self {
        Graded {
            future: Stage::Running {
                future: AssertUnwindSafe(future).catch_unwind(),
            },
            id,
            epoch,
            started: None,
            texts,
        }
    }

    /// The line of a grading that ended with `outcome`, turning an error or a panic into the
    /// line's error, with the sample's `texts`. `started` is when its first poll began,
    /// `polled` when its last did.
    fn line(
        outcome: std::thread::Result<Result<EvaluationResult, E>>,
        (id, epoch, texts): (Arc<str>, u32, Texts),
        started: Instant,
        polled: Instant,
    ) -> Finished {
        let ended = Instant::now();
        let secs = ended.duration_since(started).as_secs_f64();
        let mut line = match outcome {
            Ok(Ok(result)) => Line::graded(&*id, epoch, result, secs),
            Ok(Err(error)) => Line::failed(&*id, epoch, ErrorKind::Failed, error.to_string(), secs),
            Err(panic) => Line::failed(
                &*id,
                epoch,
                ErrorKind::Panicked,
                panic_message(&panic),
                secs,
            ),
        };
        line.started_at = super::clock::started_at(started);
        if let Some(texts) = texts {
            let [input, target, answer] = *texts;
            (line.input, line.target, line.answer) = (input, target, answer);
        }
        // (Most gradings end at their first poll: the same span.)
        let last_poll = if polled == started {
            secs
        } else {
            ended.duration_since(polled).as_secs_f64()
        };
        Finished {
            last_poll,
            ..Finished::new(line)
        }
    }
}

impl<Fut, E> Future for Graded<Fut>
where
    Fut: Future<Output = Result<EvaluationResult, E>>,
    E: Display,
{
    type Output = Finished;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Finished> {
        let mut this = self.project();
        // The start of this poll, and of the first: a grading that ends at its first poll (most
        // that only compute) reads the clock there and at its end.
        let polled = Instant::now();
        let started = *this.started.get_or_insert(polled);
        let outcome = match this.future.as_mut().project() {
            StageProj::Running { future } => std::task::ready!(future.poll(cx)),
            StageProj::Ended => panic!("a grading polled after it ended"),
        };
        let (id, epoch, texts) = (Arc::clone(this.id), *this.epoch, this.texts.take());
        // What runs of the grading's own code after it ended (its future's destructor, its
        // error's `Display`) may panic too: that is this grading's panic, and becomes its line,
        // rather than unwinding through the lane it shares a task with (or, polled in place,
        // through the run).
        let ended = std::panic::catch_unwind(AssertUnwindSafe(|| {
            this.future.project_replace(Stage::Ended);
            Self::line(outcome, (Arc::clone(&id), epoch, texts), started, polled)
        }));
        std::task::Poll::Ready(
            ended
                .unwrap_or_else(|panic| Self::line(Err(panic), (id, epoch, None), started, polled)),
        )
    }
}

/// The grading of (`sample`, `epoch`) with `grade`, its line carrying what `texts_of` reads
/// of the sample: its future, or its panic as the line.
pub(super) fn grading<S, Fut, E>(
    grade: impl FnOnce(Arc<S>, u32) -> Fut,
    texts_of: impl FnOnce(&S) -> Texts,
    sample: Arc<S>,
    id: Arc<str>,
    epoch: u32,
) -> impl Future<Output = Finished> + Send + 'static
where
    Fut: Future<Output = Result<EvaluationResult, E>> + Send + 'static,
    E: Display + 'static,
{
    // The sample's texts are its own code too: a panic there is this grading's.
    let made = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let texts = texts_of(&*sample);
        (texts, grade(sample, epoch))
    }));
    match made {
        Ok((texts, future)) => Either::Left(Graded::new(future, id, epoch, texts)),
        Err(panic) => {
            let now = Instant::now();
            Either::Right(std::future::ready(Graded::<Fut>::line(
                Err(panic),
                (id, epoch, None),
                now,
                now,
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::running::Json;

    /// A grading's last poll is timed apart from its whole duration: one that waited 20 ms on
    /// a timer and then ended at once held its thread for a sliver of that, and only the
    /// sliver counts towards the runner's slice (which would otherwise yield after every such
    /// grading).
    #[test]
    fn a_gradings_last_poll_leaves_out_its_waits() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let graded = Graded::new(
            async {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                let check = grader_core::SubScore::new("check", 1.0).map_err(|e| e.to_string())?;
                grader_core::Grade::from_subscores([check]).map_err(|e| e.to_string())
            },
            Arc::from("s"),
            1,
            None,
        );
        let finished = runtime.block_on(graded);
        let Json::Line(line) = &finished.json else {
            panic!("a line not written out")
        };
        assert!(line.error.is_none(), "{:?}", line.error);
        assert!(line.duration_secs >= 0.02, "{}", line.duration_secs);
        assert!(
            finished.last_poll < line.duration_secs / 2.0,
            "last poll {} s of {} s",
            finished.last_poll,
            line.duration_secs
        );
        // One that ends at its first poll: its last poll is all of it.
        let at_once = runtime.block_on(Graded::new(
            async { Err::<grader_core::EvaluationResult, _>("no") },
            Arc::from("t"),
            1,
            None,
        ));
        let Json::Line(line) = &at_once.json else {
            panic!("a line not written out")
        };
        assert_eq!(at_once.last_poll, line.duration_secs);
    }
}
