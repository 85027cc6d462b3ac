use grader_core::Grader;

#[derive(Grader)]
#[grader(score = check)]
enum Verdict {
    Pass,
    Fail,
}

impl Verdict {
    fn check(&self) -> bool {
        matches!(self, Verdict::Pass)
    }
}

fn main() {
    let _ = Verdict::Pass.name();
}
