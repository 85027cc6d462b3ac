use grader_core::{Gather, SubScore};

async fn run() {
    // A hand-made future is not a grading: the gather cannot name it or weigh it.
    let _ = Gather::new()
        .add(SubScore::new("format", 1.0).unwrap())
        .add(async { SubScore::new("tests", 1.0) })
        .await;
}

fn main() {
    let _ = run();
}
