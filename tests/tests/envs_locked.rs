//! The test environments install from their committed locks, and those locks are complete:
//! every requirement pinned to one version with its hashes, every `tests/envs/NAME.in` locked
//! (its own pins present in its lock, so an edited `.in` without a renewed lock fails here) and
//! installed by a test environment, and Azurite's `package-lock.json` matching its
//! `package.json`, with an integrity hash for every package.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use grader_tests::azurite::{PACKAGE_JSON, PACKAGE_LOCK};
use grader_tests::python::{ALL, BUILD};
use serde_json::Value;

fn envs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("envs")
}

/// A package name as PyPI compares them (PEP 503): lower case, runs of `-`, `_`, `.` as `-`.
fn normalized(name: &str) -> String {
    let mut out = String::new();
    let mut in_run = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !in_run {
                out.push('-');
            }
            in_run = true;
        } else {
            out.extend(c.to_lowercase());
            in_run = false;
        }
    }
    out
}

/// The pins of a lock: normalized name to version, each checked to carry hashes.
fn pins(lock: &str, what: &str) -> BTreeMap<String, String> {
    let mut pins = BTreeMap::new();
    // A requirement and its `--hash` options are one logical line, continued with `\`.
    let joined = lock.replace("\\\n", " ");
    for line in joined.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let requirement = words.next().expect("a requirement");
        let (name, version) = requirement
            .split_once("==")
            .unwrap_or_else(|| panic!("{what}: `{requirement}` is not pinned with =="));
        assert!(
            !version.contains([',', '<', '>', '*', ';']),
            "{what}: `{requirement}` is not pinned to one version"
        );
        let hashes = words
            .filter(|word| word.starts_with("--hash=sha256:"))
            .count();
        assert!(hashes > 0, "{what}: `{requirement}` has no hash");
        let name = name.split('[').next().expect("a name");
        assert!(
            pins.insert(normalized(name), version.to_owned()).is_none(),
            "{what}: {name} is pinned twice"
        );
    }
    assert!(!pins.is_empty(), "{what} pins nothing");
    pins
}

#[test]
fn every_lock_pins_each_package_to_one_version_with_hashes() {
    for lock in ALL {
        pins(lock.text, lock.folder);
    }
    pins(BUILD, "build.txt");
}

#[test]
fn every_requirements_file_is_locked_and_its_lock_is_installed_by_the_tests() {
    let mut locked_here = 0;
    for entry in std::fs::read_dir(envs_dir()).expect("read tests/envs") {
        let path = entry.expect("an entry").path();
        if path.extension().is_none_or(|ext| ext != "in") {
            continue;
        }
        let stem = path.file_stem().expect("a name").to_string_lossy();
        let lock_path = path.with_extension("txt");
        let lock = std::fs::read_to_string(&lock_path)
            .unwrap_or_else(|e| panic!("{stem}.in has no lock {}: {e}", lock_path.display()));
        // The lock the tests install is the committed file itself.
        if stem == "build" {
            assert_eq!(lock, BUILD, "build.txt");
        } else {
            let env = ALL
                .iter()
                .find(|env| env.text == lock)
                .unwrap_or_else(|| panic!("no test environment installs {stem}.txt"));
            assert_eq!(env.folder, format!("{stem}-venv"));
        }
        let pinned = pins(&lock, &format!("{stem}.txt"));
        let wanted = std::fs::read_to_string(&path).expect("read the .in file");
        for line in wanted.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((name, version)) = line.split_once("==") else {
                // An unpinned build backend: any version the lock chose.
                let name = normalized(line);
                assert!(pinned.contains_key(&name), "{stem}.txt lacks {line}");
                continue;
            };
            let name = normalized(name.split('[').next().expect("a name"));
            assert_eq!(
                pinned.get(&name).map(String::as_str),
                Some(version),
                "{stem}.in asks for {line}: renew its lock with scripts/lock-test-envs.sh {stem}"
            );
        }
        locked_here += 1;
    }
    // Each environment of the tests, and the build backends.
    assert_eq!(locked_here, ALL.len() + 1);
}

#[test]
fn the_azurite_lock_matches_its_package_and_has_an_integrity_hash_for_every_package() {
    let package: Value = serde_json::from_str(PACKAGE_JSON).expect("package.json is JSON");
    let lock: Value = serde_json::from_str(PACKAGE_LOCK).expect("package-lock.json is JSON");
    assert_eq!(
        lock["packages"][""]["dependencies"], package["dependencies"],
        "package-lock.json was not renewed after package.json changed"
    );
    let azurite = &lock["packages"]["node_modules/azurite"];
    assert_eq!(azurite["version"], package["dependencies"]["azurite"]);
    let packages = lock["packages"].as_object().expect("packages");
    assert!(packages.len() > 100, "{} packages", packages.len());
    for (path, entry) in packages {
        if path.is_empty() {
            continue;
        }
        assert!(entry["version"].is_string(), "{path} has no version");
        assert!(
            entry["integrity"]
                .as_str()
                .is_some_and(|hash| hash.starts_with("sha512-") || hash.starts_with("sha1-")),
            "{path} has no integrity hash"
        );
    }
}

#[test]
fn an_environment_is_made_again_when_its_lock_changes() {
    use grader_tests::python::{Lock, VERIFIERS, venv_python};
    let target = tempfile::tempdir().expect("a scratch target directory");
    let target_tmpdir = target.path().to_str().expect("a UTF-8 path");
    // verifiers' lock: one wheel, no dependencies.
    let first = Lock {
        folder: "remade-venv",
        ..VERIFIERS
    };
    let Some(python) = venv_python(target_tmpdir, &first) else {
        return;
    };
    let root = target.path().join("remade-venv");
    let marker = std::fs::read_to_string(root.join("installed")).expect("the marker");
    assert!(marker.contains("lock sha256 "), "{marker}");
    // Left inside the venv: gone only if the venv is made again.
    let witness = root.join("env/witness");
    std::fs::write(&witness, "").expect("write into the venv");

    assert_eq!(venv_python(target_tmpdir, &first), Some(python.clone()));
    assert!(
        witness.exists(),
        "made again although its lock did not change"
    );

    let changed: &'static str =
        Box::leak(format!("{}# renewed\n", VERIFIERS.text).into_boxed_str());
    let second = Lock {
        text: changed,
        ..first
    };
    assert_eq!(venv_python(target_tmpdir, &second), Some(python));
    assert!(
        !witness.exists(),
        "not made again although its lock changed"
    );
    let remade = std::fs::read_to_string(root.join("installed")).expect("the marker");
    assert_ne!(marker, remade);
}
