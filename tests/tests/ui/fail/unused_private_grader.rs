#![deny(dead_code)]

use grader_core::grader;

// A private grader nobody uses is reported once, on the function's name.
#[grader]
fn never_called(answer: &str) -> bool {
    answer.is_empty()
}

fn main() {}
