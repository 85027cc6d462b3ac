//! Capability streams and the environment's hooks: `tunnel.open` splices raw bytes to the
//! capability's host and port after one reply; `hello` lists the capabilities an `initialize`
//! hook published; a failing `initialize` hook stops serving and still runs the shutdown hooks.
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use grader_env::{Capability, Environment, ServeConfig, ServeError};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// A backend that upper-cases what it receives, until the client closes.
async fn upper_backend() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 1024];
                while let Ok(n) = stream.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let upper = buf[..n].to_ascii_uppercase();
                    if stream.write_all(&upper).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    port
}

#[tokio::test]
async fn a_tunnel_splices_bytes_to_the_published_capability() {
    let backend = upper_backend().await;
    let env = Environment::new("tunnels").initialize(move |capabilities| async move {
        capabilities.add(
            Capability::new("upper", "raw/1", format!("tcp://127.0.0.1:{backend}"))
                .param("mode", "upper"),
        );
        Ok::<(), String>(())
    });
    let server = env.bind(&ServeConfig::default()).await.unwrap();

    // The control session sees the capability the hook published.
    let (read, mut write) = TcpStream::connect(server.local_addr())
        .await
        .unwrap()
        .into_split();
    let mut control = BufReader::new(read);
    write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hello\",\"params\":{}}\n")
        .await
        .unwrap();
    let mut line = String::new();
    control.read_line(&mut line).await.unwrap();
    let hello: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        hello["result"]["bindings"],
        json!([{"name": "upper", "protocol": "raw/1", "url": format!("tcp://127.0.0.1:{backend}"), "params": {"mode": "upper"}}])
    );

    // A tunnel: one reply, then raw bytes both ways, including bytes sent with the preface.
    let mut tunnel = TcpStream::connect(server.local_addr()).await.unwrap();
    tunnel
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tunnel.open\",\"params\":{\"capability\":\"upper\"}}\nearly bytes ")
        .await
        .unwrap();
    let mut reader = BufReader::new(tunnel);
    let mut reply = String::new();
    reader.read_line(&mut reply).await.unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&reply).unwrap(),
        json!({"jsonrpc": "2.0", "id": 7, "result": {"capability": "upper"}})
    );
    reader.get_mut().write_all(b"and late ones").await.unwrap();
    let mut got = Vec::new();
    while got.len() < "EARLY BYTES AND LATE ONES".len() {
        let mut buf = [0u8; 64];
        let n = reader.read(&mut buf).await.unwrap();
        assert!(n > 0, "the tunnel closed early");
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(got, b"EARLY BYTES AND LATE ONES");
    server.shutdown().await;
}

#[tokio::test]
async fn a_failing_initialize_hook_stops_serving_and_runs_the_shutdown_hooks() {
    let stopped = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&stopped);
    let env = Environment::new("broken")
        .initialize(|_| async { Err::<(), _>("no database") })
        .shutdown(move || {
            let counter = Arc::clone(&counter);
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok::<(), String>(())
            }
        });
    let error = env.bind(&ServeConfig::default()).await.unwrap_err();
    assert!(matches!(error, ServeError::Initialize { .. }));
    assert_eq!(
        error.to_string(),
        "environment \"broken\": an initialize hook failed: no database"
    );
    assert_eq!(stopped.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn shutdown_hooks_run_in_reverse_order_after_the_tasks_are_cancelled() {
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (first, second) = (Arc::clone(&order), Arc::clone(&order));
    let env = Environment::new("ordered")
        .shutdown(move || {
            let order = Arc::clone(&first);
            async move {
                order.lock().unwrap().push("registered first");
                Ok::<(), String>(())
            }
        })
        .shutdown(move || {
            let order = Arc::clone(&second);
            async move {
                order.lock().unwrap().push("registered second");
                Err::<(), String>("fails, and the others still run".to_owned())
            }
        });
    let server = env.bind(&ServeConfig::default()).await.unwrap();
    server.shutdown().await;
    assert_eq!(
        *order.lock().unwrap(),
        ["registered second", "registered first"]
    );
}

#[tokio::test(start_paused = true)]
async fn a_hook_that_hangs_does_not_hold_the_stop_past_hud_s_grace() {
    let env = Environment::new("hangs").shutdown(|| async {
        tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
        Ok::<(), String>(())
    });
    let server = env.bind(&ServeConfig::default()).await.unwrap();
    let started = tokio::time::Instant::now();
    server.shutdown().await;
    let took = started.elapsed();
    assert!(took >= std::time::Duration::from_secs(5), "{took:?}");
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");
}
