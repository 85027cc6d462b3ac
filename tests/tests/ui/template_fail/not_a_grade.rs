use grader_env::{Session, template};

#[template]
async fn echo(word: String, session: Session) -> String {
    let _ = session;
    word
}

fn main() {}
