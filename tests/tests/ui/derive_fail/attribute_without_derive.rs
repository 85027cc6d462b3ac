use grader_core::grader;

#[grader(score = check)]
struct Exact {
    answer: String,
}

impl Exact {
    fn check(&self) -> bool {
        !self.answer.is_empty()
    }
}

fn main() {}
