//! The ways out of a workspace's sandbox: the egress proxy of `allowed_hosts` (a listed host
//! through, any other refused, a name leading to a private address refused unless allowed),
//! `Peer` services of the host at the address the task expects, and the author's `Mount`s.
//! Every server here is a real one on the host's 127.0.0.1; sessions reach them only through
//! the routes given (bash's `/dev/tcp`, so that no client program is needed in the sandbox).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use grader_env::workspace::{Mount, Peer, Workspace, WorkspaceBuilder, WorkspaceError};
use grader_tests::sandboxing::can_sandbox;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A bound on anything here that could hang, so that a failure fails rather than stalls.
const BOUND: Duration = Duration::from_secs(60);

fn root(name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("workspace-egress-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    root
}

/// An HTTP server on the host's loopback answering every request with `hello from <path>`,
/// and an echo server beside it; returns their ports. Both run until the runtime ends.
async fn servers() -> (u16, u16) {
    let http = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let echo = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let ports = (
        http.local_addr().unwrap().port(),
        echo.local_addr().unwrap().port(),
    );
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = http.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0_u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).await.unwrap_or(0) == 1
                {
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let path = head.split(' ').nth(1).unwrap_or("?").to_owned();
                let host = head
                    .lines()
                    .find_map(|line| line.strip_prefix("Host: ").or(line.strip_prefix("host: ")))
                    .unwrap_or("-")
                    .to_owned();
                let body = format!("hello from {path} for {host}");
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(reply.as_bytes()).await;
            });
        }
    });
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = echo.accept().await {
            tokio::spawn(async move {
                let (mut reader, mut writer) = stream.split();
                let _ = tokio::io::copy(&mut reader, &mut writer).await;
            });
        }
    });
    ports
}

/// Runs `script` as a session would, returning its stdout (and failing on a bound).
async fn session(workspace: &Workspace, script: &str) -> String {
    let out = tokio::time::timeout(BOUND, workspace.run(script))
        .await
        .unwrap()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// A script that sends `request` (`\r\n` as written) to `host:port` over `/dev/tcp` and prints
/// the reply.
fn raw(host: &str, port: u16, request: &str) -> String {
    format!(
        "exec 3<>/dev/tcp/{host}/{port} || {{ echo CANNOT-CONNECT; exit 0; }}; \
         printf '{request}' >&3; timeout 20 cat <&3"
    )
}

/// A sandboxed workspace on a fresh root named `name`, built as `build` says; `None` (skip)
/// where bwrap cannot sandbox.
async fn sandboxed(
    name: &str,
    build: impl FnOnce(WorkspaceBuilder) -> WorkspaceBuilder,
) -> Option<(Workspace, PathBuf)> {
    if !can_sandbox() {
        return None;
    }
    let root = root(name);
    let workspace = build(Workspace::builder(&root).require_isolation(true))
        .start()
        .await
        .unwrap();
    Some((workspace, root))
}

/// As [`sandboxed`], its proxy letting through `localhost` (the one name this machine
/// resolves itself), private addresses allowed so that the servers here are reachable.
async fn to_localhost(name: &str) -> Option<(Workspace, PathBuf)> {
    sandboxed(name, |b| {
        b.allowed_hosts(["localhost"]).allow_private_addresses(true)
    })
    .await
}

/// Stops `workspace` and removes its root.
async fn done(workspace: Workspace, root: PathBuf) {
    workspace.stop().await;
    std::fs::remove_dir_all(&root).unwrap();
}

/// Sends `request` to the proxy from inside the sandbox; the reply.
async fn through_proxy(workspace: &Workspace, request: &str) -> String {
    session(workspace, &raw("127.0.0.1", 3128, request)).await
}

/// Asserts that `reply` is a refusal saying `reason`.
fn assert_refused(reply: &str, status: &str, reason: &str, request: &str) {
    assert!(
        reply.starts_with(&format!("HTTP/1.1 {status}")),
        "{request}: {reply}"
    );
    assert!(
        reply
            .to_ascii_lowercase()
            .contains(&format!("x-proxy-error: {reason}")),
        "{request}: {reply}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_hosts_pass_the_proxy_and_nothing_else_leaves() {
    let (http, echo) = servers().await;
    let Some((workspace, root)) = to_localhost("proxy").await else {
        return;
    };

    // Sessions are pointed at the proxy, in every spelling clients read.
    let vars = session(&workspace, "echo $http_proxy $HTTPS_PROXY $no_proxy").await;
    assert_eq!(
        vars.trim(),
        "http://127.0.0.1:3128 http://127.0.0.1:3128 127.0.0.1,localhost"
    );

    // A plain-HTTP request to an allowed host goes through, in origin form, with its Host.
    let request = format!(
        "GET http://localhost:{http}/index?q=1 HTTP/1.1\\r\\nHost: localhost:{http}\\r\\n\
         Connection: close\\r\\n\\r\\n"
    );
    let reply = through_proxy(&workspace, &request).await;
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(
        reply.ends_with(&format!("hello from /index?q=1 for localhost:{http}")),
        "{reply}"
    );

    // A tunnel to an allowed host carries bytes both ways.
    let tunnel = format!(
        "exec 3<>/dev/tcp/127.0.0.1/3128; \
         printf 'CONNECT localhost:{echo} HTTP/1.1\\r\\nHost: localhost:{echo}\\r\\n\\r\\n' >&3; \
         IFS= read -r status <&3; echo \"$status\"; \
         while IFS= read -r line <&3 && [ \"$line\" != $'\\r' ]; do :; done; \
         printf 'ping through\\n' >&3; head -n1 <&3"
    );
    let reply = session(&workspace, &tunnel).await;
    assert_eq!(reply, "HTTP/1.1 200 OK\r\nping through\n", "{reply:?}");

    // Any other host is refused, loudly, whichever way it is asked for.
    for request in [
        "GET http://example.com/ HTTP/1.1\\r\\nHost: example.com\\r\\n".to_owned(),
        "CONNECT example.com:443 HTTP/1.1\\r\\nHost: example.com:443\\r\\n".to_owned(),
        "CONNECT localhost.evil.test:443 HTTP/1.1\\r\\n".to_owned(),
        format!("GET http://127.0.0.1:{http}/ HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n"),
        "GET /no/host HTTP/1.1\\r\\nHost: localhost\\r\\n".to_owned(),
    ] {
        let request = format!("{request}Connection: close\\r\\n\\r\\n");
        let reply = through_proxy(&workspace, &request).await;
        assert_refused(&reply, "403", "blocked-by-allowlist", &request);
    }

    // The host itself stays out of reach: its servers, and anything else on its loopback.
    for port in [http, echo] {
        let reply = session(&workspace, &raw("127.0.0.1", port, "x")).await;
        assert!(reply.contains("CANNOT-CONNECT"), "{port}: {reply}");
    }

    // A grader in the sandbox is pointed at the same proxy, under the same policy.
    let sub = workspace
        .bash(format!(
            "test \"$http_proxy\" = http://127.0.0.1:3128 && {{ {}; }} | grep -q 'hello from /graded'",
            raw("127.0.0.1", 3128, &request.replace("/index?q=1", "/graded"))
        ))
        .await
        .unwrap()
        .login_shell(false)
        .timeout(BOUND)
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(sub.value(), 1.0, "{:?}", sub.info());

    // A fresh sandbox (the next task) gets its routes again.
    workspace.discard_sandbox().await;
    let reply = through_proxy(&workspace, &request).await;
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    done(workspace, root).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_name_that_leads_into_the_hosts_network_is_refused() {
    let (http, _) = servers().await;
    let Some((workspace, root)) =
        sandboxed("address", |b| b.allowed_hosts(["localhost", "*"])).await
    else {
        return;
    };
    for request in [
        format!("GET http://localhost:{http}/ HTTP/1.1\\r\\nHost: localhost\\r\\n"),
        format!("CONNECT 127.0.0.1:{http} HTTP/1.1\\r\\n"),
        "CONNECT [::1]:22 HTTP/1.1\\r\\n".to_owned(),
    ] {
        let request = format!("{request}Connection: close\\r\\n\\r\\n");
        let reply = through_proxy(&workspace, &request).await;
        assert_refused(&reply, "403", "blocked-by-address", &request);
    }
    workspace.stop().await;

    // Private addresses opened to the hosts named stay closed to those only "*" lets through.
    let workspace = Workspace::builder(&root)
        .require_isolation(true)
        .allowed_hosts(["*"])
        .allow_private_addresses(true)
        .start()
        .await
        .unwrap();
    let request = format!("CONNECT 127.0.0.1:{http} HTTP/1.1\\r\\nConnection: close\\r\\n\\r\\n");
    let reply = through_proxy(&workspace, &request).await;
    assert_refused(&reply, "403", "blocked-by-address", &request);
    done(workspace, root).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tunnel_left_open_ends_with_the_sandbox() {
    // An upstream that reports when its one connection ends.
    let upstream = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = upstream.local_addr().unwrap().port();
    let (ended, mut ended_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let (mut stream, _) = upstream.accept().await.unwrap();
        let mut sink = Vec::new();
        let _ = stream.read_to_end(&mut sink).await;
        let _ = ended.send(());
    });
    let Some((workspace, root)) = to_localhost("tunnel").await else {
        return;
    };
    // The agent detaches a process holding a tunnel open.
    let out = session(
        &workspace,
        &format!(
            "setsid -f bash -c 'exec 3<>/dev/tcp/127.0.0.1/3128; \
             printf \"CONNECT localhost:{port} HTTP/1.1\\r\\n\\r\\n\" >&3; exec sleep 100000 <&3' \
             </dev/null >/dev/null 2>&1; echo detached"
        ),
    )
    .await;
    assert_eq!(out.trim(), "detached");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        ended_rx.try_recv().is_err(),
        "the tunnel is open while the task runs"
    );
    // The task ends: the tunnel ends with it.
    workspace.discard_sandbox().await;
    tokio::time::timeout(BOUND, ended_rx)
        .await
        .unwrap()
        .unwrap();
    done(workspace, root).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_opening_connections_without_end_is_bounded_and_the_proxy_keeps_serving() {
    let (http, _) = servers().await;
    let Some((workspace, root)) = to_localhost("flood").await else {
        return;
    };
    // 1 024 idle connections are held; the next is closed as soon as it is accepted.
    let flood = session(
        &workspace,
        "ulimit -n 4096 || exit 1; \
         for i in $(seq 1024); do exec {fd}<>/dev/tcp/127.0.0.1/3128 || exit 1; done; \
         exec {extra}<>/dev/tcp/127.0.0.1/3128; timeout 20 cat <&$extra; echo \"closed $?\"",
    )
    .await;
    assert_eq!(flood.trim(), "closed 0", "{flood}");
    // Requests no proxy could carry get a 4xx each, and break nothing.
    for garbage in [
        "garbage\\r\\n\\r\\n",
        "CONNECT :80 HTTP/1.1\\r\\nConnection: close\\r\\n\\r\\n",
        "CONNECT localhost:99999 HTTP/1.1\\r\\nConnection: close\\r\\n\\r\\n",
        "GET http://[::1/ HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n",
    ] {
        let reply = through_proxy(&workspace, garbage).await;
        assert!(reply.starts_with("HTTP/1.1 4"), "{garbage}: {reply}");
    }
    // Once they are gone, the proxy serves as before.
    let request = format!(
        "GET http://localhost:{http}/after HTTP/1.1\\r\\nHost: localhost\\r\\n\
         Connection: close\\r\\n\\r\\n"
    );
    let reply = through_proxy(&workspace, &request).await;
    assert!(reply.contains("hello from /after"), "{reply}");
    done(workspace, root).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peers_answer_at_the_address_the_task_expects() {
    let (http, echo) = servers().await;
    let Some((workspace, root)) = sandboxed("peers", |b| {
        b.peer(Peer::new("db", 5432).at(format!("127.0.0.1:{http}").parse().unwrap()))
            .peer(Peer::new("cache", 5432).at(format!("127.0.0.1:{echo}").parse().unwrap()))
    })
    .await
    else {
        return;
    };
    // No proxy without allowed hosts: the variables are not set.
    assert_eq!(
        session(&workspace, "echo \"[$http_proxy]\"").await.trim(),
        "[]"
    );
    // The first peer holds 127.0.0.1:5432, the second moves down the loopback; both by name.
    let hosts = session(&workspace, "getent hosts db cache").await;
    let hosts: Vec<&str> = hosts.split_whitespace().collect();
    assert_eq!(hosts, ["127.0.0.1", "db", "127.0.0.2", "cache"]);
    let reply = session(
        &workspace,
        &raw("db", 5432, "GET /rows HTTP/1.1\\r\\nHost: db\\r\\n\\r\\n"),
    )
    .await;
    assert!(reply.ends_with("hello from /rows for db"), "{reply}");
    let reply = session(
        &workspace,
        "exec 4<>/dev/tcp/cache/5432; printf 'echoed\\n' >&4; head -n1 <&4",
    )
    .await;
    assert_eq!(reply, "echoed\n");
    // Nothing else of the host's is reachable.
    let reply = session(&workspace, &raw("127.0.0.1", http, "x")).await;
    assert!(reply.contains("CANNOT-CONNECT"), "{reply}");
    done(workspace, root).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_authors_mount_goes_where_it_says_read_only_inside_the_root() {
    let tests = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("workspace-egress-mounted-{}", std::process::id()));
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::write(tests.join("test_app.py"), "assert True\n").unwrap();
    let Some((workspace, root)) = sandboxed("mount", |b| {
        b.mount(Mount::read_only(&tests, "/workspace/tests"))
            .mount(Mount::read_only("/no/such/dir", "/data").optional())
            .mount(Mount::tmpfs("/scratch"))
    })
    .await
    else {
        return;
    };
    let out = session(
        &workspace,
        "cat tests/test_app.py; { echo x > tests/test_app.py; } 2>/dev/null || echo read-only; \
         test -e /data || echo no-data; echo kept > /scratch/f && cat /scratch/f",
    )
    .await;
    assert_eq!(out, "assert True\nread-only\nno-data\nkept\n", "{out:?}");
    assert_eq!(
        std::fs::read_to_string(tests.join("test_app.py")).unwrap(),
        "assert True\n"
    );
    done(workspace, root).await;
    std::fs::remove_dir_all(&tests).unwrap();
}

#[tokio::test]
async fn routes_and_mounts_that_cannot_be_made_are_refused_at_start() {
    let root = root("refused");
    let error = Workspace::builder(&root)
        .allowed_hosts(["https://pypi.org"])
        .start()
        .await
        .unwrap_err();
    assert!(matches!(&error, WorkspaceError::AllowedHost(host) if host == "https://pypi.org"));
    assert!(
        error.to_string().contains("\"https://pypi.org\""),
        "{error}"
    );
    let error = Workspace::builder(&root)
        .peer(Peer::new("db; rm -rf /", 5432))
        .start()
        .await
        .unwrap_err();
    assert!(matches!(&error, WorkspaceError::Peer { name, .. } if name == "db; rm -rf /"));
    let error = Workspace::builder(&root)
        .mount(Mount::tmpfs("scratch"))
        .start()
        .await
        .unwrap_err();
    assert!(
        matches!(&error, WorkspaceError::Mount { target, .. } if target == Path::new("scratch")),
        "{error}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// The answer a script printed, as compared with the reference's: the status code of each
/// HTTP status line, each `X-Proxy-Error` (any case), each line that is not HTTP at all
/// (`getent`, a marker), in order; the servers' own headers (`Date`, `Server`) and the
/// reference's HTML error pages left out.
fn answers(printed: &str) -> Vec<String> {
    printed
        .lines()
        .map(|line| line.trim_end_matches('\r'))
        .filter_map(|line| {
            if let Some(rest) = line.strip_prefix("HTTP/1.") {
                Some(format!("status {}", rest.get(2..5).unwrap_or(rest)))
            } else if let Some((name, value)) = line.split_once(':') {
                name.eq_ignore_ascii_case("x-proxy-error")
                    .then(|| format!("error {}", value.trim()))
            } else if line.is_empty() || line.trim_start().starts_with('<') {
                None
            } else {
                Some(line.split_whitespace().collect::<Vec<_>>().join(" "))
            }
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_requests_get_the_references_answers() {
    if !can_sandbox() {
        return;
    }
    let Some(python) = grader_tests::python::hud_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let (http, _) = servers().await;
    // Only names this machine resolves itself are allowed: nothing here asks a DNS server.
    let closing = |request: String| format!("{request}Connection: close\\r\\n\\r\\n");
    let mut scripts: Vec<String> = [
        "GET http://example.com/ HTTP/1.1\\r\\nHost: example.com\\r\\n".to_owned(),
        "CONNECT example.com:443 HTTP/1.1\\r\\n".to_owned(),
        "CONNECT evil-localhost:443 HTTP/1.1\\r\\n".to_owned(),
        format!("CONNECT localhost:{http} HTTP/1.1\\r\\n"),
        format!("GET http://localhost:{http}/ HTTP/1.1\\r\\nHost: localhost\\r\\n"),
        format!("GET http://LOCALHOST:{http}/ HTTP/1.1\\r\\nHost: localhost\\r\\n"),
        "CONNECT localhost HTTP/1.1\\r\\n".to_owned(),
        "GET /no/host HTTP/1.1\\r\\nHost: localhost\\r\\n".to_owned(),
        "POST http://example.com/upload HTTP/1.1\\r\\nContent-Length: 3\\r\\n".to_owned(),
    ]
    .into_iter()
    .map(|request| raw("127.0.0.1", 3128, &closing(request)))
    .collect();
    scripts.extend([
        raw("127.0.0.1", http, "x"),
        raw("127.0.0.1", 22, "x"),
        format!(
            "getent hosts db; {}",
            raw(
                "db",
                5432,
                "GET /rows HTTP/1.1\\r\\nHost: db\\r\\nConnection: close\\r\\n\\r\\n"
            )
        ),
    ]);
    let root = root("reference");
    let spec = serde_json::json!({
        "root": root.join("theirs"),
        "allowed": ["localhost"],
        "peers": [["db", 5432, "127.0.0.1", http]],
        "scripts": scripts,
    });
    let mut driver = tokio::process::Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/egress_driver.py"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = driver.stdin.take().unwrap();
    stdin.write_all(spec.to_string().as_bytes()).await.unwrap();
    drop(stdin);
    let output = tokio::time::timeout(Duration::from_secs(300), driver.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let theirs: Vec<String> = serde_json::from_slice(&output.stdout).unwrap();

    let workspace = Workspace::builder(root.join("ours"))
        .require_isolation(true)
        .allowed_hosts(["localhost"])
        .peer(Peer::new("db", 5432).at(format!("127.0.0.1:{http}").parse().unwrap()))
        .start()
        .await
        .unwrap();
    for (script, theirs) in scripts.iter().zip(&theirs) {
        let ours = session(&workspace, script).await;
        let (ours, theirs) = (answers(&ours), answers(theirs));
        assert_eq!(ours, theirs, "{script}");
        assert!(!theirs.is_empty(), "{script}");
    }
    done(workspace, root).await;
}
