//! Which paths the change tracker leaves out or never reads, as the reference's file tracker
//! decides: its pattern lists, its matching rule, and Python's `fnmatch` (case-sensitive, as
//! on POSIX).

/// Noise left out of tracking entirely (build output, caches, version control): the
/// reference's `DEFAULT_EXCLUDE_PATTERNS`. A pattern ending in `/` names a directory anywhere
/// in the tree; any other is matched against a path's last component.
pub const DEFAULT_EXCLUDES: &[&str] = &[
    "node_modules/",
    ".venv/",
    "__pycache__/",
    "*.pyc",
    "*.pyo",
    ".cache/",
    ".npm/",
    ".git",
    ".hg",
    ".svn",
    ".jj",
    ".hud/",
    ".tmp/",
    ".gradle/",
    ".tox/",
    ".pytest_cache/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".terraform/",
    ".next/",
    ".nuxt/",
    ".svelte-kit/",
    ".output/",
    ".turbo/",
    ".parcel-cache/",
    "*.so",
    "*.o",
    "*.a",
    "*.class",
    "*.dll",
    "*.dylib",
    "*.exe",
];

/// Credential-shaped paths, tracked by size and modification time only: their content is
/// never read, hashed or shown (the reference's `SECRET_DENY_PATTERNS`; not overridable).
pub const SECRET_DENY: &[&str] = &[
    ".env",
    ".env.*",
    ".gitconfig",
    ".gitmodules",
    "*.pem",
    "id_*",
    "*_key",
    "*_key.*",
    "credentials",
    "credentials.*",
    ".netrc",
    ".git-credentials",
    ".ssh/",
    ".aws/",
];

/// Whether `rel` (relative to the root, `/`-separated) matches one of `patterns` by the
/// reference's `_matches`: a `dir/` pattern matches a directory of that name, or anything
/// under one; another pattern is `fnmatch`ed against the last component.
pub(crate) fn matches<S: AsRef<str>>(rel: &str, is_dir: bool, patterns: &[S]) -> bool {
    let name = rel.rsplit('/').next().unwrap_or("");
    patterns.iter().any(|pattern| {
        let pattern = pattern.as_ref();
        if pattern.ends_with('/') {
            let dir = pattern.trim_end_matches('/');
            (is_dir && name == dir) || has_directory(rel, dir)
        } else {
            fnmatch(name, pattern)
        }
    })
}

/// Whether `/{rel}` contains `/{dir}/`: a directory named `dir` (or a run of components that
/// spells it, as the reference's substring test allows) above the last component.
fn has_directory(rel: &str, dir: &str) -> bool {
    rel.match_indices(dir).any(|(at, _)| {
        let before = at == 0 || rel.as_bytes()[at - 1] == b'/';
        let after = rel.as_bytes().get(at + dir.len()) == Some(&b'/');
        before && after
    })
}

/// Python's `fnmatch.fnmatchcase`: `*` any run, `?` one character, `[seq]` and `[!seq]` a
/// set (with ranges); an unclosed `[` is a literal `[`.
pub fn fnmatch(name: &str, pattern: &str) -> bool {
    if name.is_ascii() && pattern.is_ascii() {
        return glob(name.as_bytes(), pattern.as_bytes());
    }
    let name: Vec<char> = name.chars().collect();
    let pattern: Vec<char> = pattern.chars().collect();
    glob(&name, &pattern)
}

/// A character of a name or a pattern: bytes for ASCII, `char`s otherwise.
trait Symbol: Copy + Ord + From<u8> {}
impl Symbol for u8 {}
impl Symbol for char {}

fn glob<T: Symbol>(name: &[T], pattern: &[T]) -> bool {
    let (star_c, any, open) = (T::from(b'*'), T::from(b'?'), T::from(b'['));
    // Iterative matching with one backtrack point for the last `*` (linear in practice).
    let (mut n, mut p) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        let step = match pattern.get(p) {
            Some(&c) if c == star_c => {
                star = Some((p, n));
                p += 1;
                continue;
            }
            Some(&c) if c == any => Some(1),
            Some(&c) if c == open => match set(&pattern[p..], name[n]) {
                Some((true, used)) => Some(used),
                Some((false, _)) => None,
                None => (name[n] == open).then_some(1),
            },
            Some(&c) => (c == name[n]).then_some(1),
            None => None,
        };
        match step {
            Some(used) => {
                p += used;
                n += 1;
            }
            None => match star {
                Some((sp, sn)) => {
                    p = sp + 1;
                    n = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == star_c)
}

/// A `[...]` set at the start of `pattern`: whether `c` is in it and how many pattern
/// characters it spans, or `None` when it is not closed (then `[` is literal), as Python's
/// `fnmatch.translate`.
fn set<T: Symbol>(pattern: &[T], c: T) -> Option<(bool, usize)> {
    let (bang, close, dash) = (T::from(b'!'), T::from(b']'), T::from(b'-'));
    let mut i = 1;
    if pattern.get(i) == Some(&bang) {
        i += 1;
    }
    if pattern.get(i) == Some(&close) {
        i += 1;
    }
    while pattern.get(i).is_some_and(|&ch| ch != close) {
        i += 1;
    }
    if i >= pattern.len() {
        return None;
    }
    let body = &pattern[1..i];
    let (negated, body) = match body.first() {
        Some(&first) if first == bang => (true, &body[1..]),
        _ => (false, body),
    };
    let mut found = false;
    let mut k = 0;
    while k < body.len() {
        if k + 2 < body.len() && body[k + 1] == dash {
            if body[k] <= c && c <= body[k + 2] {
                found = true;
            }
            k += 3;
        } else {
            if body[k] == c {
                found = true;
            }
            k += 1;
        }
    }
    Some((found != negated, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnmatch_as_python() {
        assert!(fnmatch("id_rsa", "id_*"));
        assert!(fnmatch("api_key", "*_key"));
        assert!(fnmatch("api_key.json", "*_key.*"));
        assert!(!fnmatch("keys", "*_key"));
        assert!(fnmatch(".env.local", ".env.*"));
        assert!(!fnmatch(".ENV", ".env"));
        assert!(fnmatch("a1", "a[0-9]"));
        assert!(!fnmatch("ab", "a[!a-z]"));
        assert!(fnmatch("a[", "a["));
        assert!(fnmatch("x.pyc", "*.pyc"));
        assert!(fnmatch("", "*"));
        assert!(fnmatch("aXbXc", "a*b*c"));
        assert!(fnmatch("é_key", "*_key"));
        assert!(fnmatch("ü", "[ü]"));
        assert!(!fnmatch("é", "[!é]"));
    }

    #[test]
    fn directory_patterns_match_anywhere_below() {
        assert!(matches("node_modules", true, DEFAULT_EXCLUDES));
        assert!(matches("web/node_modules/x.js", false, DEFAULT_EXCLUDES));
        assert!(!matches("node_modules", false, DEFAULT_EXCLUDES));
        assert!(matches("home/.ssh/config", false, SECRET_DENY));
        assert!(matches("src/.env", false, SECRET_DENY));
        assert!(!matches("src/main.rs", false, SECRET_DENY));
    }
}
