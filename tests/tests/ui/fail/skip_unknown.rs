use grader_core::grader;

#[grader(skip(token))]
fn check(answer: &str, api_key: &str) -> bool {
    answer.len() > api_key.len()
}

fn main() {
    let _ = Check { answer: "x", api_key: "k" }.grade(1.0);
}
