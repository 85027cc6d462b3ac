//! Plays the agent for the `coding_env` example: connects to the environment's control
//! channel, starts `fix-tests`, fixes the bug in the checkout it is given, and asks for the
//! grade, speaking the protocol with plain newline-delimited JSON-RPC frames.
//!
//! Run `cargo run -p grader-examples --example coding_env` first, then
//! `cargo run -p grader-examples --example coding_agent -- <port>` with the port it printed.
//! Add `--cheat` to edit the test instead of the code, and watch the penalty cancel the reward.

use std::error::Error;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

struct Client {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    next_id: u64,
}

impl Client {
    /// Sends one request and returns its `result`, or the error frame as an error.
    async fn call(&mut self, method: &str, params: Value) -> Result<Value, Box<dyn Error>> {
        self.next_id += 1;
        let frame =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        let mut line = frame.to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await?;
        let mut reply = String::new();
        self.reader.read_line(&mut reply).await?;
        let mut reply: Value = serde_json::from_str(&reply)?;
        match reply.get_mut("result") {
            Some(result) => Ok(result.take()),
            None => Err(format!("{method} failed: {}", reply["error"]).into()),
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let port: u16 = args
        .next()
        .ok_or("usage: coding_agent PORT [--cheat]")?
        .parse()?;
    let cheat = args.next().as_deref() == Some("--cheat");

    let (read, writer) = TcpStream::connect(("127.0.0.1", port)).await?.into_split();
    let mut env = Client {
        reader: BufReader::new(read),
        writer,
        next_id: 0,
    };
    let hello = env.call("hello", json!({})).await?;
    println!(
        "connected to {} {}",
        hello["env"]["name"], hello["env"]["version"]
    );

    let prompt = env
        .call("tasks.start", json!({"id": "fix-tests", "args": {}}))
        .await?;
    println!("prompt: {}", prompt["prompt"]);
    let checkout = std::path::PathBuf::from(prompt["checkout"].as_str().ok_or("no checkout")?);

    if cheat {
        let test = checkout.join("tests/test_checkout.py");
        let text = std::fs::read_to_string(&test)?.replace(", 27)", ", 3)");
        std::fs::write(&test, text)?;
        println!("edited the test to expect what the code returns");
    } else {
        let code = checkout.join("checkout.py");
        let text = std::fs::read_to_string(&code)?.replace("* discount", "* (1 - discount)");
        std::fs::write(&code, text)?;
        println!("fixed the discount in checkout.py");
    }

    let grade = env.call("tasks.grade", json!({"answer": "done"})).await?;
    println!("== grade:\n{}", serde_json::to_string_pretty(&grade)?);
    env.call("bye", json!({})).await?;
    Ok(())
}
