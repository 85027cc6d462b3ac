use grader_core::grader;

#[grader(name "exact")]
fn exact(answer: &str) -> bool {
    answer == "42"
}

fn main() {}
