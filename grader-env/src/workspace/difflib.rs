//! Python's `difflib.unified_diff` over lines, exactly: the same `SequenceMatcher` (its
//! longest-match recursion, with the "popular element" heuristic for sequences of 200 lines
//! or more), the same grouping of changes with 3 lines of context, and the same headers and
//! hunk ranges, so a patch reads byte for byte as the reference's file tracker writes it.

use std::collections::HashMap;

/// One opcode of `SequenceMatcher.get_opcodes`: what turns `a[i1..i2]` into `b[j1..j2]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    Equal,
    Replace,
    Delete,
    Insert,
}

type Opcode = (Tag, usize, usize, usize, usize);

/// `SequenceMatcher(None, a, b)` (autojunk on): what it precomputes about `b`.
struct Matcher<'a> {
    a: &'a [&'a str],
    b: &'a [&'a str],
    /// Where each line of `b` is, popular lines left out.
    b2j: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Matcher<'a> {
    fn new(a: &'a [&'a str], b: &'a [&'a str]) -> Self {
        let mut b2j: HashMap<&'a str, Vec<usize>> = HashMap::new();
        for (j, line) in b.iter().enumerate() {
            b2j.entry(line).or_default().push(j);
        }
        // autojunk: in a sequence of 200 or more, an element found more than 1% + 1 times
        // is "popular" and left out of the index (it can still extend a match).
        let n = b.len();
        if n >= 200 {
            let ntest = n / 100 + 1;
            b2j.retain(|_, places| places.len() <= ntest);
        }
        Matcher { a, b, b2j }
    }

    /// `find_longest_match(alo, ahi, blo, bhi)`: the longest matching block, the earliest in
    /// `a` and then in `b` among the longest. With no junk function, nothing is junk, so only
    /// the first pair of extension loops can move it.
    fn longest_match(
        &self,
        alo: usize,
        ahi: usize,
        blo: usize,
        bhi: usize,
    ) -> (usize, usize, usize) {
        let (mut besti, mut bestj, mut bestsize) = (alo, blo, 0);
        let mut j2len: HashMap<usize, usize> = HashMap::new();
        for i in alo..ahi {
            let mut next: HashMap<usize, usize> = HashMap::new();
            if let Some(places) = self.b2j.get(self.a[i]) {
                for &j in places {
                    if j < blo {
                        continue;
                    }
                    if j >= bhi {
                        break;
                    }
                    let k = j
                        .checked_sub(1)
                        .and_then(|prev| j2len.get(&prev))
                        .copied()
                        .unwrap_or(0)
                        + 1;
                    next.insert(j, k);
                    if k > bestsize {
                        besti = i + 1 - k;
                        bestj = j + 1 - k;
                        bestsize = k;
                    }
                }
            }
            j2len = next;
        }
        while besti > alo && bestj > blo && self.a[besti - 1] == self.b[bestj - 1] {
            besti -= 1;
            bestj -= 1;
            bestsize += 1;
        }
        while besti + bestsize < ahi
            && bestj + bestsize < bhi
            && self.a[besti + bestsize] == self.b[bestj + bestsize]
        {
            bestsize += 1;
        }
        (besti, bestj, bestsize)
    }

    /// `get_matching_blocks`, the final `(len(a), len(b), 0)` included.
    fn matching_blocks(&self) -> Vec<(usize, usize, usize)> {
        let (la, lb) = (self.a.len(), self.b.len());
        let mut queue = vec![(0, la, 0, lb)];
        let mut blocks = Vec::new();
        while let Some((alo, ahi, blo, bhi)) = queue.pop() {
            let (i, j, k) = self.longest_match(alo, ahi, blo, bhi);
            if k > 0 {
                blocks.push((i, j, k));
                if alo < i && blo < j {
                    queue.push((alo, i, blo, j));
                }
                if i + k < ahi && j + k < bhi {
                    queue.push((i + k, ahi, j + k, bhi));
                }
            }
        }
        blocks.sort_unstable();
        let mut merged = Vec::new();
        let (mut i1, mut j1, mut k1) = (0, 0, 0);
        for (i2, j2, k2) in blocks {
            if i1 + k1 == i2 && j1 + k1 == j2 {
                k1 += k2;
            } else {
                if k1 > 0 {
                    merged.push((i1, j1, k1));
                }
                (i1, j1, k1) = (i2, j2, k2);
            }
        }
        if k1 > 0 {
            merged.push((i1, j1, k1));
        }
        merged.push((la, lb, 0));
        merged
    }

    /// `get_opcodes`.
    fn opcodes(&self) -> Vec<Opcode> {
        let (mut i, mut j) = (0, 0);
        let mut codes = Vec::new();
        for (ai, bj, size) in self.matching_blocks() {
            let tag = match (i < ai, j < bj) {
                (true, true) => Some(Tag::Replace),
                (true, false) => Some(Tag::Delete),
                (false, true) => Some(Tag::Insert),
                (false, false) => None,
            };
            if let Some(tag) = tag {
                codes.push((tag, i, ai, j, bj));
            }
            i = ai + size;
            j = bj + size;
            if size > 0 {
                codes.push((Tag::Equal, ai, i, bj, j));
            }
        }
        codes
    }

    /// `get_grouped_opcodes(n)`.
    fn grouped_opcodes(&self, n: usize) -> Vec<Vec<Opcode>> {
        let mut codes = self.opcodes();
        if codes.is_empty() {
            codes.push((Tag::Equal, 0, 1, 0, 1));
        }
        if let Some(first) = codes.first_mut()
            && first.0 == Tag::Equal
        {
            let (tag, i1, i2, j1, j2) = *first;
            *first = (
                tag,
                i1.max(i2.saturating_sub(n)),
                i2,
                j1.max(j2.saturating_sub(n)),
                j2,
            );
        }
        if let Some(last) = codes.last_mut()
            && last.0 == Tag::Equal
        {
            let (tag, i1, i2, j1, j2) = *last;
            *last = (tag, i1, i2.min(i1 + n), j1, j2.min(j1 + n));
        }
        let nn = n + n;
        let mut groups = Vec::new();
        let mut group = Vec::new();
        for (tag, mut i1, i2, mut j1, j2) in codes {
            if tag == Tag::Equal && i2 - i1 > nn {
                group.push((tag, i1, i2.min(i1 + n), j1, j2.min(j1 + n)));
                groups.push(std::mem::take(&mut group));
                i1 = i1.max(i2.saturating_sub(n));
                j1 = j1.max(j2.saturating_sub(n));
            }
            group.push((tag, i1, i2, j1, j2));
        }
        if !group.is_empty() && (group.len() != 1 || group[0].0 != Tag::Equal) {
            groups.push(group);
        }
        groups
    }
}

/// `_format_range_unified(start, stop)`.
fn range(start: usize, stop: usize) -> String {
    let length = stop - start;
    let beginning = start + 1;
    match length {
        1 => beginning.to_string(),
        0 => format!("{},0", beginning - 1),
        _ => format!("{beginning},{length}"),
    }
}

/// `"\n".join(difflib.unified_diff(a, b, fromfile, tofile, lineterm=""))`.
pub(crate) fn unified_diff(a: &[&str], b: &[&str], fromfile: &str, tofile: &str) -> String {
    let matcher = Matcher::new(a, b);
    let mut out: Vec<String> = Vec::new();
    for (k, group) in matcher.grouped_opcodes(3).iter().enumerate() {
        if k == 0 {
            out.push(format!("--- {fromfile}"));
            out.push(format!("+++ {tofile}"));
        }
        let (first, last) = (group[0], group[group.len() - 1]);
        out.push(format!(
            "@@ -{} +{} @@",
            range(first.1, last.2),
            range(first.3, last.4)
        ));
        for &(tag, i1, i2, j1, j2) in group {
            if tag == Tag::Equal {
                out.extend(a[i1..i2].iter().map(|line| format!(" {line}")));
                continue;
            }
            if matches!(tag, Tag::Replace | Tag::Delete) {
                out.extend(a[i1..i2].iter().map(|line| format!("-{line}")));
            }
            if matches!(tag, Tag::Replace | Tag::Insert) {
                out.extend(b[j1..j2].iter().map(|line| format!("+{line}")));
            }
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_reads_as_difflib_writes_it() {
        let a = [
            "one", "two", "three", "four", "five", "six", "seven", "eight",
        ];
        let b = [
            "one", "two", "three", "FOUR", "five", "six", "seven", "eight",
        ];
        assert_eq!(
            unified_diff(&a, &b, "a/f", "b/f"),
            "--- a/f\n+++ b/f\n@@ -1,7 +1,7 @@\n one\n two\n three\n-four\n+FOUR\n five\n six\n seven"
        );
    }

    #[test]
    fn from_nothing_and_to_nothing() {
        assert_eq!(
            unified_diff(&[], &["x", "y"], "a/n", "b/n"),
            "--- a/n\n+++ b/n\n@@ -0,0 +1,2 @@\n+x\n+y"
        );
        assert_eq!(
            unified_diff(&["x"], &[], "a/n", "b/n"),
            "--- a/n\n+++ b/n\n@@ -1 +0,0 @@\n-x"
        );
        assert_eq!(unified_diff(&[], &[], "a/n", "b/n"), "");
        assert_eq!(unified_diff(&["same"], &["same"], "a/n", "b/n"), "");
    }
}
