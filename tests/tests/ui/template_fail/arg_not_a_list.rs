use grader_env::{Session, template};

#[template]
async fn echo(#[arg] word: String, #[arg = "times"] times: u32, session: Session) -> f64 {
    let _ = (word, times, session);
    1.0
}

fn main() {}
