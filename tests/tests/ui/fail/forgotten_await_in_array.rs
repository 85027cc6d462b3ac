use grader_core::{BashGrader, Grade, SubScore, grader};

#[grader]
fn quick(answer: &str) -> bool {
    answer.is_empty()
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    // The command's grading is still to run: awaited, it is a `SubScore` like its sibling.
    let subscores: [SubScore; 2] = [
        Quick { answer: "" }.grade(0.5).now()?,
        BashGrader::new("true").grade(0.5),
    ];
    let _ = Grade::from_subscores(subscores)?;
    Ok(())
}

fn main() {
    let _ = run();
}
