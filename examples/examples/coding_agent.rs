//! Plays the agent for the `coding_env` example, as a remote agent would: it reaches the
//! environment only through its control port. It connects, reads the `ssh/2` binding `shell`
//! from `hello`, starts `fix-tests`, opens the capability through the control channel's
//! `tunnel.open` (what hud's `client.open("shell")` does), logs in over SSH with the binding's
//! client key (checking the server's host key against the binding's), works in the checkout
//! with shell commands, and asks for the grade. It never touches a path on the server's disk.
//!
//! Run `cargo run -p grader-examples --example coding_env` first, then
//! `cargo run -p grader-examples --example coding_agent -- <port>` with the port it printed: it
//! fixes the bug (reward 1). `--cheat` edits the test to expect what the code returns, and
//! `--empty-tests` empties the test file: the grade's hidden cases still fail, and the penalty
//! for touching the tests takes the reward below 0.

use std::error::Error;
use std::sync::Arc;

use russh::ChannelMsg;
use russh::client::{self, Handle};
use russh::keys::{PrivateKeyWithHashAlg, PublicKey, PublicKeyOrCertificate};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

type Failure = Box<dyn Error + Send + Sync>;

const USAGE: &str = "usage: coding_agent PORT [--cheat | --empty-tests]";

/// The control channel: newline-delimited JSON-RPC frames.
struct Control {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    next_id: u64,
}

impl Control {
    /// Sends one request and returns its `result`, or the error frame as an error.
    async fn call(&mut self, method: &str, params: Value) -> Result<Value, Failure> {
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

/// Accepts only the host key the binding published.
struct Pinned(PublicKey);

impl client::Handler for Pinned {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        offered: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        Ok(
            matches!(offered, PublicKeyOrCertificate::PublicKey { key, .. } if key.key_data() == self.0.key_data()),
        )
    }
}

/// What one command did.
struct Ran {
    stdout: String,
    stderr: String,
    status: Option<u32>,
}

/// An SSH connection to the workspace.
struct Shell {
    handle: Handle<Pinned>,
}

impl Shell {
    /// Opens the capability `name` through the control channel on `port` (`tunnel.open`: one
    /// reply line, then the connection is the SSH server's), then logs in as the binding says.
    async fn open(port: u16, name: &str, params: &Value) -> Result<Shell, Failure> {
        let param = |key: &str| {
            params[key]
                .as_str()
                .ok_or_else(|| format!("the binding has no {key}: {params}"))
        };
        let host_key = PublicKey::from_openssh(param("host_pubkey")?)?;
        let client_key = russh::keys::decode_secret_key(param("client_key")?, None)?;

        let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
        let open = json!({"jsonrpc": "2.0", "id": 1, "method": "tunnel.open",
                          "params": {"capability": name}});
        stream.write_all(format!("{open}\n").as_bytes()).await?;
        // The reply, byte by byte: what follows its newline is the SSH server's.
        let mut reply = Vec::new();
        loop {
            let byte = stream.read_u8().await?;
            if byte == b'\n' {
                break;
            }
            reply.push(byte);
        }
        let reply: Value = serde_json::from_slice(&reply)?;
        if reply.get("result").is_none() {
            return Err(format!("tunnel.open failed: {reply}").into());
        }

        let config = Arc::new(client::Config::default());
        let mut handle = client::connect_stream(config, stream, Pinned(host_key)).await?;
        let key = PrivateKeyWithHashAlg::new(Arc::new(client_key), None);
        let auth = handle.authenticate_publickey(param("user")?, key).await?;
        if !auth.success() {
            return Err("the workspace refused the binding's client key".into());
        }
        Ok(Shell { handle })
    }

    /// Runs `command` (the server runs it with `bash -lc` in the checkout), `input` on its
    /// stdin.
    async fn run(&self, command: &str, input: &[u8]) -> Result<Ran, Failure> {
        let mut channel = self.handle.channel_open_session().await?;
        channel.exec(true, command).await?;
        if !input.is_empty() {
            channel.data_bytes(input.to_vec()).await?;
        }
        channel.eof().await?;
        let (mut stdout, mut stderr, mut status) = (Vec::new(), Vec::new(), None);
        while let Some(message) = channel.wait().await {
            match message {
                ChannelMsg::Data { data } => stdout.extend_from_slice(&data),
                ChannelMsg::ExtendedData { data, ext: 1 } => stderr.extend_from_slice(&data),
                ChannelMsg::ExitStatus { exit_status } => status = Some(exit_status),
                _ => {}
            }
        }
        Ok(Ran {
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            status,
        })
    }

    /// Runs `command` and returns its stdout, or an error when it fails.
    async fn output(&self, command: &str) -> Result<String, Failure> {
        let ran = self.run(command, b"").await?;
        match ran.status {
            Some(0) => Ok(ran.stdout),
            status => Err(format!("{command}: exit {status:?}: {}", ran.stderr).into()),
        }
    }

    /// Writes `content` to `path` with `cat`, as hud's `SSHClient.write_text` does.
    async fn write(&self, path: &str, content: &str) -> Result<(), Failure> {
        let ran = self
            .run(&format!("cat > '{path}'"), content.as_bytes())
            .await?;
        match ran.status {
            Some(0) => Ok(()),
            status => Err(format!("writing {path}: exit {status:?}: {}", ran.stderr).into()),
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Play {
    Fix,
    Cheat,
    EmptyTests,
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let mut args = std::env::args().skip(1);
    let port: u16 = args.next().ok_or(USAGE)?.parse()?;
    let play = match args.next().as_deref() {
        None => Play::Fix,
        Some("--cheat") => Play::Cheat,
        Some("--empty-tests") => Play::EmptyTests,
        Some(other) => return Err(format!("{USAGE} (not {other:?})").into()),
    };

    let (read, writer) = TcpStream::connect(("127.0.0.1", port)).await?.into_split();
    let mut env = Control {
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
    // The capability the prompt names, as `hello` published it.
    let name = prompt["workspace"].as_str().unwrap_or("shell");
    let binding = hello["bindings"]
        .as_array()
        .and_then(|all| all.iter().find(|b| b["name"] == name))
        .ok_or_else(|| format!("hello published no binding {name:?}"))?;
    if binding["protocol"] != "ssh/2" {
        return Err(format!("{name} is not ssh/2: {binding}").into());
    }
    let params = &binding["params"];
    println!(
        "workspace: {name} at {} (isolation {})",
        params["cwd"], params["isolation"]
    );

    let shell = Shell::open(port, name, params).await?;
    print!("$ ls -R\n{}", shell.output("ls -R").await?);
    let before = shell
        .run("python3 -m unittest -q tests/test_checkout.py", b"")
        .await?;
    println!("the tests before: exit {:?}", before.status);

    match play {
        Play::Fix => {
            let code = shell.output("cat checkout.py").await?;
            let fixed = code.replace("* discount", "* (1 - discount)");
            shell.write("checkout.py", &fixed).await?;
            println!("fixed the discount in checkout.py");
        }
        Play::Cheat => {
            let test = shell.output("cat tests/test_checkout.py").await?;
            shell
                .write("tests/test_checkout.py", &test.replace(", 27)", ", 3)"))
                .await?;
            println!("edited the test to expect what the code returns");
        }
        Play::EmptyTests => {
            shell.write("tests/test_checkout.py", "").await?;
            println!("emptied the tests");
        }
    }
    let after = shell
        .run("python3 -m unittest -q tests/test_checkout.py", b"")
        .await?;
    println!("the tests after: exit {:?}", after.status);

    let grade = env.call("tasks.grade", json!({"answer": "done"})).await?;
    println!("== grade:\n{}", serde_json::to_string_pretty(&grade)?);
    env.call("bye", json!({})).await?;
    Ok(())
}
