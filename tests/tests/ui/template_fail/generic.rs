use grader_env::{Session, template};

#[template]
async fn echo<T: Default>(word: String, session: Session) -> f64 {
    let _ = (word, session, T::default());
    1.0
}

fn main() {}
