use std::sync::Arc;

use grader_env::{Environment, Session, State, template};

pub struct Problems(pub Vec<String>);

#[template]
async fn solve(State(problems): State<Arc<Problems>>, session: Session) -> f64 {
    let _ = (problems.0.len(), session);
    1.0
}

fn main() {
    // No state given: the template cannot be registered.
    let _ = Environment::new("math").template(Solve::template());
    // A state of another type neither.
    let _ = Environment::new("math").with_state(7_u32).template(Solve::template());
}
