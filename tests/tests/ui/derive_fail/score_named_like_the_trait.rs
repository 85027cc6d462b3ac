use grader_core::Grader;

#[derive(Grader)]
#[grader(score = score)]
struct Exact {
    answer: String,
}

impl Exact {
    fn score(&self) -> bool {
        !self.answer.is_empty()
    }
}

fn main() {}
