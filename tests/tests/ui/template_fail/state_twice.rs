use grader_env::{Session, State, template};

#[template]
async fn twice(State(a): State<String>, State(b): State<u32>, session: Session) -> f64 {
    let _ = (a, b, session);
    1.0
}

fn main() {}
