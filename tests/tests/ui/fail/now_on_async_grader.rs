use grader_core::grader;

#[grader]
async fn fetched(answer: String) -> bool {
    !answer.is_empty()
}

fn main() {
    // An async grader cannot be graded without a runtime: the error says to await it.
    let _ = Fetched { answer: "x".into() }.grade(1.0).now();
}
