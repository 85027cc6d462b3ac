use grader_core::grader;

#[grader(crate = 42)]
fn exact(answer: &str) -> bool {
    answer == "42"
}

#[grader(crate = "not a path")]
fn close(answer: &str) -> bool {
    answer == "41"
}

fn main() {}
