use grader_core::grader;

#[grader(type = Option)]
fn maybe(answer: &str) -> bool {
    answer == "42"
}

fn main() {}
