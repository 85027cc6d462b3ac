use grader_core::Grader;

#[derive(Grader)]
#[grader(score = async check)]
struct Replied {
    answer: String,
}

impl Replied {
    fn check(&self) -> bool {
        !self.answer.is_empty()
    }
}

fn main() {}
