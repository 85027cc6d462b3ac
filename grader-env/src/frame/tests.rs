//! The reader's buffer against its budget and its timeout, with the clock paused (tokio's test
//! clock advances only when every task waits, so no test depends on real time).
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

use std::time::Duration;

use tokio::io::AsyncWriteExt as _;

use super::{Budget, FrameError, FrameReader, SMALL_BUFFER};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

#[test]
fn the_buffer_grows_for_a_large_frame_and_shrinks_back() {
    runtime().block_on(async {
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let budget = Budget::new(1 << 20, 0);
        let mut reader = FrameReader::budgeted(server, 1 << 20, budget.clone());
        let large = format!("{{\"a\":\"{}\"}}\n", "x".repeat(100_000));
        client.write_all(large.as_bytes()).await.unwrap();
        client.write_all(b"{\"b\":1}\n").await.unwrap();
        assert_eq!(
            reader.read_frame().await.unwrap().unwrap()["a"]
                .as_str()
                .unwrap()
                .len(),
            100_000
        );
        assert!(budget.peak() >= 100_000, "{}", budget.peak());
        assert_eq!(reader.read_frame().await.unwrap().unwrap()["b"], 1);
        assert_eq!(reader.buffered(), SMALL_BUFFER);
        assert_eq!(budget.used(), SMALL_BUFFER);
        drop(reader);
        assert_eq!(budget.used(), 0);
    });
}

#[test]
fn growth_past_the_budget_is_refused() {
    runtime().block_on(async {
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let budget = Budget::new(SMALL_BUFFER + 4096, SMALL_BUFFER);
        let mut reader = FrameReader::budgeted(server, 1 << 20, budget.clone());
        client.write_all(&[b' '; 10_000]).await.unwrap();
        let error = reader.read_line().await.unwrap_err();
        assert!(
            matches!(error, FrameError::Busy { budget: 4096, .. }),
            "{error}"
        );
        assert!(budget.peak() <= SMALL_BUFFER + 4096);
    });
}

#[test]
fn a_frame_that_stops_arriving_times_out_and_waiting_between_frames_does_not() {
    runtime().block_on(async {
        let (mut client, server) = tokio::io::duplex(1024);
        let mut reader = FrameReader::new(server, 1024).frame_timeout(Duration::from_secs(30));
        client.write_all(b"{\"a\":1}\n").await.unwrap();
        assert!(reader.read_frame().await.unwrap().is_some());
        // An hour between frames is fine.
        tokio::time::sleep(Duration::from_secs(3600)).await;
        client.write_all(b"{\"a\":").await.unwrap();
        let error = reader.read_frame().await.unwrap_err();
        assert!(
            matches!(error, FrameError::TimedOut { received: 5, .. }),
            "{error}"
        );
        assert_eq!(
            error.to_string(),
            "Control-channel frame not completed within 30 s (5 bytes received); connection \
             closed."
        );
    });
}
