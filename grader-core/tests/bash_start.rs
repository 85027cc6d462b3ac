//! Commands start on threads of the library's own, off the executor: a grade still finishes
//! when it is awaited from the last free thread of tokio's blocking pool, and gradings polled
//! once and then left do not hold up other grades.
#![cfg(all(target_os = "linux", feature = "bash"))]
#![allow(clippy::unwrap_used)]

mod bash_support;

use std::sync::mpsc;
use std::time::Duration;

use bash_support::{bash, marker, survivors_after};

/// Runs `f` on its own thread; `None` if it did not return within `bound`.
fn within<T: Send + 'static>(bound: Duration, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(bound).ok()
}

/// Sync code calling async code from a blocking task (`Handle::block_on` inside
/// `spawn_blocking`, `grade_blocking` being refused inside a runtime), on a runtime whose
/// blocking pool is full: the grade needs a blocking thread to start its command.
#[test]
fn a_grade_awaited_from_the_only_blocking_thread_finishes() {
    let done = within(Duration::from_secs(15), || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .max_blocking_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let handle = runtime.handle().clone();
        let result = runtime.block_on(async move {
            tokio::task::spawn_blocking(move || {
                handle.block_on(bash("exit 0").timeout(Duration::from_secs(5)).grade(1.0))
            })
            .await
        });
        std::mem::forget(runtime); // a hung blocking thread would block the drop
        result.map(|r| r.map(|s| s.value()).ok())
    });
    assert!(
        done.is_some(),
        "the grade hung for 15 s (a 5 s timeout command `exit 0`)"
    );
}

/// Gradings polled once and then kept without being polled (a `select!` whose other branch
/// keeps winning, a FuturesUnordered no longer driven) hold the process-wide start permits:
/// an unrelated grade, on another runtime and thread, must still run.
#[test]
fn gradings_left_unpolled_do_not_block_other_runtimes() {
    let mark = marker();
    let m = mark.clone();
    let (park_tx, park_rx) = mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut futures: Vec<_> = (0..4)
            .map(|_| {
                Box::pin(
                    bash(&format!("sleep 30.{m}"))
                        .timeout(Duration::from_secs(30))
                        .grade(1.0),
                )
            })
            .collect();
        runtime.block_on(async {
            for f in &mut futures {
                // One poll: the grading takes its permit and hands the start to the pool.
                tokio::select! {
                    biased;
                    _ = f => {}
                    () = std::future::ready(()) => {}
                }
            }
        });
        // Kept alive, not polled, until told.
        let _ = park_rx.recv_timeout(Duration::from_secs(30));
        drop(futures);
    });
    std::thread::sleep(Duration::from_millis(300));
    let other = within(Duration::from_secs(10), || {
        bash("exit 0")
            .timeout(Duration::from_secs(5))
            .grade_blocking(1.0)
            .map(|s| s.value())
            .ok()
    });
    let _ = park_tx.send(());
    holder.join().unwrap();
    let _ = survivors_after(&mark, Duration::from_secs(3));
    assert!(other.is_some(), "an unrelated `exit 0` grade hung for 10 s");
}
