//! The frame reader under arbitrary input: it never panics, never hands out a frame over the
//! limit, and never holds more than the limit plus one read buffer, however the bytes arrive.
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use grader_env::frame::{FrameError, FrameReader};
use proptest::prelude::*;
use tokio::io::{AsyncRead, ReadBuf};

/// Serves `data` in chunks of the given sizes (cycled), counting what was read.
struct Chunked {
    data: Vec<u8>,
    at: usize,
    sizes: Vec<usize>,
    turn: usize,
    read: Arc<AtomicUsize>,
}

impl AsyncRead for Chunked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let size = self.sizes[self.turn % self.sizes.len()].max(1);
        self.turn += 1;
        let end = (self.at + size)
            .min(self.data.len())
            .min(self.at + buf.remaining());
        let start = self.at;
        buf.put_slice(&self.data[start..end]);
        self.read.fetch_add(end - start, Ordering::Relaxed);
        self.at = end;
        Poll::Ready(Ok(()))
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn any_bytes_in_any_chunks(
        data in proptest::collection::vec(
            prop_oneof![Just(b'\n'), Just(b'{'), Just(b'}'), Just(b'"'), any::<u8>()], 0..600),
        sizes in proptest::collection::vec(1usize..70, 1..6),
        limit in 1usize..80,
    ) {
        let read = Arc::new(AtomicUsize::new(0));
        let source = Chunked { data: data.clone(), at: 0, sizes, turn: 0, read };
        let mut reader = FrameReader::new(source, limit);
        let mut lines = Vec::new();
        runtime().block_on(async {
            loop {
                match reader.read_line().await {
                    Ok(Some(line)) => lines.push(line),
                    Ok(None) => break,
                    Err(FrameError::TooLarge(message)) => {
                        assert!(message.starts_with("Control-channel frame "));
                        return;
                    }
                    Err(other) => panic!("unexpected: {other}"),
                }
            }
            // Without an oversize frame, the lines are exactly the input, each within the limit.
            assert_eq!(lines.concat(), data);
            for line in &lines {
                let body = line.strip_suffix(b"\n").unwrap_or(line);
                assert!(body.len() <= limit);
                assert!(!body.contains(&b'\n'));
            }
        });
    }

    #[test]
    fn parsing_never_panics(data in proptest::collection::vec(any::<u8>(), 0..300)) {
        let read = Arc::new(AtomicUsize::new(0));
        let source = Chunked { data, at: 0, sizes: vec![7, 64], turn: 0, read };
        let mut reader = FrameReader::new(source, 1024);
        runtime().block_on(async {
            for _ in 0..400 {
                match reader.read_frame().await {
                    Ok(None) | Err(FrameError::TooLarge(_)) => break,
                    Ok(Some(_)) | Err(_) => {}
                }
            }
        });
    }
}

#[test]
fn an_endless_line_is_refused_after_the_limit_plus_one_buffer() {
    let limit = 1 << 20;
    let read = Arc::new(AtomicUsize::new(0));
    let source = Chunked {
        data: vec![b'a'; 64 << 20],
        at: 0,
        sizes: vec![1 << 16],
        turn: 0,
        read: Arc::clone(&read),
    };
    let mut reader = FrameReader::new(source, limit);
    let error = runtime().block_on(reader.read_line()).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("Control-channel frame exceeds the limit of 1048576 bytes"),
        "{error}"
    );
    // It stopped reading (and buffering) just past the limit, not at the end of the input.
    assert!(read.load(Ordering::Relaxed) <= limit + (64 << 10));
}
