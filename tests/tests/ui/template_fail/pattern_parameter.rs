use grader_env::{Session, template};

#[template]
async fn echo((a, b): (String, String), session: Session) -> f64 {
    let _ = (a, b, session);
    1.0
}

fn main() {}
