//! Capability streams: a connection whose first frame is `tunnel.open` gets one reply, then
//! its raw bytes are spliced both ways to the capability's host and port, so the control port
//! is the only address a runtime needs to expose.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::net::tcp::OwnedReadHalf;

use super::control::{Writer, send_control_error};
use crate::environment::Environment;
use crate::frame::{FRAME_LIMIT, FrameError, FrameReader, Id, Outcome, Request, encode_response};
use crate::pyfmt::py_str_repr;

/// Serves one `tunnel.open` connection until both directions are closed.
pub(crate) async fn run(
    env: Arc<Environment>,
    request: Request,
    reader: FrameReader<OwnedReadHalf>,
    writer: Writer,
) -> Result<(), FrameError> {
    let Request { msg, id, .. } = request;
    let params = msg.get("params").cloned().unwrap_or(Value::Null);
    let name = match &params {
        Value::Object(map) => map.get("capability").cloned().unwrap_or(Value::Null),
        Value::Null => Value::Null,
        other if !crate::pyfmt::py_truthy(other) => Value::Null,
        other => {
            let message = format!(
                "'{}' object has no attribute 'get'",
                crate::pyfmt::py_type_name(other)
            );
            return refuse(&writer, &id, -32000, &message).await;
        }
    };
    let Some(name) = name.as_str() else {
        return refuse(
            &writer,
            &id,
            -32602,
            "tunnel.open: 'capability' must be a string",
        )
        .await;
    };
    let Some(capability) = env.capabilities.get(name) else {
        // The reference raises KeyError, whose str() is the repr of its message.
        let message = py_str_repr(&format!("unknown capability: {}", py_str_repr(name)));
        return refuse(&writer, &id, -32000, &message).await;
    };
    let Some((host, port)) = capability.host_port() else {
        let message = format!(
            "capability {} has no host:port to tunnel to",
            py_str_repr(name)
        );
        return refuse(&writer, &id, -32602, &message).await;
    };
    let response = if id.is_null() {
        None
    } else {
        Some(encode_response(
            &id,
            &Outcome::Result(&json!({"capability": name})),
            FRAME_LIMIT,
        )?)
    };
    let backend = match TcpStream::connect((host.as_str(), port)).await {
        // Small writes (an SSH packet per keystroke or command) go at once, as the client's
        // side of the tunnel sends them: with Nagle's algorithm each would wait for the
        // previous one's acknowledgement, about 40 ms a command.
        Ok(backend) => {
            let _ = backend.set_nodelay(true);
            backend
        }
        Err(error) => {
            let message = format!("cannot connect to {host}:{port}: {error}");
            return refuse(&writer, &id, -32000, &message).await;
        }
    };
    let (mut backend_read, mut backend_write) = backend.into_split();
    let mut client_write = writer.half.lock().await;
    if let Some(response) = response {
        tokio::io::AsyncWriteExt::write_all(&mut *client_write, &response).await?;
    }
    // Bytes the client sent after its preface are already buffered in the frame reader.
    let (mut client_read, ahead) = reader.into_parts();
    let up = async {
        let copied = match tokio::io::AsyncWriteExt::write_all(&mut backend_write, &ahead).await {
            Ok(()) => tokio::io::copy(&mut client_read, &mut backend_write).await,
            Err(error) => Err(error),
        };
        let _ = tokio::io::AsyncWriteExt::shutdown(&mut backend_write).await;
        copied
    };
    let down = async {
        let copied = tokio::io::copy(&mut backend_read, &mut *client_write).await;
        let _ = tokio::io::AsyncWriteExt::shutdown(&mut *client_write).await;
        copied
    };
    let (up, down) = tokio::join!(up, down);
    drop((up, down));
    Ok(())
}

async fn refuse(writer: &Writer, id: &Id, code: i64, message: &str) -> Result<(), FrameError> {
    tracing::warn!(%message, "refusing capability stream");
    if id.is_null() {
        return Ok(());
    }
    send_control_error(writer, id, code, message).await
}
