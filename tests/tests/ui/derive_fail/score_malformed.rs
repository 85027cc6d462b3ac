use grader_core::Grader;

#[derive(Grader)]
#[grader(score = "check")]
struct Exact {
    answer: String,
}

impl Exact {
    fn check(&self) -> bool {
        !self.answer.is_empty()
    }
}

fn main() {}
