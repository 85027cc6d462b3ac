use grader_core::grader;

#[grader]
fn mentions(answer: &str, expected: &str) -> bool {
    answer.contains(expected)
}

fn main() {
    let _ = Mentions { answer: "Paris", expected: "Paris", case_sensitive: true }.grade(1.0);
}
