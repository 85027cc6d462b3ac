use grader_core::{Grader, grader};

#[grader(score = check)]
#[derive(Grader)]
struct Exact {
    answer: String,
}

impl Exact {
    fn check(&self) -> bool {
        !self.answer.is_empty()
    }
}

fn main() {}
