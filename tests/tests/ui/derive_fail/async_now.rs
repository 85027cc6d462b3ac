use grader_core::Grader;

#[derive(Grader)]
#[grader(score = async check)]
struct Replied {
    answer: String,
}

impl Replied {
    async fn check(&self) -> bool {
        !self.answer.is_empty()
    }
}

fn main() {
    // An async score method: the grading is awaited, not run with `.now()`.
    let _ = Replied { answer: "hi".into() }.grade(1.0).now();
}
