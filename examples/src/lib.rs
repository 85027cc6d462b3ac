//! Runnable examples: see `examples/` (`cargo run -p grader-examples --example NAME`).
