use grader_core::Grader;

#[derive(Grader)]
#[grader(score = check)]
struct Exact {
    answer: String,
}

impl Exact {
    fn check(&self, expected: &str) -> bool {
        self.answer == expected
    }
}

fn main() {}
