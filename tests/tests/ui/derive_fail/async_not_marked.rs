use grader_core::Grader;

#[derive(Grader)]
#[grader(score = check)]
struct Replied {
    answer: String,
}

impl Replied {
    async fn check(&self) -> bool {
        !self.answer.is_empty()
    }
}

fn main() {}
