//! The gradings in flight, end to end: lanes and the awaiting task on real runtimes, a lane's
//! lines to the file or to the awaiting task, panics, cancelling, the concurrency.

use std::time::Instant;

use super::*;
use crate::running::append::{Appending, Sent, keep_for_next_poll};
use crate::running::{Json, UNTOLD_FOR, UNTOLD_LINES};

/// The lines of `finished`: those written out (a lane's, handed over together) read back,
/// the others as they are.
fn parsed(finished: &[Finished]) -> Vec<Line> {
    let mut lines = Vec::new();
    for line in finished {
        match &line.json {
            Json::Line(line) => lines.push(Line::clone(line)),
            Json::Written(Ok(bytes)) => lines.extend(
                bytes
                    .split(|b| *b == b'\n')
                    .filter(|raw| !raw.is_empty())
                    .map(|raw| serde_json::from_slice::<Line>(raw).expect("a line")),
            ),
            Json::WithOthers => {}
            Json::Written(Err(_)) | Json::InFile | Json::Unwritten => {
                panic!("not a line to read back")
            }
        }
    }
    lines
}

/// A multi-threaded runtime of `workers` worker threads.
fn runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Every line `running` gives until none is left, failing with `why` after 20 seconds.
async fn every_line(running: &mut Running, why: &str) -> Vec<Finished> {
    let mut lines = Vec::new();
    let all = async {
        while let Some(line) = running.next(false).await {
            lines.push(line);
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(20), all)
        .await
        .expect(why);
    lines
}

/// How many samples the lines are of.
fn distinct_ids(lines: &[Finished]) -> usize {
    let ids: std::collections::BTreeSet<String> =
        parsed(lines).into_iter().map(|line| line.id).collect();
    ids.len()
}

/// A fresh scratch folder named `name` and a results file in it, opened to append, for lanes
/// to write.
fn scratch_file(name: &str) -> (std::path::PathBuf, std::path::PathBuf, SharedFile) {
    let dir = std::env::temp_dir().join(format!("grader-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let path = dir.join("results.jsonl");
    let _ = std::fs::remove_file(&path);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .expect("open");
    (dir, path, SharedFile::new(file))
}

fn failed(id: &str, epoch: u32, message: &str) -> Finished {
    Finished::from(Line::failed(id, epoch, ErrorKind::Failed, message, 0.0))
}

/// The lines that end in a poll are appended to the file in one write; while another
/// thread holds the file, they are handed over as one buffer instead (the first line
/// carries it, the others are marked as in it), and nothing is written to the file.
#[test]
fn a_polls_lines_go_to_the_file_or_whole_to_the_awaiting_task_when_it_is_busy() {
    let (dir, path, file) = scratch_file("appending");
    let events = |ids: &[&str]| -> Vec<Event> {
        ids.iter()
            .map(|id| Event::Line {
                line: failed(id, 1, "x"),
                spent: None,
            })
            .collect()
    };
    let poll_holding = |ended: &mut Vec<Event>, held: Vec<u8>, hold: bool| {
        let mut appending = Appending::new(Some(&file), held);
        for event in ended.iter_mut() {
            appending.write_out(event);
        }
        match appending.finish(ended, hold) {
            Sent::Out(buffer) => {
                keep_for_next_poll(buffer);
                None
            }
            Sent::Held(bytes) => Some(bytes),
        }
    };
    let poll = |ended: &mut Vec<Event>| assert!(poll_holding(ended, Vec::new(), false).is_none());

    let mut ended = events(&["a", "b"]);
    poll(&mut ended);
    assert!(
        ended
            .iter()
            .all(|e| matches!(e, Event::Line { line, .. } if matches!(line.json, Json::InFile)))
    );
    let written = std::fs::read_to_string(&path).expect("the file");
    assert_eq!(written.lines().count(), 2, "{written}");

    let mut ended = events(&["c", "d", "e"]);
    std::thread::scope(|s| {
        let held = file.state();
        s.spawn(|| poll(&mut ended)).join().expect("the poll");
        drop(held);
    });
    let Some(Event::Line { line, .. }) = ended.first() else {
        panic!("a line")
    };
    let Json::Written(Ok(bytes)) = &line.json else {
        panic!("the poll's lines, handed over")
    };
    let handed: Vec<Line> = bytes
        .split(|b| *b == b'\n')
        .filter(|raw| !raw.is_empty())
        .map(|raw| serde_json::from_slice(raw).expect("a line"))
        .collect();
    let ids: Vec<&str> = handed.iter().map(|line| line.id.as_str()).collect();
    assert_eq!(ids, ["c", "d", "e"]);
    assert!(
        ended[1..].iter().all(
            |e| matches!(e, Event::Line { line, .. } if matches!(line.json, Json::WithOthers))
        )
    );
    let after = std::fs::read_to_string(&path).expect("the file");
    assert_eq!(
        after, written,
        "nothing more written while the file was busy"
    );

    // A lane polled again soon holds its lines while the file is busy, and appends them with
    // its next poll's, in order, in one write.
    let mut ended = events(&["f", "g"]);
    let held = std::thread::scope(|s| {
        let busy = file.state();
        let held = s
            .spawn(|| poll_holding(&mut ended, Vec::new(), true))
            .join()
            .expect("the poll");
        drop(busy);
        held
    })
    .expect("the lines held");
    assert!(
        ended
            .iter()
            .all(|e| matches!(e, Event::Line { line, .. } if matches!(line.json, Json::InFile)))
    );
    assert_eq!(std::fs::read_to_string(&path).expect("the file"), written);
    ended.extend(events(&["h"]));
    let mut appending = Appending::new(Some(&file), held);
    for event in &mut ended[2..] {
        appending.write_out(event);
    }
    assert!(matches!(
        appending.finish(&mut ended, true),
        Sent::Out(Some(_))
    ));
    let ids: Vec<String> = std::fs::read_to_string(&path)
        .expect("the file")
        .lines()
        .map(|raw| serde_json::from_str::<Line>(raw).expect("a line").id)
        .collect();
    assert_eq!(ids, ["a", "b", "f", "g", "h"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Lines only to count wake the awaiting task once the outbox holds [`UNTOLD_LINES`] or
/// its first waited [`UNTOLD_FOR`]; anything else wakes it at once; and it is woken once
/// for what the outbox holds until it takes it.
#[test]
fn lines_only_to_count_wake_the_awaiting_task_in_bulk() {
    let running = Running::new(4, Scope::current(), None);
    let shared = &running.shared;
    let woken = || shared.notify.notified().now_or_never().is_some();
    let lines = |n: usize| -> Vec<Event> {
        (0..n)
            .map(|i| Event::Line {
                line: Finished {
                    json: Json::InFile,
                    ..failed(&i.to_string(), 1, "x")
                },
                spent: None,
            })
            .collect()
    };
    shared.hand_over(&mut lines(10), true);
    assert!(!woken(), "ten lines to count wait");
    shared.hand_over(&mut lines(UNTOLD_LINES - 20), true);
    assert!(!woken(), "fewer than UNTOLD_LINES wait");
    shared.hand_over(&mut lines(10), true);
    assert!(woken(), "UNTOLD_LINES wake it");
    shared.hand_over(&mut lines(10), false);
    assert!(!woken(), "woken already, and not yet taken");
    assert_eq!(lock(&shared.events).events.len(), UNTOLD_LINES + 10);

    // Taken: the next lines wait again, until the first has waited long enough.
    lock(&shared.events).events.clear();
    shared.hand_over(&mut lines(1), true);
    assert!(!woken());
    std::thread::sleep(UNTOLD_FOR + std::time::Duration::from_millis(5));
    shared.hand_over(&mut lines(1), true);
    assert!(woken(), "the first line waited UNTOLD_FOR");

    // What is not only to count wakes it at once.
    lock(&shared.events).events.clear();
    shared.hand_over(&mut lines(1), false);
    assert!(woken());
}

/// A line a lane appended to the file is told to the awaiting task when the lane goes on
/// to wait on its other gradings, however long they take: it is not left uncounted
/// until the lane's next poll.
#[test]
fn a_line_in_the_file_is_told_while_its_lane_waits_on_slow_gradings() {
    let (dir, path, file) = scratch_file("untold");
    let file = Arc::new(file);
    runtime(1).block_on(async {
        let mut running = Running::with_source(
            2,
            Scope::current(),
            Some(file),
            // The first ends at once, the rest never (a judge that does not answer).
            Some(Box::new(Numbered {
                next: std::sync::Mutex::new(0),
                count: usize::MAX,
                grade: |i: usize| async move {
                    if i > 0 {
                        std::future::pending::<()>().await;
                    }
                    failed(&format!("s{i}"), 1, "x")
                },
            })),
        );
        running.start();
        let first =
            tokio::time::timeout(std::time::Duration::from_secs(5), running.next(false)).await;
        assert!(
            matches!(first, Ok(Some(ref line)) if matches!(line.json, Json::InFile)),
            "the line of s0 was not counted"
        );
        let lines = std::fs::read_to_string(&path).expect("the file");
        assert_eq!(lines.lines().count(), 1, "{lines}");
        drop(running.cancel().await);
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// A lane that panics outside its gradings gives each grading it left a panicked line,
/// keeps the line of one that ended before, gives its slots back and leaves none in
/// flight.
#[test]
fn a_lane_panicking_fails_only_the_gradings_it_left() {
    runtime(1).block_on(async {
        let mut running = Running::new(6, Scope::current(), None);
        assert_eq!((running.lanes, running.shared.take), (2, 3));
        running.spawn(Arc::from("done"), 1, async { failed("done", 1, "first") });
        running.spawn(Arc::from("left"), 2, std::future::pending());
        running.spawn(Arc::from("boom"), 1, async {
            tokio::task::yield_now().await;
            panic!("outside any grading's catch")
        });
        running.start();
        let mut lines = Vec::new();
        while let Some(line) = running.next(false).await {
            lines.push(line);
        }
        let mut ended: Vec<(String, ErrorKind)> = parsed(&lines)
            .into_iter()
            .map(|line| {
                (
                    format!("{}/{}", line.id, line.epoch),
                    line.error.expect("an error").kind,
                )
            })
            .collect();
        ended.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            ended,
            [
                ("boom/1".to_owned(), ErrorKind::Panicked),
                ("done/1".to_owned(), ErrorKind::Failed),
                ("left/2".to_owned(), ErrorKind::Panicked),
            ]
        );
        assert_eq!(running.cancelled, 0);
        assert!(running.is_empty());
        let queue = lock(&running.shared.queue);
        assert_eq!((queue.running, queue.made.len()), (0, 0));
    });
}

/// A lane that panics is replaced: what waits in the queue still runs.
#[test]
fn a_lane_that_panicked_is_replaced_and_the_queue_still_runs() {
    runtime(1).block_on(async {
        // One slot, so one lane, which takes one grading at a time.
        let mut running = Running::new(1, Scope::current(), None);
        running.spawn(Arc::from("boom"), 1, async {
            panic!("outside any grading's catch")
        });
        running.spawn(Arc::from("after"), 1, async { failed("after", 1, "ran") });
        running.start();
        let lines = every_line(&mut running, "the queued grading ran after the panic").await;
        let ended: Vec<(String, ErrorKind)> = parsed(&lines)
            .into_iter()
            .map(|line| (line.id, line.error.expect("an error").kind))
            .collect();
        assert_eq!(
            ended,
            [
                ("boom".to_owned(), ErrorKind::Panicked),
                ("after".to_owned(), ErrorKind::Failed),
            ]
        );
        assert!(running.is_empty());
    });
}

/// Cancelling keeps the lines of gradings that finished but were not yet taken, and gives
/// none to those it cancels, running or queued (a resumed run grades them).
#[test]
fn cancel_keeps_what_finished_and_drops_the_rest() {
    runtime(2).block_on(async {
        // One slot: the third grading waits in the queue behind the slow one.
        let mut running = Running::new(1, Scope::current(), None);
        let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
        running.spawn(Arc::from("fast"), 1, async move {
            let line = failed("fast", 1, "quick");
            let _ = done_tx.send(());
            line
        });
        running.spawn(Arc::from("slow"), 1, async {
            std::future::pending::<()>().await;
            failed("slow", 1, "never")
        });
        running.spawn(Arc::from("queued"), 1, async {
            failed("queued", 1, "never")
        });
        running.start();
        done_rx.await.expect("the fast grading ran");
        // Let the fast grading's lane hand it over and start the slow one.
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert_eq!(lock(&running.shared.queue).running, 1);
        let finished = running.cancel().await;
        assert_eq!(finished.len(), 1);
        assert_eq!(parsed(&finished)[0].id, "fast");
        assert!(finished[0].errored);
        // The slow one was running; the queued one never started.
        assert_eq!((running.cancelled, running.unstarted), (1, 1));
        assert!(running.is_empty());
    });
}

/// A concurrency as large as a `usize` holds is taken as it is: no count overflows.
#[test]
fn the_largest_concurrency_overflows_nothing() {
    runtime(2).block_on(async {
        let mut running = Running::new(usize::MAX, Scope::current(), None);
        assert_eq!(running.room(), AHEAD);
        for i in 0..40_u32 {
            running.spawn(Arc::from(format!("s{i}")), 1, async move {
                failed(&format!("s{i}"), 1, "done")
            });
        }
        running.start();
        let mut lines = Vec::new();
        while let Some(line) = running.next(false).await {
            lines.push(line);
        }
        assert_eq!(parsed(&lines).len(), 40);
        assert!(running.is_empty());
    });
}

/// Gradings that compute for milliseconds without awaiting do not keep a worker from its
/// other tasks and its timers (a command's output, a judge's reply) until the queue is
/// empty: a lane yields to them once the gradings that ended in a poll took [`SLICE`], so
/// a task of the one worker sleeping a millisecond at a time wakes while they run. (It
/// counts wake-ups, not time. Before the slice, one lane ran every grading in one poll, and
/// the sleeping task saw none of them end; with the lane waking itself instead of yielding
/// as `tokio::task::yield_now` does, the worker saw to its timers only every 61 tasks.)
#[test]
fn a_lane_lets_its_workers_other_tasks_run_between_long_gradings() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    const GRADINGS: usize = 32;
    runtime(1).block_on(async {
        let ended = Arc::new(AtomicUsize::new(0));
        // Another task of the worker, which sleeps a millisecond at a time and notes how
        // many gradings had ended at each wake-up, until all have.
        let other = tokio::spawn({
            let ended = Arc::clone(&ended);
            async move {
                let mut seen = std::collections::BTreeSet::new();
                loop {
                    let now = ended.load(SeqCst);
                    if now == GRADINGS {
                        return seen;
                    }
                    seen.insert(now);
                    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                }
            }
        });
        let mut running = Running::new(8, Scope::current(), None);
        for i in 0..GRADINGS {
            let ended = Arc::clone(&ended);
            running.spawn(Arc::from(format!("s{i}")), 1, async move {
                let started = Instant::now();
                while started.elapsed() < std::time::Duration::from_millis(2) {
                    std::hint::spin_loop();
                }
                ended.fetch_add(1, SeqCst);
                // Timed as a run times its gradings (which end at their first poll here).
                let id = format!("s{i}");
                let took = started.elapsed().as_secs_f64();
                Finished {
                    last_poll: took,
                    ..Finished::from(Line::failed(&id, 1, ErrorKind::Failed, "done", took))
                }
            });
        }
        running.start();
        let mut lines = Vec::new();
        while let Some(line) = running.next(false).await {
            lines.push(line);
        }
        assert_eq!(parsed(&lines).len(), GRADINGS);
        let seen = other.await.expect("the other task");
        // The counts of gradings ended that the other task saw, strictly between none and all.
        let between = seen.range(1..GRADINGS).count();
        assert!(
            between >= GRADINGS / 4,
            "the worker's sleeping task saw {between} of the {GRADINGS} gradings' ends: {seen:?}"
        );
    });
}

/// However many lanes there are, no more gradings run at once than the concurrency, and
/// every grading gets its line.
#[test]
fn lanes_never_run_more_than_the_concurrency() {
    runtime(2).block_on(async {
        let now = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let most = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut running = Running::new(3, Scope::current(), None);
        for i in 0..40_u32 {
            let (now, most) = (Arc::clone(&now), Arc::clone(&most));
            running.spawn(Arc::from(format!("s{i}")), 1, async move {
                use std::sync::atomic::Ordering::SeqCst;
                let at_once = now.fetch_add(1, SeqCst) + 1;
                most.fetch_max(at_once, SeqCst);
                // Some end at once, others wait on the timer.
                if i % 3 != 0 {
                    tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                }
                now.fetch_sub(1, SeqCst);
                failed(&format!("s{i}"), 1, "done")
            });
        }
        running.start();
        let lines = every_line(&mut running, "the run ended").await;
        assert_eq!(distinct_ids(&lines), 40);
        assert_eq!(most.load(std::sync::atomic::Ordering::SeqCst), 3);
        assert!(running.is_empty());
    });
}

/// `count` samples numbered from 0, each graded by `grade(i)`.
struct Numbered<G> {
    next: std::sync::Mutex<usize>,
    count: usize,
    grade: G,
}

impl<G, F> Source for Numbered<G>
where
    G: Fn(usize) -> F + Send + Sync + 'static,
    F: std::future::Future<Output = Finished> + Send + 'static,
{
    fn make(&self, n: usize, into: &mut Vec<Made>, tally: &Tally) -> (usize, bool) {
        let range = {
            let mut next = lock(&self.next);
            let start = *next;
            *next = (start + n).min(self.count);
            tally.taken(*next - start);
            start..*next
        };
        let made = range.len();
        for i in range.clone() {
            into.push(Made {
                id: Arc::from(format!("s{i}")),
                epoch: 1,
                grading: Box::pin((self.grade)(i)),
            });
        }
        (made, range.end == self.count)
    }

    fn take_panic(&self) -> Option<Box<dyn std::any::Any + Send>> {
        None
    }

    fn counts(&self) -> (usize, usize) {
        (0, 0)
    }
}

/// Lanes that make their own gradings own the run's slots between them: no more run at once
/// than the concurrency, however many end at once and however many wait, and every grading
/// gets its line.
#[test]
fn lanes_with_a_source_never_run_more_than_the_concurrency() {
    for (workers, concurrency) in [(2, 3), (2, 1), (3, 7), (1, 64)] {
        runtime(workers).block_on(async {
            let now = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let most = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let (now2, most2) = (Arc::clone(&now), Arc::clone(&most));
            let source = Numbered {
                next: std::sync::Mutex::new(0),
                count: 200,
                grade: move |i: usize| {
                    let (now, most) = (Arc::clone(&now2), Arc::clone(&most2));
                    async move {
                        use std::sync::atomic::Ordering::SeqCst;
                        let at_once = now.fetch_add(1, SeqCst) + 1;
                        most.fetch_max(at_once, SeqCst);
                        if i.is_multiple_of(5) {
                            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                        }
                        now.fetch_sub(1, SeqCst);
                        failed(&format!("s{i}"), 1, "done")
                    }
                },
            };
            let mut running =
                Running::with_source(concurrency, Scope::current(), None, Some(Box::new(source)));
            running.start();
            let lines = every_line(&mut running, "the run ended").await;
            assert_eq!(
                distinct_ids(&lines),
                200,
                "{workers} workers, concurrency {concurrency}"
            );
            let most = most.load(std::sync::atomic::Ordering::SeqCst);
            assert!(
                most <= concurrency,
                "{most} ran at once with concurrency {concurrency}"
            );
            assert!(running.is_empty());
        });
    }
}

/// A lane that made gradings ahead of its slots while its gradings ended at once, and then
/// waits on one, hands the rest back for another lane to run: here the grading it waits on
/// ends only once every other grading has started, which none would if the lane kept them.
#[test]
fn a_lane_waiting_on_a_grading_hands_back_the_gradings_it_made_ahead() {
    runtime(2).block_on(async {
        const COUNT: usize = 10;
        let started = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let all_started = Arc::new(tokio::sync::Notify::new());
        let (started2, all2) = (Arc::clone(&started), Arc::clone(&all_started));
        let source = Numbered {
            next: std::sync::Mutex::new(0),
            count: COUNT,
            grade: move |i: usize| {
                let (started, all) = (Arc::clone(&started2), Arc::clone(&all2));
                async move {
                    let waiting = all.notified();
                    if started.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 == COUNT {
                        all.notify_one();
                    }
                    if i == 0 {
                        waiting.await;
                    }
                    failed(&format!("s{i}"), 1, "done")
                }
            },
        };
        // Two lanes of one slot each: the first makes all ten gradings at once.
        let mut running = Running::with_source(2, Scope::current(), None, Some(Box::new(source)));
        running.start();
        let lines = every_line(
            &mut running,
            "the gradings made ahead of a waiting one were left unstarted",
        )
        .await;
        assert_eq!(parsed(&lines).len(), COUNT);
    });
}

/// Cancelled while gradings a lane made ahead wait in the queue (handed back when the lane's
/// grading went on to wait), before the awaiting task heard they were made: each grading made
/// is accounted for once (its line, cancelled, or never started), and none is counted twice
/// or taken from a count that never held it.
#[test]
fn cancel_counts_gradings_handed_back_before_the_awaiting_task_heard_of_them() {
    const INSTANT: usize = 40;
    runtime(1).block_on(async {
        let made = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = Arc::clone(&made);
        let source = Numbered {
            next: std::sync::Mutex::new(0),
            count: 1_000,
            grade: move |i: usize| {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async move {
                    if i >= INSTANT {
                        std::future::pending::<()>().await;
                    }
                    failed(&format!("s{i}"), 1, "done")
                }
            },
        };
        // One lane of one slot: the first gradings end at once, so the lane makes batches
        // ahead of its slot; the first that waits holds the slot, and the rest of its batch is
        // handed back to the queue.
        let mut running = Running::with_source(1, Scope::current(), None, Some(Box::new(source)));
        running.start();
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let lines = running.cancel().await;
        let made = made.load(std::sync::atomic::Ordering::SeqCst);
        assert!(made > INSTANT + 1, "the lane made gradings ahead: {made}");
        assert_eq!(parsed(&lines).len(), INSTANT);
        assert_eq!(running.cancelled, 1, "the grading that waits");
        assert_eq!(
            running.unstarted,
            made - INSTANT - 1,
            "those made ahead of it"
        );
    });
}

/// Lines a lane held back while another thread was writing the file are written when the
/// run is cancelled (waiting for the file if need be) and counted as lines, not lost to the
/// cancelled count.
#[test]
fn lines_held_for_a_busy_file_are_written_when_the_run_is_cancelled() {
    let (dir, path, file) = scratch_file("held");
    let file = Arc::new(file);
    // Another writer holds the file for the first 400 ms.
    let (locked, is_locked) = std::sync::mpsc::channel();
    let writer = {
        let file = Arc::clone(&file);
        std::thread::spawn(move || {
            let busy = file.state();
            locked.send(()).expect("the test waits");
            std::thread::sleep(std::time::Duration::from_millis(400));
            drop(busy);
        })
    };
    is_locked.recv().expect("the writer holds the file");
    let (lines, cancelled) = runtime(1).block_on(async {
        let source = Numbered {
            next: std::sync::Mutex::new(0),
            count: usize::MAX,
            grade: |i: usize| async move { failed(&format!("s{i}"), 1, "done") },
        };
        let mut running = Running::with_source(
            4,
            Scope::current(),
            Some(Arc::clone(&file)),
            Some(Box::new(source)),
        );
        running.start();
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
        let lines = running.cancel().await;
        (lines, running.cancelled)
    });
    writer.join().expect("the writer");
    let in_file = lines
        .iter()
        .filter(|line| matches!(line.json, Json::InFile))
        .count();
    let written = std::fs::read_to_string(&path).expect("the file");
    let ids: std::collections::BTreeSet<String> = written
        .lines()
        .map(|raw| serde_json::from_str::<Line>(raw).expect("a line").id)
        .collect();
    assert!(in_file > 0, "some lines were held, then written");
    assert_eq!(
        written.lines().count(),
        in_file,
        "each line in the file is counted"
    );
    assert_eq!(ids.len(), in_file, "once");
    // Only gradings started and not yet polled (at most the concurrency) are cancelled; a
    // held line would count here were it dropped.
    assert!(cancelled <= 4, "{cancelled} cancelled");
    let _ = std::fs::remove_dir_all(&dir);
}
