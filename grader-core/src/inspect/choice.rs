//! Inspect AI's `choice` scorer with the reading of the completion its `multiple_choice` solver
//! does (`inspect_ai/scorer/_choice.py`, `inspect_ai/solver/_multiple_choice.py`): the letters
//! after `ANSWER:` mark choices, which are unshuffled and compared with the target letters.
//! Feature `pattern`.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::{Captures, Regex, RegexBuilder};
use serde::Serialize;

use super::pattern::{PY_NOT_WORD, PY_SPACE};
use super::{Reason, Verdict, is_no_response};
use crate::text::pychar::{is_space, strip};

/// The question a completion answered, as the `multiple_choice` solver asked it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct ChoiceOptions<'a> {
    /// How many choices the question had (`A`, `B`, …; after `Z`, `1`, `2`, …).
    pub choices: usize,
    /// Where each choice shown (in the order shown) was in the sample: Inspect's
    /// `original_position` after `shuffle`. `None` when the choices were not shuffled.
    pub shuffled: Option<&'a [usize]>,
    /// Whether several letters may be chosen (the solver's `multiple_correct`).
    pub multiple_correct: bool,
}

/// Why [`choice`] cannot score: Inspect raises `ValueError` for each.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ChoiceError {
    /// The question has no choices.
    #[error("{grader}: the choice scorer requires samples with choices")]
    NoChoices {
        /// The grader or function.
        grader: &'static str,
    },
    /// `shuffled` is not an ordering of the choices.
    #[error("{grader}: shuffled positions {positions:?} are not an ordering of {choices} choices")]
    BadShuffle {
        /// The grader or function.
        grader: &'static str,
        /// The positions given.
        positions: Vec<usize>,
        /// The number of choices.
        choices: usize,
    },
    /// A target token is not a choice of this question.
    #[error("{grader}: target answer {token:?} is not a choice among {choices}")]
    BadTarget {
        /// The grader or function.
        grader: &'static str,
        /// The token of the target.
        token: String,
        /// The number of choices.
        choices: usize,
    },
}

/// The letter of choice `index`: Inspect's `answer_character`.
fn answer_character(index: usize) -> String {
    match u8::try_from(index) {
        Ok(i) if i < 26 => char::from(b'A' + i).to_string(),
        _ => (index - 25).to_string(),
    }
}

/// The patterns `parse_answers` uses, compiled once per call.
struct Patterns {
    dollars: Regex,
    bold: Regex,
    parenthesized: Regex,
    strict: Regex,
    lenient: Regex,
}

impl Patterns {
    fn new() -> Result<Self, regex::Error> {
        let (space, not_word) = (PY_SPACE, PY_NOT_WORD);
        // Python's `re.IGNORECASE` lets `[A-Za-z]` match these four too.
        let letters_i = r"A-Za-z\x{130}\x{131}\x{17F}\x{212A}";
        let build = |p: &str| RegexBuilder::new(p).build();
        Ok(Self {
            dollars: build(&format!(r"\${space}*([A-Za-z\d][A-Za-z\d ,]*?){space}*\$"))?,
            bold: build(&format!(
                r"\*\*{space}*([A-Za-z\d][A-Za-z\d ,]*?){space}*\*\*"
            ))?,
            parenthesized: build(&format!(r"(?i)(^|[:,])({space}*)\(([{letters_i}\d])\)"))?,
            strict: build(&format!(
                r"(?im)^ANSWER{space}*:{space}*([{letters_i}\d ,]+){space}*(?:$|\n|\.)"
            ))?,
            lenient: build(&format!(
                r"(?i)ANSWER{space}*:{space}*([{letters_i}\d ,]+)(?:{not_word}|\n|$|\.)"
            ))?,
        })
    }
}

static PATTERNS: LazyLock<Option<Patterns>> = LazyLock::new(|| Patterns::new().ok());

/// The lookahead `(?=\s*(?:,|\.|\n|\Z))` at byte `at`.
fn before_separator(text: &str, at: usize) -> bool {
    let rest = text[at..].trim_start_matches(|c: char| is_space(c) && c != '\n');
    rest.is_empty() || rest.starts_with([',', '.', '\n'])
}

/// `re.sub(pattern, r"\1", text)`.
fn replace_first_group(regex: &Regex, text: &str) -> String {
    regex
        .replace_all(text, |caps: &Captures<'_>| {
            caps.get(1).map_or("", |g| g.as_str()).to_owned()
        })
        .into_owned()
}

/// Inspect's third substitution: `(X)` after the start, a colon or a comma, when a comma, a
/// period, a line break or the end follows, loses its parentheses.
fn remove_parentheses(regex: &Regex, text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut copied, mut from) = (0, 0);
    while from <= text.len() {
        let Some(caps) = regex.captures_at(text, from) else {
            break;
        };
        let Some(whole) = caps.get(0) else {
            break;
        };
        if before_separator(text, whole.end()) {
            out.push_str(&text[copied..whole.start()]);
            for group in [1, 2, 3] {
                out.push_str(caps.get(group).map_or("", |g| g.as_str()));
            }
            copied = whole.end();
            from = whole.end();
        } else {
            from = whole.start()
                + text[whole.start()..]
                    .chars()
                    .next()
                    .map_or(1, char::len_utf8);
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Inspect's `parse_answers`: the letters the completion chose (empty when none can be read).
fn parse_answers(
    patterns: &Patterns,
    completion: &str,
    choices: usize,
    multiple_correct: bool,
) -> BTreeSet<String> {
    let text = replace_first_group(&patterns.dollars, completion);
    let text = replace_first_group(&patterns.bold, &text);
    let text = remove_parentheses(&patterns.parenthesized, &text);
    let last = |regex: &Regex| {
        regex
            .captures_iter(&text)
            .last()
            .and_then(|caps| caps.get(1).map(|g| g.as_str().to_owned()))
    };
    let Some(matched) = last(&patterns.strict).or_else(|| last(&patterns.lenient)) else {
        return BTreeSet::new();
    };
    let matched: String = strip(&matched)
        .trim_end_matches('.')
        .chars()
        .flat_map(char::to_uppercase)
        .collect();
    let allowed: BTreeSet<String> = (0..choices).map(answer_character).collect();
    if multiple_correct {
        let matched = matched.replace(" AND ", ",").replace(' ', "");
        let by_comma: BTreeSet<String> = matched
            .split(',')
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect();
        if by_comma.is_subset(&allowed) {
            return by_comma;
        }
        let by_char: BTreeSet<String> = matched.chars().map(String::from).collect();
        if by_char.is_subset(&allowed) {
            return by_char;
        }
    } else {
        let tokens: Vec<&str> = matched.split(',').filter(|t| !t.is_empty()).collect();
        if let [only] = tokens[..]
            && allowed.contains(only)
        {
            return BTreeSet::from([only.to_owned()]);
        }
    }
    BTreeSet::new()
}

/// The position a target token names: Inspect's `answer_index`, `None` where it raises.
fn answer_index(token: &str) -> Option<usize> {
    let mut chars = token.chars();
    let (first, second) = (chars.next()?, chars.next());
    if second.is_none() && first.is_ascii_alphabetic() {
        return Some(usize::from(first.to_ascii_uppercase() as u8 - b'A'));
    }
    if token.chars().all(|c| c.is_ascii_digit()) {
        let number: usize = token.parse().ok()?;
        return (number != 0).then(|| 25 + number);
    }
    None
}

/// Inspect's `choice()` scorer after its `multiple_choice` solver: the letters the completion
/// gives after `ANSWER:` (`ANSWER: B`, `ANSWER: A, C`, `ANSWER: (b)`, `**ANSWER: B**`…) mark
/// the choices as shown; with `shuffled`, the marks are put back in the sample's order; the
/// verdict is correct when the marked positions are exactly the target letters (`"A"`,
/// `"A, C"`, `"AC"`, or one letter per target).
///
/// A completion with no readable letter scores 0 with reason `no_response` when blank
/// (Inspect's `NOANSWER`) and `invalid_response_format` otherwise.
///
/// ```
/// use grader_core::inspect::{ChoiceOptions, choice};
///
/// let options = ChoiceOptions { choices: 4, ..ChoiceOptions::default() };
/// assert!(choice("Paris is the capital.\nANSWER: B", &["B"], options)?.is_correct());
/// let several = ChoiceOptions { choices: 4, multiple_correct: true, ..ChoiceOptions::default() };
/// assert!(choice("ANSWER: C, A", &["A", "C"], several)?.is_correct());
/// // The model saw the choices in the order [2, 0, 1, 3]: its "A" is the sample's C.
/// let shuffled = ChoiceOptions { choices: 4, shuffled: Some(&[2, 0, 1, 3]), ..options };
/// let verdict = choice("ANSWER: A", &["C"], shuffled)?;
/// assert!(verdict.is_correct());
/// assert_eq!(verdict.answer.as_deref(), Some("C"));
/// # Ok::<(), grader_core::inspect::ChoiceError>(())
/// ```
///
/// # Errors
/// [`ChoiceError`] where Inspect raises: no choices, a `shuffled` that is not an ordering of
/// the choices, a target token that names no choice.
pub fn choice<S: AsRef<str>>(
    completion: &str,
    targets: &[S],
    options: ChoiceOptions<'_>,
) -> Result<Verdict, ChoiceError> {
    const GRADER: &str = "choice";
    let n = options.choices;
    if n == 0 {
        return Err(ChoiceError::NoChoices { grader: GRADER });
    }
    if let Some(positions) = options.shuffled {
        let mut seen = vec![false; n];
        let valid = positions.len() == n
            && positions
                .iter()
                .all(|&p| p < n && !std::mem::replace(&mut seen[p], true));
        if !valid {
            return Err(ChoiceError::BadShuffle {
                grader: GRADER,
                positions: positions.to_vec(),
                choices: n,
            });
        }
    }
    // The patterns are fixed and valid; a failure to build them would be a bug, reported as
    // no readable answer rather than a panic.
    let answers = PATTERNS.as_ref().map_or_else(BTreeSet::new, |patterns| {
        parse_answers(patterns, completion, n, options.multiple_correct)
    });
    // Marks in the order shown, then in the sample's order.
    let mut marked = vec![false; n];
    for letter in &answers {
        if let Some(i) = (0..n).find(|&i| answer_character(i) == *letter) {
            marked[i] = true;
        }
    }
    if let Some(positions) = options.shuffled {
        let mut unshuffled = vec![false; n];
        for (shown, &original) in positions.iter().enumerate() {
            unshuffled[original] = marked[shown];
        }
        marked = unshuffled;
    }
    let mut target_positions = Vec::new();
    for target in targets {
        let target = target.as_ref().replace(',', " ");
        for token in target.split(is_space).filter(|t| !t.is_empty()) {
            let pieces: Vec<String> = if token.chars().all(|c| c.is_ascii_digit()) {
                vec![token.to_owned()]
            } else {
                token.chars().map(String::from).collect()
            };
            for piece in pieces {
                match answer_index(&piece).filter(|&p| p < n) {
                    Some(position) => target_positions.push(position),
                    None => {
                        return Err(ChoiceError::BadTarget {
                            grader: GRADER,
                            token: piece,
                            choices: n,
                        });
                    }
                }
            }
        }
    }
    target_positions.sort_unstable();
    let selected: Vec<usize> = (0..n).filter(|&i| marked[i]).collect();
    let letters = selected
        .iter()
        .map(|&i| answer_character(i))
        .collect::<Vec<_>>()
        .join(", ");
    if selected == target_positions {
        return Ok(Verdict::correct(letters, None));
    }
    let reason = if !selected.is_empty() {
        None
    } else if is_no_response(completion) {
        Some(Reason::NoResponse)
    } else {
        Some(Reason::InvalidResponseFormat)
    };
    Ok(Verdict {
        value: 0.0,
        answer: Some(letters),
        reason,
    })
}
