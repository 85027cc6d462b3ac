//! Tables over a text, built once in linear time, that let the extraction's scanners answer
//! "where is the next closer" and "how far does this expression run" without rescanning: what
//! keeps extraction linear where a backtracking regex engine is quadratic (`\[\[\[…`).

/// A text and its tables.
pub(crate) struct Scan<'t> {
    /// The text.
    pub text: &'t str,
    dollars2: Vec<usize>,
    close_bracket: Vec<usize>,
    close_paren: Vec<usize>,
    newlines: Vec<usize>,
    boxes: Vec<usize>,
    braces: Vec<usize>,
    runs: std::cell::OnceCell<Runs>,
}

/// The tables of expression runs, made the first time a plain expression is looked for.
struct Runs {
    run_end: Vec<u32>,
    prev_suffix: Vec<u32>,
    last_op_ending: Vec<u32>,
}

/// No position.
const NONE: u32 = u32::MAX;

pub(crate) fn is_expr_char(c: char) -> bool {
    c.is_ascii_digit() || is_py_space(c) || "+-*×/^()÷.".contains(c)
}

pub(crate) fn is_operator(c: char) -> bool {
    "+-*×/^()÷".contains(c)
}

/// Every start of `needle` in `text`, overlapping ones included, in order.
fn starts(text: &str, needle: &str) -> Vec<usize> {
    let (t, n) = (text.as_bytes(), needle.as_bytes());
    // Each occurrence of the first byte (memchr's vectorized search), then the rest.
    memchr::memchr_iter(n[0], t)
        .filter(|&i| t.get(i..i + n.len()) == Some(n))
        .collect()
}

/// The first start of `needle` in `text`: each occurrence of its first byte, then the rest
/// (cheaper than `str::find` on the short texts of answers, which builds a searcher per call).
pub(crate) fn find(text: &str, needle: &str) -> Option<usize> {
    let (t, n) = (text.as_bytes(), needle.as_bytes());
    let first = *n.first()?;
    memchr::memchr_iter(first, t).find(|&i| t[i..].starts_with(n))
}

/// The last start of `needle` in `text`, as [`find`].
pub(crate) fn rfind(text: &str, needle: &str) -> Option<usize> {
    let (t, n) = (text.as_bytes(), needle.as_bytes());
    let first = *n.first()?;
    memchr::memrchr_iter(first, t).find(|&i| t[i..].starts_with(n))
}

/// Whether `needle` is in `text`, as [`find`].
pub(crate) fn contains(text: &str, needle: &str) -> bool {
    find(text, needle).is_some()
}

fn to_u32(x: usize) -> u32 {
    u32::try_from(x).unwrap_or(NONE - 1)
}

impl<'t> Scan<'t> {
    /// Builds the tables (the text is at most a few megabytes: positions fit in `u32`).
    pub(crate) fn new(text: &'t str) -> Self {
        Self {
            text,
            dollars2: starts(text, "$$"),
            close_bracket: starts(text, "\\]"),
            close_paren: starts(text, "\\)"),
            newlines: starts(text, "\n"),
            boxes: starts(text, "\\boxed{"),
            braces: starts(text, "}"),
            runs: std::cell::OnceCell::new(),
        }
    }

    fn runs(&self) -> &Runs {
        self.runs.get_or_init(|| Runs::new(self.text))
    }

    fn next(positions: &[usize], from: usize) -> Option<usize> {
        positions
            .get(positions.partition_point(|&p| p < from))
            .copied()
    }

    /// The next `$$` at or after `from`.
    pub(crate) fn next_dollars(&self, from: usize) -> Option<usize> {
        Self::next(&self.dollars2, from)
    }

    /// The next `\]` at or after `from`.
    pub(crate) fn next_close_bracket(&self, from: usize) -> Option<usize> {
        Self::next(&self.close_bracket, from)
    }

    /// The next `\)` at or after `from`.
    pub(crate) fn next_close_paren(&self, from: usize) -> Option<usize> {
        Self::next(&self.close_paren, from)
    }

    /// The next line break at or after `from`.
    pub(crate) fn next_newline(&self, from: usize) -> Option<usize> {
        Self::next(&self.newlines, from)
    }

    /// Whether `text[start..end]` holds `\boxed{` with a `}` at least one character later.
    pub(crate) fn has_box(&self, start: usize, end: usize) -> bool {
        Self::next(&self.boxes, start)
            .filter(|&b| b < end)
            .and_then(|b| Self::next(&self.braces, b + 8))
            .is_some_and(|close| close < end)
    }

    /// The end of the run of expression characters starting at `i`.
    pub(crate) fn run_end(&self, i: usize) -> usize {
        self.runs().run_end[i] as usize
    }

    /// The last `.`, `)` or space before `j`.
    pub(crate) fn prev_suffix(&self, j: usize) -> Option<usize> {
        let p = self.runs().prev_suffix[j];
        (p != NONE).then_some(p as usize)
    }

    /// The start of the last operator that ends at or before `j`.
    pub(crate) fn last_op_ending(&self, j: usize) -> Option<usize> {
        let p = self.runs().last_op_ending[j];
        (p != NONE).then_some(p as usize)
    }
}

impl Runs {
    fn new(text: &str) -> Self {
        let len = text.len();
        let mut run_end = vec![to_u32(len); len + 1];
        let mut cur = len;
        for (j, c) in text.char_indices().rev() {
            if is_expr_char(c) {
                run_end[j] = to_u32(cur);
            } else {
                cur = j;
                run_end[j] = to_u32(j);
            }
        }
        let mut prev_suffix = vec![NONE; len + 1];
        let mut last_op_ending = vec![NONE; len + 1];
        let (mut last_suffix, mut best_op) = (NONE, NONE);
        for (o, c) in text.char_indices() {
            for k in o..o + c.len_utf8() {
                prev_suffix[k] = last_suffix;
                last_op_ending[k] = best_op;
            }
            if c == '.' || c == ')' || is_py_space(c) {
                last_suffix = to_u32(o);
            }
            if is_operator(c) {
                best_op = to_u32(o);
            }
        }
        prev_suffix[len] = last_suffix;
        last_op_ending[len] = best_op;
        Self {
            run_end,
            prev_suffix,
            last_op_ending,
        }
    }
}

/// Python's `\s` for `str`.
pub(crate) fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}
