//! One shard of an evaluation, picked from the environment as a scheduler sets it, for
//! `tests/eval_shards.rs`: `shard-probe DIR` reads [`Shard::from_env`], grades 300 samples × 2
//! epochs of its shard into `DIR/part-I-of-N.jsonl`, and prints `I/N WRITTEN resumed R other
//! O`. A shard that
//! cannot be read is printed on stderr and exits 2, writing nothing.

use std::process::ExitCode;

use grader_core::{Grade, SubScore};
use grader_eval::{Evaluation, Shard};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: shard-probe DIR");
        return ExitCode::from(2);
    };
    let shard = match Shard::from_env() {
        Ok(shard) => shard,
        Err(error) => {
            eprintln!("shard-probe: {error}");
            return ExitCode::from(2);
        }
    };
    let output = std::path::Path::new(&dir).join(format!(
        "part-{}-of-{}.jsonl",
        shard.index(),
        shard.count()
    ));
    let samples = (0..300_usize).map(|i| (format!("s{i}"), i));
    let report = Evaluation::new(&output)
        .epochs(2)
        .shard(shard)
        .handle_interrupts(false)
        .progress(false)
        .run(samples, |sample, epoch| async move {
            let value = ((sample.1 * 7 + epoch as usize) % 5) as f64 / 4.0;
            let sub = SubScore::new("check", value).map_err(|e| e.to_string())?;
            Grade::from_subscores([sub]).map_err(|e| e.to_string())
        })
        .await;
    match report {
        Ok(report) => {
            println!(
                "{}/{} {} resumed {} other {}",
                shard.index(),
                shard.count(),
                report.written,
                report.resumed,
                report.other_shards
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("shard-probe: {error}");
            ExitCode::from(1)
        }
    }
}
