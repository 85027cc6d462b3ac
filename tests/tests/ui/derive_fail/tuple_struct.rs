use grader_core::Grader;

#[derive(Grader)]
#[grader(score = check)]
struct Exact(String, String);

impl Exact {
    fn check(&self) -> bool {
        self.0 == self.1
    }
}

fn main() {
    let _ = Exact("a".into(), "a".into()).name();
}
