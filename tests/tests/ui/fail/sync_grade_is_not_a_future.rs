use grader_core::grader;

#[grader]
fn quick(answer: &str) -> bool {
    answer.is_empty()
}

async fn run() {
    // `.now()` grades at once and returns the result; there is nothing left to await.
    let _ = Quick { answer: "" }.grade(1.0).now().await;
}

fn main() {
    let _ = run();
}
