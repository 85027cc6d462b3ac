//! A real S3-compatible server on 127.0.0.1 for the object storage tests: moto's server
//! (`moto[server]` from PyPI, installed on first use into its own virtual environment under the
//! target directory, see [`moto_python`](crate::python::moto_python)), started by the test
//! and killed when it is dropped.
//!
//! The test talks to it with plain HTTP/1.0 requests (moto does not check signatures unless
//! asked to), and the code under test reaches it through the environment [`S3Server::env`]
//! gives a child process: `AWS_ENDPOINT`, `AWS_ALLOW_HTTP` and dummy credentials.
//! [`CutProxy`] stands between them to break the network in the middle of a run.

use std::fs::File;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::local_server::start_on_a_free_port;

/// The dummy secret key the tests hand the code under test: it must never appear in an
/// error message.
pub const SECRET_KEY: &str = "s3cr3t-dummy-key-never-shown";

/// A moto server on 127.0.0.1, killed on drop.
pub struct S3Server {
    child: Child,
    port: u16,
    log: std::path::PathBuf,
}

impl S3Server {
    /// Starts moto's server on a free port and waits until it answers. With `auth`, moto
    /// checks every request's credentials against its own IAM, so the dummy credentials of
    /// [`env`](Self::env) are refused (access denied).
    ///
    /// Returns `None` (after printing why) where `python3` is missing outside CI.
    ///
    /// # Panics
    /// When moto cannot be installed or does not start.
    #[must_use]
    pub fn start(target_tmpdir: &str, auth: bool) -> Option<S3Server> {
        let python = crate::python::moto_python(target_tmpdir)?;
        let logs = Path::new(target_tmpdir).join("moto-logs");
        std::fs::create_dir_all(&logs).expect("make the moto log folder");
        Some(start_on_a_free_port(
            "moto's server",
            |port| {
                let log_path = logs.join(format!("moto-{port}.log"));
                let log = File::create(&log_path).expect("create the moto log");
                let mut command = Command::new(&python);
                command
                    .args(["-m", "moto.server", "-H", "127.0.0.1", "-p"])
                    .arg(port.to_string())
                    .stdin(Stdio::null())
                    .stdout(log.try_clone().expect("clone the log handle"))
                    .stderr(log);
                if auth {
                    command.env("INITIAL_NO_AUTH_ACTION_COUNT", "0");
                }
                let child = command.spawn().expect("start moto's server");
                let server = S3Server {
                    child,
                    port,
                    log: log_path.clone(),
                };
                (server, log_path)
            },
            |s| &mut s.child,
            |s| s.request("GET", "/", &[]).is_ok(),
        ))
    }

    /// The server's port.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The environment that points `object_store` at `port` (this server's, or a proxy's in
    /// front of it) with dummy credentials.
    #[must_use]
    pub fn env(port: u16) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT", format!("http://127.0.0.1:{port}")),
            ("AWS_ALLOW_HTTP", "true".to_owned()),
            ("AWS_ACCESS_KEY_ID", "AKIDUMMYTESTKEY".to_owned()),
            ("AWS_SECRET_ACCESS_KEY", SECRET_KEY.to_owned()),
            ("AWS_REGION", "us-east-1".to_owned()),
            ("AWS_EC2_METADATA_DISABLED", "true".to_owned()),
        ]
    }

    /// Creates a bucket.
    ///
    /// # Panics
    /// When the server refuses.
    pub fn create_bucket(&self, bucket: &str) {
        let (status, body) = self
            .request("PUT", &format!("/{bucket}"), &[])
            .expect("create the bucket");
        assert_eq!(
            status,
            200,
            "create {bucket}: {}",
            String::from_utf8_lossy(&body)
        );
    }

    /// Sets the bucket's policy (a JSON policy document). moto enforces a policy's `Deny` of
    /// object requests (`s3:GetObject`, `s3:PutObject`, ...) whoever makes them, as S3 does,
    /// without checking credentials; it does not enforce policies on listing.
    ///
    /// # Panics
    /// When the server refuses.
    pub fn put_bucket_policy(&self, bucket: &str, policy: &str) {
        let (status, body) = self
            .request("PUT", &format!("/{bucket}?policy"), policy.as_bytes())
            .expect("put the bucket policy");
        assert!(
            (200..300).contains(&status),
            "policy of {bucket}: {status} {}",
            String::from_utf8_lossy(&body)
        );
    }

    /// Stores an object.
    ///
    /// # Panics
    /// When the server refuses.
    pub fn put_object(&self, bucket: &str, key: &str, bytes: &[u8]) {
        let (status, body) = self
            .request("PUT", &format!("/{bucket}/{key}"), bytes)
            .expect("put the object");
        assert_eq!(status, 200, "put {key}: {}", String::from_utf8_lossy(&body));
    }

    /// An object's bytes.
    ///
    /// # Panics
    /// When it cannot be read.
    #[must_use]
    pub fn get_object(&self, bucket: &str, key: &str) -> Vec<u8> {
        let (status, body) = self
            .request("GET", &format!("/{bucket}/{key}"), &[])
            .expect("get the object");
        assert_eq!(status, 200, "get {key}: {}", String::from_utf8_lossy(&body));
        body
    }

    /// The keys under `prefix` in `bucket` (up to 1000).
    ///
    /// # Panics
    /// When the bucket cannot be listed.
    #[must_use]
    pub fn keys(&self, bucket: &str, prefix: &str) -> Vec<String> {
        let (status, body) = self
            .request(
                "GET",
                &format!("/{bucket}?list-type=2&prefix={prefix}"),
                &[],
            )
            .expect("list the bucket");
        let body = String::from_utf8(body).expect("an XML listing");
        assert_eq!(status, 200, "list {bucket}: {body}");
        body.split("<Key>")
            .skip(1)
            .filter_map(|rest| rest.split_once("</Key>").map(|(key, _)| key.to_owned()))
            .collect()
    }

    /// How many lines the objects under `prefix` hold, and how many objects there are.
    #[must_use]
    pub fn count_lines(&self, bucket: &str, prefix: &str) -> (usize, usize) {
        let keys = self.keys(bucket, prefix);
        let lines = keys
            .iter()
            .map(|key| {
                let bytes = self.get_object(bucket, key);
                bytes.iter().filter(|&&b| b == b'\n').count()
            })
            .sum();
        (lines, keys.len())
    }

    /// An object's `ETag` (for an object stored by a multipart upload, S3 and moto end it
    /// with `-` and the number of parts).
    ///
    /// # Panics
    /// When the object is not there.
    #[must_use]
    pub fn etag(&self, bucket: &str, key: &str) -> String {
        let (status, head, _) = self
            .exchange("HEAD", &format!("/{bucket}/{key}"), &[])
            .expect("head the object");
        assert_eq!(status, 200, "head {key}: {head}");
        head.lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("etag")
                    .then(|| value.trim().trim_matches('"').to_owned())
            })
            .unwrap_or_else(|| panic!("no ETag in {head}"))
    }

    /// One HTTP/1.0 request; the status and body of the answer.
    fn request(&self, method: &str, target: &str, body: &[u8]) -> std::io::Result<(u16, Vec<u8>)> {
        self.exchange(method, target, body)
            .map(|(status, _, body)| (status, body))
    }

    /// One HTTP/1.0 request, with a dummy signature; the status, head and body of the answer.
    fn exchange(
        &self,
        method: &str,
        target: &str,
        body: &[u8],
    ) -> std::io::Result<(u16, String, Vec<u8>)> {
        crate::local_server::exchange(
            self.port,
            method,
            target,
            &[
                "Authorization: AWS4-HMAC-SHA256 Credential=AKIDUMMYTESTKEY/20240101/us-east-1/s3/\
               aws4_request, SignedHeaders=host, Signature=00",
            ],
            body,
        )
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// A TCP proxy on 127.0.0.1 in front of a server, whose [`cut`](Self::cut) closes its port
/// and every connection through it at once: a network failure in the middle of whatever
/// passes through.
pub struct CutProxy {
    port: u16,
    cut: Arc<AtomicBool>,
    streams: Arc<Mutex<Vec<TcpStream>>>,
    acceptor: Option<JoinHandle<()>>,
}

impl CutProxy {
    /// A proxy to `127.0.0.1:target`.
    ///
    /// # Panics
    /// When it cannot listen.
    #[must_use]
    pub fn start(target: u16) -> CutProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
        let port = listener.local_addr().expect("the proxy's address").port();
        listener.set_nonblocking(true).expect("non-blocking accept");
        let cut = Arc::new(AtomicBool::new(false));
        let streams = Arc::new(Mutex::new(Vec::new()));
        let acceptor = {
            let cut = Arc::clone(&cut);
            let streams = Arc::clone(&streams);
            std::thread::spawn(move || {
                while !cut.load(Ordering::SeqCst) {
                    match listener.accept() {
                        Ok((client, _)) => {
                            let _ = client.set_nonblocking(false);
                            let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                                continue;
                            };
                            let mut kept = streams.lock().expect("the proxy's streams");
                            for stream in [&client, &server] {
                                if let Ok(copy) = stream.try_clone() {
                                    kept.push(copy);
                                }
                            }
                            drop(kept);
                            pipe(&client, &server);
                            pipe(&server, &client);
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(2)),
                    }
                }
            })
        };
        CutProxy {
            port,
            cut,
            streams,
            acceptor: Some(acceptor),
        }
    }

    /// The proxy's port.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Closes the port and every connection through it.
    pub fn cut(&mut self) {
        self.cut.store(true, Ordering::SeqCst);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
        for stream in self.streams.lock().expect("the proxy's streams").drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        self.cut();
    }
}

/// Copies `from` to `to` on a thread until either closes.
fn pipe(from: &TcpStream, to: &TcpStream) {
    let (Ok(mut from), Ok(mut to)) = (from.try_clone(), to.try_clone()) else {
        return;
    };
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut from, &mut to);
        let _ = to.shutdown(Shutdown::Write);
    });
}
