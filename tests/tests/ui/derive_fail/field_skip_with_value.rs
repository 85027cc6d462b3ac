use grader_core::Grader;

#[derive(Grader)]
#[grader(score = check)]
struct Exact {
    answer: String,
    #[grader(skip = true)]
    secret: String,
}

impl Exact {
    fn check(&self) -> bool {
        self.answer != self.secret
    }
}

fn main() {}
