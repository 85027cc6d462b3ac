use grader_core::Grader;

#[derive(Grader)]
#[grader(score = check)]
struct Exact {
    #[grader(name = "reply")]
    answer: String,
    #[grader(hide)]
    secret: String,
}

impl Exact {
    fn check(&self) -> bool {
        self.answer != self.secret
    }
}

fn main() {}
