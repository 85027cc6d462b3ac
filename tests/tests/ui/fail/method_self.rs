use grader_core::grader;

struct Answer(String);

impl Answer {
    #[grader]
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn main() {}
