use grader_core::Grader;

#[derive(Grader)]
#[grader(score = chek)]
struct Exact {
    answer: String,
    expected: String,
}

impl Exact {
    fn check(&self) -> bool {
        self.answer == self.expected
    }
}

fn main() {}
