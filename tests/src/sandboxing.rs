//! For the tests that need bubblewrap: whether it can sandbox here, and what of a test's
//! processes the host still sees.

/// Whether bwrap can sandbox here; outside CI a test that needs it skips, saying so.
///
/// # Panics
/// Under CI (`CI` set), where bwrap cannot sandbox: CI installs it, and the test must run.
#[must_use]
pub fn can_sandbox() -> bool {
    match grader_core::sandbox::Sandbox::check() {
        Ok(_) => true,
        Err(why) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "bwrap must sandbox under CI: {why}"
            );
            eprintln!("skipping: {why}");
            false
        }
    }
}

/// How many host processes run `sleep <marker>` (a marker no other test sleeps for).
///
/// # Panics
/// When `/proc` cannot be read.
#[must_use]
pub fn sleeping(marker: &str) -> usize {
    let want = format!("sleep\0{marker}\0");
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter(|entry| {
            std::fs::read(entry.path().join("cmdline")).is_ok_and(|c| c == want.as_bytes())
        })
        .count()
}
