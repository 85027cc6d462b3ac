use grader_env::{Session, template};

struct Env;

impl Env {
    #[template]
    async fn echo(&self, session: Session) -> f64 {
        let _ = session;
        1.0
    }
}

fn main() {}
