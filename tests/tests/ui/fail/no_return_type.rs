use grader_core::grader;

#[grader]
fn check(answer: &str) {
    let _ = answer;
}

fn main() {
    let _ = Check { answer: "x" }.grade(1.0);
}
