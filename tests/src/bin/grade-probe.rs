//! One `BashGrader` grade, for the one-shot probes of the side-by-side benchmark
//! (`benches/compare/run.py`): `grade-probe COMMAND TIMEOUT_SECONDS` runs the command, then
//! prints how long the grade took and its value as JSON. Run under `/usr/bin/time -v`, it
//! shows the peak memory of a grade.

use std::time::{Duration, Instant};

use grader_core::BashGrader;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(command), Some(timeout)) = (args.next(), args.next()) else {
        return Err("usage: grade-probe COMMAND TIMEOUT_SECONDS".into());
    };
    let timeout = Duration::try_from_secs_f64(timeout.parse()?)?;
    let start = Instant::now();
    let sub = BashGrader::new(command)
        .timeout(timeout)
        .grade_blocking(1.0)?;
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::json!({ "seconds": seconds, "value": sub.value() })
    );
    Ok(())
}
