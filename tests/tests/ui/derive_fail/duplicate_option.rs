use grader_core::Grader;

#[derive(Grader)]
#[grader(score = check, name = "exact")]
#[grader(name = "exact_again")]
struct Exact {
    answer: String,
}

impl Exact {
    fn check(&self) -> bool {
        !self.answer.is_empty()
    }
}

fn main() {}
