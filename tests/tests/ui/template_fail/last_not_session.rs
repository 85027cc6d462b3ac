use grader_env::{Session, template};

#[template]
async fn echo(session: Session, word: String) -> f64 {
    let _ = (word, session);
    1.0
}

fn main() {}
