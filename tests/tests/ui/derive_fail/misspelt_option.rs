use grader_core::Grader;

#[derive(Grader)]
#[grader(scor = check)]
struct Exact {
    answer: String,
}

impl Exact {
    fn check(&self) -> bool {
        !self.answer.is_empty()
    }
}

fn main() {
    let _ = Exact { answer: "a".into() }.name();
}
