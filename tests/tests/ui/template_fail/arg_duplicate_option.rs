use grader_env::{Session, template};

#[template]
async fn echo(
    #[arg(default = 1)]
    #[arg(default = 2)]
    times: u32,
    session: Session,
) -> f64 {
    let _ = (times, session);
    1.0
}

fn main() {}
