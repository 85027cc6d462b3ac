use grader_env::{Session, template};

#[template(id = echo)]
async fn echo(word: String, session: Session) -> f64 {
    let _ = (word, session);
    1.0
}

fn main() {}
