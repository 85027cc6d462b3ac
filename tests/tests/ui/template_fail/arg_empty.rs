use grader_env::{Session, template};

#[template]
async fn echo(#[arg()] word: String, session: Session) -> f64 {
    let _ = (word, session);
    1.0
}

fn main() {}
