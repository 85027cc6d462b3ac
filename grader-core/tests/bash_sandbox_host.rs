//! What of the host crosses into `BashGrader`'s bubblewrap sandbox: not root (root inside is
//! an unprivileged host user, and the directories it may write are handed to it without
//! following anything the agent planted), not a descriptor of the grading process, not the
//! grading process's environment. Each check is a real command against real files and the
//! test's own processes. Where bwrap cannot sandbox the tests say so and pass, except under CI
//! (`CI` set), which installs bubblewrap and must run them.
#![cfg(all(target_os = "linux", feature = "bash"))]
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

mod bash_support;

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use bash_support::{assert_rerun_passed, bash, child::Bounded as _, scratch_dir};
use grader_core::sandbox::{DEFAULT_HOST_UID, HostUser, Limits, Sandbox};
use grader_core::{BashGrader, Failure, SubScore};

/// Whether bwrap can sandbox here; under CI it must.
fn sandboxing() -> bool {
    match Sandbox::check() {
        Ok(_) => true,
        Err(why) => {
            assert!(std::env::var_os("CI").is_none(), "CI must sandbox: {why}");
            eprintln!("skipping: {why}");
            false
        }
    }
}

fn root() -> bool {
    HostUser::applies()
}

async fn sandboxed(grader: BashGrader, sandbox: Sandbox) -> SubScore {
    let sub = grader
        .login_shell(false)
        .timeout(Duration::from_secs(60))
        .sandbox(sandbox)
        .grade(1.0)
        .await
        .unwrap();
    assert_eq!(sub.info().unwrap()["sandbox"], "bwrap", "{:?}", sub.info());
    sub
}

fn stdout(sub: &SubScore) -> &str {
    sub.info().unwrap()["stdout"].as_str().unwrap()
}

fn owner(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().uid()
}

/// Root inside is the host user outside: `/proc/self/uid_map` says so, root-only host files
/// stay unreadable, and what the command writes is the host user's, while it can still change
/// the files the grader put in its working directory.
#[tokio::test]
async fn root_inside_is_an_unprivileged_user_outside() {
    if !sandboxing() {
        return;
    }
    let dir = scratch_dir("host-user");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("given.txt"), "given\n").unwrap();
    std::fs::write(dir.join("sub/nested.txt"), "nested\n").unwrap();
    let command = "cat /proc/self/uid_map; id -u; \
         cat /etc/shadow > /dev/null 2>&1 && echo READ-SHADOW; \
         echo made > made.txt && echo changed >> given.txt && echo changed >> sub/nested.txt";
    let sub = sandboxed(bash(command).cwd(&dir), Sandbox::new()).await;
    assert_eq!(sub.value(), 1.0, "{:?}", sub.info());
    let out = stdout(&sub);
    assert!(!out.contains("READ-SHADOW"), "{out}");
    let map: Vec<u64> = out
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    let me = u64::from(rustix_free_euid());
    if root() {
        assert_eq!(map, [0, u64::from(DEFAULT_HOST_UID), 1], "{out}");
        assert_eq!(out.lines().nth(1), Some("0"), "root inside: {out}");
        assert_eq!(owner(&dir.join("made.txt")), DEFAULT_HOST_UID);
        assert_eq!(owner(&dir), DEFAULT_HOST_UID);
        assert_eq!(
            sub.info().unwrap()["sandbox_host_uid"],
            u64::from(DEFAULT_HOST_UID)
        );
    } else {
        // Not root: bwrap maps this user to itself, as before.
        assert_eq!(map, [me, me, 1], "{out}");
        assert_eq!(owner(&dir.join("made.txt")), rustix_free_euid());
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("given.txt")).unwrap(),
        "given\nchanged\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("sub/nested.txt")).unwrap(),
        "nested\nchanged\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A host user of the grader's choosing: mapped, owning what the command writes, recorded.
#[tokio::test]
async fn the_host_user_is_configurable() {
    if !sandboxing() {
        return;
    }
    let dir = scratch_dir("host-user-chosen");
    std::fs::create_dir_all(&dir).unwrap();
    let user = HostUser::new(2_100_000_123, 2_100_000_124).unwrap();
    let sub = sandboxed(
        bash("cat /proc/self/uid_map /proc/self/gid_map; touch made").cwd(&dir),
        Sandbox::new().host_user(user),
    )
    .await;
    assert_eq!(sub.value(), 1.0, "{:?}", sub.info());
    let info = sub.info().unwrap();
    assert_eq!(info["_parameters"]["sandbox"]["host_uid"], 2_100_000_123);
    if root() {
        let lines: Vec<Vec<&str>> = stdout(&sub)
            .lines()
            .map(|line| line.split_whitespace().collect())
            .collect();
        assert_eq!(lines, [["0", "2100000123", "1"], ["0", "2100000124", "1"]]);
        let made = std::fs::metadata(dir.join("made")).unwrap();
        assert_eq!((made.uid(), made.gid()), (2_100_000_123, 2_100_000_124));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What the agent may have planted in the working directory cannot make the hand-over give
/// away a host file: a link to a directory outside, a link to a file outside, a hard link to
/// a file outside. And a link on the way to the working directory that the sandbox's user
/// owns is refused.
#[tokio::test]
async fn the_hand_over_follows_nothing_the_agent_planted() {
    if !sandboxing() || !root() {
        eprintln!("skipping: only root hands directories over");
        return;
    }
    let base = scratch_dir("hand-over");
    let outside = base.join("outside");
    let cwd = base.join("cwd");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::write(outside.join("secret"), "secret").unwrap();
    std::fs::write(outside.join("linked"), "linked").unwrap();
    std::os::unix::fs::symlink(&outside, cwd.join("to-dir")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret"), cwd.join("to-file")).unwrap();
    std::fs::hard_link(outside.join("linked"), cwd.join("hard")).unwrap();

    let sub = sandboxed(
        bash("cat to-file hard 2>/dev/null; ls to-dir/ 2>/dev/null; echo done").cwd(&cwd),
        Sandbox::new(),
    )
    .await;
    assert_eq!(sub.value(), 1.0, "{:?}", sub.info());
    for path in [
        &outside,
        &outside.join("secret"),
        &outside.join("linked"),
        &cwd.join("hard"),
    ] {
        assert_eq!(owner(path), 0, "{} was given away", path.display());
    }
    assert_eq!(owner(&cwd), DEFAULT_HOST_UID);
    // The links lead nowhere inside (the outside directory is not there); the hard link is
    // the host file, readable as any file the host user may read.
    assert_eq!(stdout(&sub), "linkeddone\n", "{:?}", sub.info());

    // A link on the way to the working directory, owned by the sandbox's user (one it made in
    // an earlier grade), is not followed.
    let via = base.join("via");
    std::os::unix::fs::symlink(&cwd, &via).unwrap();
    let status = Command::new("chown")
        .args(["-h", &DEFAULT_HOST_UID.to_string()])
        .arg(&via)
        .status_bounded();
    assert!(status.success());
    let error = bash("true")
        .login_shell(false)
        .cwd(&via)
        .sandbox(Sandbox::new())
        .grade(1.0)
        .await
        .unwrap_err();
    assert!(
        matches!(&error.failure, Failure::Sandbox(why) if why.contains("symbolic link owned by uid 2100000000")),
        "{error}"
    );
    std::fs::remove_dir_all(&base).unwrap();
}

/// Set in the re-run test binary: the mount point inside the working directory.
const MOUNT_ENV: &str = "GRADER_BASH_HOST_MOUNT";

/// A filesystem mounted inside the working directory (here a host directory bound there, in
/// a mount namespace of the test's own) is not entered, and its root is not handed over.
#[test]
fn the_hand_over_stops_at_a_mount_point() {
    if !root() || !sandboxing() {
        eprintln!("skipping: only root hands directories over and mounts");
        return;
    }
    let base = scratch_dir("mount");
    let (outside, cwd) = (base.join("outside"), base.join("cwd"));
    std::fs::create_dir_all(cwd.join("mnt")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("host-file"), "host").unwrap();
    let exe = std::env::current_exe().unwrap();
    let output = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "bash", "-c"])
        .arg(r#"mount --bind "$1" "$2/mnt" && shift && exec "${@:2}""#)
        .args(["mount-inside"])
        .arg(&outside)
        .arg(&cwd)
        .arg(exe)
        .args(["--exact", "handed_over_with_a_mount_inside", "--nocapture"])
        .env(MOUNT_ENV, &cwd)
        .output_bounded();
    assert_rerun_passed(&output);
    assert_eq!(owner(&outside), 0);
    assert_eq!(owner(&outside.join("host-file")), 0);
    assert_eq!(owner(&cwd), DEFAULT_HOST_UID);
    std::fs::remove_dir_all(&base).unwrap();
}

/// Runs only inside the binary started by the test above.
#[test]
fn handed_over_with_a_mount_inside() {
    let Some(cwd) = std::env::var_os(MOUNT_ENV) else {
        return;
    };
    let cwd = Path::new(&cwd);
    assert!(cwd.join("mnt/host-file").exists(), "the bind is there");
    let sub = BashGrader::new("touch made")
        .login_shell(false)
        .cwd(cwd)
        .sandbox(Sandbox::new())
        .grade_blocking(1.0)
        .unwrap();
    assert_eq!(sub.value(), 1.0, "{:?}", sub.info());
    assert_eq!(
        owner(&cwd.join("mnt")),
        0,
        "the mounted root was given away"
    );
    assert_eq!(owner(&cwd.join("mnt/host-file")), 0);
}

/// A working directory the grader did not choose (this process's own) is bound as it is and
/// never handed over: its owner does not change.
#[tokio::test]
async fn an_inherited_working_directory_is_not_handed_over() {
    if !sandboxing() {
        return;
    }
    let here = std::env::current_dir().unwrap();
    let before = owner(&here);
    let sub = sandboxed(bash("pwd"), Sandbox::new()).await;
    assert_eq!(sub.value(), 1.0, "{:?}", sub.info());
    assert_eq!(stdout(&sub).trim(), here.to_str().unwrap());
    assert_eq!(owner(&here), before);
}

/// A working directory below one the host user may not search (a `0700` directory of root's,
/// as pytest's and many tools' temporary folders are) is refused before anything changes,
/// with an error naming that directory, where bwrap would fail with a bare "Permission denied".
#[tokio::test]
async fn a_working_directory_the_host_user_cannot_reach_is_refused_with_the_reason() {
    use std::os::unix::fs::PermissionsExt as _;
    if !sandboxing() || !root() {
        return;
    }
    let private = scratch_dir("private");
    let cwd = private.join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let result = bash("echo ran > f")
        .login_shell(false)
        .cwd(&cwd)
        .sandbox(Sandbox::new())
        .grade(1.0)
        .await;
    let error = result.unwrap_err().to_string();
    assert!(
        error.contains("cannot be reached by the sandbox's user")
            && error.contains(private.to_str().unwrap())
            && error.contains("mode 700"),
        "{error}"
    );
    assert!(!cwd.join("f").exists());
    assert_eq!(owner(&cwd), 0, "nothing was handed over");
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o755)).unwrap();
    let sub = sandboxed(bash("echo ran > f").cwd(&cwd), Sandbox::new()).await;
    assert_eq!(sub.value(), 1.0, "{:?}", sub.info());
    std::fs::remove_dir_all(&private).unwrap();
}

/// This process's effective uid.
fn rustix_free_euid() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    line.split_whitespace().nth(2).unwrap().parse().unwrap()
}

/// Set in the re-run test binary.
const CHILD_ENV: &str = "GRADER_BASH_HOST_CHILD";

/// The credentials the re-run binary holds.
const SECRET: &str = "sk-test-host-secret-value";

/// The grading process is started with a stray descriptor on `/` (7) and one on a file (8),
/// both inheritable, as a server started by a careless parent would hold them, and with a
/// credential in its environment.
#[test]
fn nothing_of_the_grading_process_crosses_into_the_command() {
    let exe = std::env::current_exe().unwrap();
    let file = scratch_dir("stray-file");
    std::fs::write(&file, "stray").unwrap();
    let output = Command::new("bash")
        .args([
            "-c",
            r#"exec 7</ 8<>"$1"; shift; exec "$@""#,
            "stray-descriptors",
        ])
        .arg(&file)
        .arg(exe)
        .args(["--exact", "graded_by_a_careless_process", "--nocapture"])
        .env(CHILD_ENV, "1")
        .env("OPENAI_API_KEY", SECRET)
        .output_bounded();
    assert_rerun_passed(&output);
    std::fs::remove_file(&file).unwrap();
}

/// Runs only inside the binary started by the test above.
#[test]
fn graded_by_a_careless_process() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    assert!(
        Path::new("/proc/self/fd/7").exists(),
        "the stray descriptor"
    );
    let look = "for fd in 7 8; do test -e /proc/$$/fd/$fd && echo LEAKED-$fd; done; \
                ls /proc/self/fd/7/ 2>/dev/null | head -1";
    let env = format!(
        "tr '\\0' '\\n' < /proc/$PPID/environ 2>/dev/null | grep -c {SECRET}; \
         cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c {SECRET}; true"
    );
    let dir = scratch_dir("careless");
    std::fs::create_dir_all(&dir).unwrap();
    let grade = |grader: BashGrader| grader.login_shell(false).grade_blocking(1.0).unwrap();

    // Unsandboxed with the default limits, and in the sandbox: no stray descriptor.
    let sub = grade(bash(look).cwd(&dir));
    assert_eq!(stdout(&sub), "", "{:?}", sub.info());
    if sandboxing() {
        let sub = grade(bash(look).cwd(&dir).sandbox(Sandbox::new()));
        assert_eq!(stdout(&sub), "", "{:?}", sub.info());
        // Not even the descriptors bwrap was given to bind from: past its three streams, the
        // shell holds nothing, and bwrap's init inside the sandbox only its own event counter.
        let sub = grade(
            bash(
                "for f in /proc/$$/fd/* /proc/1/fd/*; do \
                 n=${f##*/}; if (( n > 2 )); then readlink $f; fi; done; true",
            )
            .cwd(&dir)
            .sandbox(Sandbox::new()),
        );
        assert_eq!(stdout(&sub), "anon_inode:[eventfd]\n", "{:?}", sub.info());
        // Nor the grading process's environment, from any process it can see.
        let sub = grade(bash(&env).cwd(&dir).sandbox(Sandbox::new()));
        assert_eq!(stdout(&sub), "0\n0\n", "{:?}", sub.info());
    }
    // As documented: with no limit and no sandbox the command starts as it did before
    // limits existed, and inherits what this process leaves open.
    let sub = grade(bash(look).cwd(&dir).limits(Limits::none()));
    assert!(stdout(&sub).contains("LEAKED-7"), "{:?}", sub.info());
    // As documented: unsandboxed, the command runs as this process's user and reads this
    // process's environment through /proc; withholding the key from its own environment does
    // not keep it. The sandbox is the way to keep it.
    let sub = grade(bash(&format!("{env}; printenv OPENAI_API_KEY")).cwd(&dir));
    assert!(stdout(&sub).starts_with("1\n"), "{:?}", sub.info());
    std::fs::remove_dir_all(&dir).unwrap();
}
