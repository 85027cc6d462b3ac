use grader_core::grader;

#[grader]
fn mentions(answer: &str, expected: &str) -> bool {
    answer.contains(expected)
}

fn main() {
    let _ = Mentions { answer: "Paris", expcted: "Paris" }.grade(1.0);
}
