//! Result files read for comparison: what two runs of the same evaluation must agree on.

use std::collections::BTreeMap;
use std::path::Path;

use grader_eval::Line;

/// Each (id, epoch) of a results file with the exact bytes of its line from `"error"` on (the
/// error and the result: everything but the timing, its duration and its `started_at`);
/// fails on a repeated pair or a torn line.
///
/// # Panics
/// When the file cannot be read, its last line is torn, a line is not valid, or a pair repeats.
#[must_use]
pub fn by_pair(path: &Path) -> BTreeMap<(String, u32), String> {
    const STARTED: &str = ",\"started_at\":\"";
    let text = std::fs::read_to_string(path).expect("read the results");
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "{}: torn",
        path.display()
    );
    let mut map = BTreeMap::new();
    for raw in text.lines() {
        let line: Line = serde_json::from_str(raw).expect("a valid line");
        let outcome = &raw[raw.find(",\"error\":").expect("an error field")..];
        let outcome = match outcome.find(STARTED) {
            Some(at) => {
                let value = at + STARTED.len();
                let end = value + outcome[value..].find('"').expect("the start's end") + 1;
                format!("{}{}", &outcome[..at], &outcome[end..])
            }
            None => outcome.to_owned(),
        };
        let previous = map.insert((line.id.clone(), line.epoch), outcome);
        assert!(previous.is_none(), "{} epoch {} twice", line.id, line.epoch);
    }
    map
}
