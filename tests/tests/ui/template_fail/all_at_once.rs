use grader_env::{Session, template};

#[template(id = "", colour = "red")]
fn echo<T>(word: &str, (a, b): (u8, u8), session: Session, extra: T) -> f64 {
    let _ = (word, a, b, session, extra);
    1.0
}

fn main() {
    // The stub type keeps this line free of follow-on errors.
    let _ = Echo::template();
}
