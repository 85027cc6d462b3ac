use grader_core::grader;

#[grader]
fn long_enough(ref answer: String) -> bool {
    answer.len() > 3
}

fn main() {}
