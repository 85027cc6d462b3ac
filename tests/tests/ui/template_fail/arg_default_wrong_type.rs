use grader_env::{Session, template};

#[template]
async fn echo(#[arg(default = "sixty")] timeout: u64, session: Session) -> f64 {
    let _ = (timeout, session);
    1.0
}

fn main() {}
