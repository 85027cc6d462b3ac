use grader_env::{Session, template};

#[template]
async fn echo(word: String, #[arg(description = "The session")] session: Session) -> f64 {
    let _ = (word, session);
    1.0
}

fn main() {}
