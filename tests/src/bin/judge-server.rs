//! The scripted judge server as its own process, for the judge's load benchmark
//! (`benches/judge_load.rs`): `judge-server DELAY_MS` answers every chat completion with MET
//! after `DELAY_MS` milliseconds, prints its base URL on one line, and stops when its standard
//! input closes.

use std::io::Read as _;
use std::time::Duration;

use grader_tests::judge_server::{Reply, ScriptedServer};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let delay: u64 = std::env::args()
        .nth(1)
        .ok_or("usage: judge-server DELAY_MS")?
        .parse()?;
    let server = ScriptedServer::start(move |_| {
        Reply::verdict("MET", "scripted").after(Duration::from_millis(delay))
    });
    println!("{}", server.base_url());
    // Wait for the parent to close our standard input (or to exit).
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    drop(server);
    Ok(())
}
