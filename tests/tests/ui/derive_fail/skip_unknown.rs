use grader_core::Grader;

#[derive(Grader)]
#[grader(score = check, skip(api_kye))]
struct Answered {
    api_key: String,
    answer: String,
}

impl Answered {
    fn check(&self) -> bool {
        !self.api_key.is_empty() && !self.answer.is_empty()
    }
}

fn main() {}
