use grader_core::grader;

#[grader]
fn quick(answer: &str) -> bool {
    answer.is_empty()
}

async fn run() {
    // A synchronous grader grades at once; there is nothing to await.
    let _ = Quick { answer: "" }.grade(1.0).await;
}

fn main() {
    let _ = run();
}
