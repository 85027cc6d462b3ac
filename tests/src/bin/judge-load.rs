//! One process's measurement for the judge's load benchmark (`benches/judge_load.rs`):
//! `judge-load BASE_URL CRITERIA LIMIT ROUNDS` judges an answer against CRITERIA criteria with
//! at most LIMIT calls at once, ROUNDS times after a small warm-up, and prints one JSON line
//! with each round's wall and CPU seconds (this process's user + system time, measured around
//! the judging only) and the process's peak resident memory in KiB.

use std::future::IntoFuture as _;
use std::time::Instant;

use grader_core::judge::{JudgeConfig, LlmJudge};

/// User + system CPU seconds of this process so far, from `/proc/self/stat`.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses and may hold spaces).
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<u64>().ok())
        .sum();
    #[allow(clippy::cast_precision_loss)] // tick counts are far below 2^53
    let seconds = ticks as f64 / 100.0; // USER_HZ is 100 on Linux
    seconds
}

/// Peak resident memory of this process in KiB (`VmHWM`).
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [base, criteria, limit, rounds] = args.as_slice() else {
        return Err("usage: judge-load BASE_URL CRITERIA LIMIT ROUNDS".into());
    };
    let (criteria, limit, rounds): (usize, usize, usize) =
        (criteria.parse()?, limit.parse()?, rounds.parse()?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let config = JudgeConfig::new()
        .base_url(base)
        .api_key("bench")
        .max_concurrent_calls(limit);
    let texts: Vec<String> = (0..criteria).map(|i| format!("criterion {i}")).collect();
    let judge = |n: usize| {
        LlmJudge::new("The answer under test.", texts[..n].to_vec())
            .question("The question?")
            .config(config.clone())
            .grade(1.0)
            .into_future()
    };
    runtime.block_on(judge(criteria.min(10)))?;
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (started, cpu_before) = (Instant::now(), cpu_seconds());
        let graded = runtime.block_on(judge(criteria))?;
        cpu.push(cpu_seconds() - cpu_before);
        wall.push(started.elapsed().as_secs_f64());
        assert!(
            (graded.value() - 1.0).abs() < f64::EPSILON,
            "every criterion is MET"
        );
    }
    println!(
        "{}",
        serde_json::json!({"wall_s": wall, "cpu_s": cpu, "peak_rss_kib": peak_rss_kib()})
    );
    Ok(())
}
