//! A real headless browser for the HTML report's tests: Chromium from Debian's packages.
//!
//! [`chromium`] finds `/usr/bin/chromium`, or installs it with `apt-get` the first time (as
//! root, without prompts, `--no-install-recommends`, serialized across test processes by a
//! file lock): about 25 packages, 290 MB on disk, about a minute on a warm mirror. Where it is
//! absent and cannot be installed, it returns `None` after saying why, except under CI (`CI`
//! set), where that is a failure.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use grader_tests::child::Bounded as _;

const CHROMIUM: &str = "/usr/bin/chromium";

/// The Debian packages installed: the browser and one font so text renders.
const PACKAGES: [&str; 2] = ["chromium", "fonts-dejavu-core"];

/// The browser, installed on first use where possible.
pub fn chromium() -> Option<PathBuf> {
    let path = PathBuf::from(CHROMIUM);
    if path.exists() {
        return Some(path);
    }
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("chromium-install");
    fs::create_dir_all(&root).expect("create the install folder");
    let lock = File::create(root.join(".lock")).expect("create the install lock");
    lock.lock().expect("lock the install folder");
    if !path.exists() {
        match install() {
            Ok(()) => {}
            Err(why) => {
                assert!(
                    std::env::var_os("CI").is_none(),
                    "Chromium is required under CI and could not be installed: {why}"
                );
                eprintln!("skipping the browser test: Chromium is not installed ({why})");
                return None;
            }
        }
    }
    drop(lock);
    path.exists().then_some(path)
}

fn install() -> Result<(), String> {
    let uid = Command::new("id").arg("-u").output_bounded();
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Err("not root, so apt-get cannot install it".to_owned());
    }
    if !Path::new("/usr/bin/apt-get").exists() {
        return Err("no apt-get on this machine".to_owned());
    }
    let apt = |args: &[&str]| -> Result<(), String> {
        let output = Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output_bounded();
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "apt-get {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr)
            ))
        }
    };
    let mut install = vec!["install", "-y", "-qq", "--no-install-recommends"];
    install.extend(PACKAGES);
    if apt(&install).is_err() {
        // The package lists may be missing or stale: refresh them once and try again.
        apt(&["update", "-qq"])?;
        apt(&install)?;
    }
    if Path::new(CHROMIUM).exists() {
        Ok(())
    } else {
        Err(format!(
            "apt-get installed {PACKAGES:?} but {CHROMIUM} is missing"
        ))
    }
}

/// Runs `chromium` headless on `page` with `extra` arguments (`--dump-dom`,
/// `--screenshot=…`), with a fresh profile, no network features, and a two-minute limit after
/// which the browser's whole process group is killed.
pub fn run(chromium: &Path, page: &Path, extra: &[&str]) -> Output {
    run_url(chromium, &format!("file://{}", page.display()), extra)
}

/// As [`run`], on a URL (a page with a fragment, `file:///…/report.html#status=failed`, or a
/// server on 127.0.0.1).
pub fn run_url(chromium: &Path, url: &str, extra: &[&str]) -> Output {
    use std::os::unix::process::CommandExt as _;
    let profile = tempfile::tempdir().expect("a profile folder");
    let mut command = Command::new(chromium);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let child = command.spawn().expect("start chromium");
    let group = child.id();
    let (done, wait) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let output = child.wait_with_output();
        let _ = done.send(());
        output
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    let finished = loop {
        if wait.recv_timeout(Duration::from_millis(200)).is_ok() {
            break true;
        }
        if Instant::now() > deadline {
            break false;
        }
    };
    // Whatever is left of the browser's group (helpers of a finished browser, or all of a hung
    // one) goes now.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{group}")])
        .stderr(Stdio::null())
        .status_bounded();
    let output = waiter
        .join()
        .expect("the waiting thread")
        .expect("chromium's output");
    assert!(
        finished,
        "chromium did not finish within two minutes: {output:?}"
    );
    output
}

/// A process that leads its own process group (started with `process_group(0)`); the whole
/// group is killed and the leader reaped when this is dropped, so a failed assertion leaves
/// nothing running.
pub struct Group(pub std::process::Child);

impl Drop for Group {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.0.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.0.wait();
    }
}

/// What [`look`] is to do on a page.
pub struct Look<'a> {
    /// The page.
    pub url: &'a str,
    /// A JavaScript expression to wait for until it is true.
    pub wait: &'a str,
    /// How long to wait for it, in seconds, before failing.
    pub timeout_secs: u32,
    /// Expressions whose values are returned, evaluated once `wait` is true.
    pub evaluate: &'a [&'a str],
    /// Where to save a screenshot of the window, if anywhere.
    pub screenshot: Option<&'a Path>,
    /// The window's size.
    pub size: (u32, u32),
}

/// Opens a page in headless Chromium driven over the DevTools protocol (by `cdp.py`, run with
/// `python`, the Inspect AI test venv's, which has aiohttp), for pages that are ready only
/// after the load event (the viewer of Inspect AI, or a measure of paint timing): waits for
/// `look.wait`, returns the values of `look.evaluate`, takes the screenshot. Chromium's whole
/// process group is killed afterwards, whatever happens.
pub fn look(chromium: &Path, python: &Path, look: &Look<'_>) -> Vec<serde_json::Value> {
    use std::os::unix::process::CommandExt as _;
    let profile = tempfile::tempdir().expect("a profile folder");
    let child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("start chromium");
    let group = Group(child);
    // Chromium writes the port it listens on into the profile.
    let port_file = profile.path().join("DevToolsActivePort");
    let deadline = Instant::now() + Duration::from_secs(60);
    let port = loop {
        if let Some(port) = fs::read_to_string(&port_file)
            .ok()
            .and_then(|text| text.lines().next().and_then(|l| l.parse::<u16>().ok()))
        {
            break port;
        }
        assert!(Instant::now() < deadline, "chromium did not open its port");
        std::thread::sleep(Duration::from_millis(50));
    };
    let orders = serde_json::json!({
        "port": port,
        "url": look.url,
        "wait": look.wait,
        "evaluate": look.evaluate,
        "screenshot": look.screenshot.map(|p| p.display().to_string()),
        "width": look.size.0,
        "height": look.size.1,
        "timeout": look.timeout_secs,
    });
    let printed =
        grader_tests::python::run_script(python, include_str!("cdp.py"), &orders.to_string());
    let values: Vec<serde_json::Value> = serde_json::from_str(&printed).expect("cdp.py's JSON");
    drop(group);
    values
}
