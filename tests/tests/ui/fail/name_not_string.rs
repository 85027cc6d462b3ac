use grader_core::grader;

#[grader(name = check_name)]
fn check(answer: &str) -> bool {
    answer.is_empty()
}

fn main() {
    let _ = Check { answer: "x" }.grade(1.0);
}
