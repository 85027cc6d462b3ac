use grader_core::grader;

#[grader(type = text::ExactMatchGrader)]
fn exact_match(answer: &str) -> bool {
    answer == "42"
}

fn main() {}
