use grader_env::{Session, State, template};

#[template]
async fn described(
    /// The problems.
    State(problems): State<Vec<String>>,
    session: Session,
) -> f64 {
    let _ = (problems, session);
    1.0
}

fn main() {}
