//! A real Azure Blob Storage server on 127.0.0.1 for the object storage tests: Azurite, the
//! Azure Storage emulator (npm's `azurite` at the version of [`PACKAGE_JSON`], installed on
//! first use under the target directory with `npm ci` from the committed [`PACKAGE_LOCK`], and
//! made again when that lock changes, serialized across test processes by a file lock, as the
//! Python environments of [`python`](crate::python) are), started by the test on a free port with
//! telemetry off and its data in memory, and killed when it is dropped.
//!
//! The code under test reaches it through the environment [`Azurite::env`] gives a child
//! process: `object_store`'s emulator settings (`AZURE_STORAGE_USE_EMULATOR`,
//! `AZURITE_BLOB_STORAGE_URL`) with the emulator's public, well-known account and key. The
//! test itself creates containers and lists blobs with requests signed by that key, made by a
//! short Node.js script ([`Azurite::request`]).
//!
//! Where `npm` is absent, [`Azurite::start`] returns `None` so the caller can skip with a
//! message, except under CI (`CI` set), where the test must run.

use std::fs::{self, File};
use std::net::TcpStream;

use crate::child::Bounded as _;
use crate::local_server::start_on_a_free_port;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The package whose one dependency is the Azurite release the tests run against (the last
/// one that runs on Node.js 20): `tests/envs/azurite/package.json`.
pub const PACKAGE_JSON: &str = include_str!("../envs/azurite/package.json");

/// Every package of that install with its version and integrity hash:
/// `tests/envs/azurite/package-lock.json`, renewed by `scripts/lock-test-envs.sh azurite`.
pub const PACKAGE_LOCK: &str = include_str!("../envs/azurite/package-lock.json");

/// The emulator's account, the same in every installation.
pub const ACCOUNT: &str = "devstoreaccount1";

/// The emulator's account key, published with it and the same in every installation.
pub const ACCOUNT_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// Signs a Blob service request with the account key (Shared Key) and prints the answer's
/// status on the first line and its body after. Arguments: port, method, path (after the
/// account), query (`a=1&b=2`, or empty).
const REQUEST_SCRIPT: &str = r#"
const http = require('http');
const crypto = require('crypto');
const [port, method, path, query] = process.argv.slice(1);
const account = 'devstoreaccount1';
const key = Buffer.from(process.env.AZURITE_TEST_KEY, 'base64');
const headers = { 'x-ms-date': new Date().toUTCString(), 'x-ms-version': '2021-08-06' };
const params = new URLSearchParams(query || '');
const names = [...new Set([...params.keys()])].sort();
const resource = `/${account}/${account}${path}` +
  names.map((name) => `\n${name.toLowerCase()}:${params.getAll(name).sort().join(',')}`).join('');
const canonical = Object.keys(headers).sort().map((name) => `${name}:${headers[name]}\n`).join('');
const toSign = [method, '', '', '', '', '', '', '', '', '', '', ''].join('\n') + '\n' +
  canonical + resource;
const signature = crypto.createHmac('sha256', key).update(toSign, 'utf8').digest('base64');
headers['Authorization'] = `SharedKey ${account}:${signature}`;
headers['Content-Length'] = '0';
const request = http.request({ host: '127.0.0.1', port, method,
  path: `/${account}${path}` + (query ? `?${query}` : ''), headers }, (response) => {
  let body = '';
  response.setEncoding('utf8');
  response.on('data', (piece) => { body += piece; });
  response.on('end', () => { process.stdout.write(`${response.statusCode}\n${body}`); });
});
request.on('error', (error) => { console.error(String(error)); process.exit(1); });
request.end();
"#;

/// An Azurite Blob server on 127.0.0.1, killed on drop.
pub struct Azurite {
    child: Child,
    port: u16,
    node: PathBuf,
    workspace: PathBuf,
}

impl Azurite {
    /// Installs Azurite under `target_tmpdir` on first use (pass `env!("CARGO_TARGET_TMPDIR")`),
    /// starts its Blob service on a free port and waits until it answers.
    ///
    /// Returns `None`, after printing why, when `npm` or `node` is missing and `CI` is not set.
    ///
    /// # Panics
    /// When Azurite cannot be installed or does not start, or when `npm` is missing under CI.
    #[must_use]
    pub fn start(target_tmpdir: &str) -> Option<Azurite> {
        let (Some(npm), Some(node)) = (find_tool("npm"), find_tool("node")) else {
            assert!(
                std::env::var_os("CI").is_none(),
                "npm and node are required under CI for the tests against Azurite"
            );
            eprintln!("skipping the test against Azurite: npm or node is not installed");
            return None;
        };
        let azurite = install(target_tmpdir, &npm);
        Some(start_on_a_free_port(
            "Azurite",
            |port| {
                let workspace = Path::new(target_tmpdir).join(format!("azurite-data/{port}"));
                fs::create_dir_all(&workspace).expect("make Azurite's workspace");
                let log_path = workspace.join("azurite.log");
                let log = File::create(&log_path).expect("create Azurite's log");
                let child = Command::new(&node)
                    .arg(&azurite)
                    .args(["--blobHost", "127.0.0.1", "--blobPort"])
                    .arg(port.to_string())
                    .args([
                        "--inMemoryPersistence",
                        "--disableTelemetry",
                        "--disableProductStyleUrl",
                        "--skipApiVersionCheck",
                        "--loose",
                        "--silent",
                    ])
                    .current_dir(&workspace)
                    .stdin(Stdio::null())
                    .stdout(log.try_clone().expect("clone the log handle"))
                    .stderr(log)
                    .spawn()
                    .expect("start Azurite");
                let server = Azurite {
                    child,
                    port,
                    node: node.clone(),
                    workspace,
                };
                (server, log_path)
            },
            |s| &mut s.child,
            |s| TcpStream::connect(("127.0.0.1", s.port)).is_ok(),
        ))
    }

    /// The port of the Blob service.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The environment that points `object_store` at this server, with the emulator's
    /// well-known account and key.
    #[must_use]
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AZURE_STORAGE_USE_EMULATOR", "true".to_owned()),
            (
                "AZURITE_BLOB_STORAGE_URL",
                format!("http://127.0.0.1:{}", self.port),
            ),
            ("AZURE_STORAGE_ACCOUNT_NAME", ACCOUNT.to_owned()),
            ("AZURE_STORAGE_ACCOUNT_KEY", ACCOUNT_KEY.to_owned()),
        ]
    }

    /// Creates a container.
    ///
    /// # Panics
    /// When the server refuses.
    pub fn create_container(&self, container: &str) {
        let (status, body) = self.request("PUT", &format!("/{container}"), "restype=container");
        assert_eq!(status, 201, "create {container}: {body}");
    }

    /// The names of the blobs under `prefix` in `container` (up to 5000).
    ///
    /// # Panics
    /// When the container cannot be listed.
    #[must_use]
    pub fn blobs(&self, container: &str, prefix: &str) -> Vec<String> {
        let (status, body) = self.request(
            "GET",
            &format!("/{container}"),
            &format!("comp=list&prefix={prefix}&restype=container"),
        );
        assert_eq!(status, 200, "list {container}: {body}");
        body.split("<Name>")
            .skip(1)
            .filter_map(|rest| rest.split_once("</Name>").map(|(name, _)| name.to_owned()))
            .collect()
    }

    /// One request signed with the account key: the status and body of the answer.
    ///
    /// # Panics
    /// When Node.js cannot make it.
    #[must_use]
    pub fn request(&self, method: &str, path: &str, query: &str) -> (u16, String) {
        let output = Command::new(&self.node)
            .args(["-e", REQUEST_SCRIPT])
            .arg(self.port.to_string())
            .args([method, path, query])
            .env("AZURITE_TEST_KEY", ACCOUNT_KEY)
            .output_bounded();
        assert!(
            output.status.success(),
            "the request failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let text = String::from_utf8(output.stdout).expect("a UTF-8 answer");
        let (status, body) = text.split_once('\n').unwrap_or((&text, ""));
        (
            status.parse().expect("a status on the first line"),
            body.to_owned(),
        )
    }
}

impl Drop for Azurite {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = fs::remove_dir_all(&self.workspace);
    }
}

/// Installs Azurite from [`PACKAGE_LOCK`] under `target_tmpdir/azurite-npm` unless the install
/// marker holds that lock's hash; returns the Blob service's script.
fn install(target_tmpdir: &str, npm: &Path) -> PathBuf {
    let root = Path::new(target_tmpdir).join("azurite-npm");
    fs::create_dir_all(&root).expect("create the Azurite folder");
    let lock = File::create(root.join(".lock")).expect("create the Azurite lock file");
    lock.lock().expect("lock the Azurite folder");
    let prefix = root.join("pkg");
    let script = prefix.join("node_modules/azurite/dist/src/blob/main.js");
    let marker = root.join("installed");
    let wanted = format!(
        "package-lock sha256 {}\n",
        crate::python::sha256_hex(&format!("{PACKAGE_JSON}{PACKAGE_LOCK}"))
    );
    let installed = fs::read_to_string(&marker).is_ok_and(|text| text == wanted);
    if !installed || !script.exists() {
        let _ = fs::remove_file(&marker);
        if prefix.exists() {
            fs::remove_dir_all(&prefix).expect("remove an outdated install");
        }
        fs::create_dir_all(&prefix).expect("create the Azurite package folder");
        fs::write(prefix.join("package.json"), PACKAGE_JSON).expect("write package.json");
        fs::write(prefix.join("package-lock.json"), PACKAGE_LOCK).expect("write the lock");
        // `npm ci` installs exactly the lock, checking each package's integrity hash, and
        // fails where the lock and package.json disagree.
        crate::python::run(Command::new(npm).arg("ci").current_dir(&prefix).args([
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
        ]));
        assert!(script.exists(), "{} is missing", script.display());
        fs::write(&marker, wanted).expect("write the install marker");
    }
    drop(lock);
    script
}

fn find_tool(name: &str) -> Option<PathBuf> {
    Command::new(name)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()
        .filter(std::process::ExitStatus::success)
        .map(|_| PathBuf::from(name))
}
