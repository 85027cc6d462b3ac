//! The library never installs a global `tracing` subscriber: a program that serves, sees a
//! template fail (which, without a subscriber, is printed on standard error) and only then
//! installs its own, still can.
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

use grader_env::{Environment, NoArgs, ServeConfig, Session, Template};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;

#[tokio::test]
async fn a_program_can_still_install_its_own_subscriber() {
    let env = Environment::new("fails")
        .template(Template::new("fails", |_: NoArgs, _: Session| async {
            Err::<f64, _>(std::io::Error::other("boom"))
        }))
        .unwrap();
    let server = env.bind(&ServeConfig::default()).await.unwrap();
    let (read, mut write) = TcpStream::connect(server.local_addr())
        .await
        .unwrap()
        .into_split();
    let mut reader = BufReader::new(read);
    write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks.start\",\"params\":{\"id\":\"fails\"}}\n")
        .await
        .unwrap();
    let mut reply = String::new();
    reader.read_line(&mut reply).await.unwrap();
    let reply: Value = serde_json::from_str(&reply).unwrap();
    assert_eq!(reply["error"], json!({"code": -32000, "message": "boom"}));
    server.shutdown().await;
    assert!(!tracing::dispatcher::has_been_set());
    tracing::subscriber::set_global_default(tracing::subscriber::NoSubscriber::new())
        .expect("no subscriber was installed before the program's own");
}
