use grader_env::{Session, template};

#[template]
async fn echo(#[arg(default =)] times: u32, session: Session) -> f64 {
    let _ = (times, session);
    1.0
}

fn main() {}
