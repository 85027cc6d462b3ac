//! Tagged sections in an answer (`<think>…</think>`, `<answer>…</answer>`), parsed and scored
//! as the `verifiers` package's parsers do (verifiers 0.3.1, `verifiers.legacy.parsers`; 0.4.0
//! and later no longer ship them): [`XmlParser`] is its `XMLParser` (the fields, with
//! alternative tags; the last answer; the format reward), and [`think_answer`],
//! [`think_format`] and [`think_format_reward`] are its `ThinkParser`.
//!
//! ```
//! use grader_core::format::{Field, XmlParser};
//!
//! let parser = XmlParser::new(["reasoning", "answer"])?;
//! let text = "<reasoning>\n  6 times 7\n</reasoning>\n<answer> 42 </answer>";
//! let parsed = parser.parse(text);
//! assert_eq!(parsed.get("reasoning"), Some("6 times 7"));
//! assert_eq!(parser.parse_answer("<answer>1</answer> no, <answer>2</answer>"), Some("2"));
//! assert_eq!(parser.format_reward(&[text]), 1.0);
//! assert_eq!(parser.format_reward(&["no tags at all"]), 0.2);
//!
//! // A field with alternatives: `<answer>` or `<result>`, the first one its name.
//! let parser = XmlParser::new([Field::from("think"), Field::any_of(["answer", "result"])])?;
//! assert_eq!(parser.parse("<result>7</result>").get("result"), Some("7"));
//! # Ok::<(), grader_core::format::FormatError>(())
//! ```
//!
//! The graders ([`XmlFields`], [`XmlAnswer`], [`XmlFormat`], [`ThinkFormat`], [`ThinkAnswer`];
//! see [`graders`]) record their arguments under `_parameters` like any grader.
//!
//! # The anchor
//!
//! verifiers finds a field with the regular expression `<tag>\s*(.*?)\s*</tag>` (`re.DOTALL`)
//! and strips the capture: the text from the first `<tag>` to the first `</tag>` after it,
//! whitespace around it removed (Python's `str.isspace()` whitespace, `\x1c`–`\x1f`
//! included). [`XmlParser::parse`] takes the first such section of each tag and
//! [`XmlParser::parse_last`] the last (`parse(text, last=True)`); this reads each section with
//! two substring searches, in linear time, where Python's lazy expression tries every
//! position.
//!
//! The format reward of one message is verifiers' own sum: 0.4 times the share of field sets
//! present (a parsed value, or an opening or closing tag) when any field parsed, 0.2 for
//! "spacing" (which verifiers' check always grants: stripping never changes whether a field
//! parsed), 0.2 when the stripped message starts with an opening tag of the first field set,
//! 0.2 when it ends with a closing tag of the last. The reward is the mean over the assistant
//! messages, summed as Python 3.12 and later sum floats (compensated); 0 without a message.
//!
//! Where this differs: verifiers writes tag names into a regular expression unescaped; here a
//! tag is a non-empty name without whitespace, `<`, `>`, `/` or a regular-expression
//! metacharacter (`.^$*+?{}[]\|()`), anything else a typed [`FormatError::BadTag`]. verifiers
//! accepts a parser with no fields (and its format reward then raises `IndexError`); here that
//! is [`FormatError::NoFields`]. Messages are given as the assistant messages' texts.

#[cfg(feature = "macros")]
pub mod graders;
mod think;

use std::ops::Range;

use memchr::memmem;
use serde::Serialize;

use crate::grade::neumaier_sum;
use crate::text::pychar;

#[cfg(feature = "macros")]
pub use graders::{ThinkAnswer, ThinkFormat, XmlAnswer, XmlFields, XmlFormat};
pub use think::{maybe_think_answer, think_answer, think_format, think_format_reward};

/// Why a parser cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// The parser was given no field.
    #[error("{grader}: a parser needs at least one field")]
    NoFields {
        /// The grader or function.
        grader: &'static str,
    },
    /// A field was given no tag name.
    #[error("{grader}: field {index} has no tag name")]
    EmptyField {
        /// The grader or function.
        grader: &'static str,
        /// The field's position, from 0.
        index: usize,
    },
    /// Two fields share their first name.
    #[error("{grader}: duplicate field name {name:?}")]
    DuplicateField {
        /// The grader or function.
        grader: &'static str,
        /// The name.
        name: String,
    },
    /// A tag name is empty or has a character a tag cannot have.
    #[error(
        "{grader}: tag name {tag:?} is empty or has whitespace, <, >, / or one of .^$*+?{{}}[]\\|()"
    )]
    BadTag {
        /// The grader or function.
        grader: &'static str,
        /// The tag name.
        tag: String,
    },
}

/// One field of an [`XmlParser`]: a tag name, or several alternatives (verifiers' tuple
/// `("code", "answer")`), the first of which names the field.
///
/// ```
/// use grader_core::format::Field;
///
/// let field = Field::any_of(["answer", "result"]);
/// assert_eq!(field.name(), "answer");
/// assert_eq!(field.tags(), ["answer", "result"]);
/// assert_eq!(Field::from("think").tags(), ["think"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Field {
    tags: Vec<String>,
}

impl Field {
    /// A field with alternative tags, the first naming it.
    #[must_use]
    pub fn any_of<S: Into<String>>(tags: impl IntoIterator<Item = S>) -> Self {
        Self {
            tags: tags.into_iter().map(Into::into).collect(),
        }
    }

    /// The field's name: its first tag (empty for a field with no tag, which
    /// [`XmlParser::new`] refuses).
    #[must_use]
    pub fn name(&self) -> &str {
        self.tags.first().map_or("", String::as_str)
    }

    /// Every tag the field accepts, its name first.
    #[must_use]
    pub fn tags(&self) -> &[String] {
        &self.tags
    }
}

impl From<&str> for Field {
    fn from(tag: &str) -> Self {
        Self::any_of([tag])
    }
}

impl From<String> for Field {
    fn from(tag: String) -> Self {
        Self::any_of([tag])
    }
}

impl<const N: usize> From<[&str; N]> for Field {
    fn from(tags: [&str; N]) -> Self {
        Self::any_of(tags)
    }
}

/// verifiers' `XMLParser`: the fields an answer is made of, and which of their tags holds the
/// answer (`answer` unless [`with_answer_field`](Self::with_answer_field) says otherwise). See
/// the [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct XmlParser {
    fields: Vec<Field>,
    answer_field: String,
}

/// The sections of a text, each tag with its content or `None`, in the parser's order (every
/// alternative of every field). Serialized as a map from tag to content or `null`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed<'t> {
    entries: Vec<(String, Option<&'t str>)>,
}

impl<'t> Parsed<'t> {
    /// The content of `tag`'s section; `None` when it has none or is not one of the parser's
    /// tags.
    #[must_use]
    pub fn get(&self, tag: &str) -> Option<&'t str> {
        self.entries
            .iter()
            .find(|(name, _)| name == tag)
            .and_then(|(_, value)| *value)
    }

    /// Each tag with its content, in the parser's order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Option<&'t str>)> {
        self.entries
            .iter()
            .map(|(tag, value)| (tag.as_str(), *value))
    }
}

impl Serialize for Parsed<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

/// Whether `tag` can be a tag name (see the [module docs](self)).
fn valid_tag(tag: &str) -> bool {
    !tag.is_empty()
        && !tag
            .chars()
            .any(|c| pychar::is_space(c) || "<>/.^$*+?{}[]\\|()".contains(c))
}

/// `<tag>` and `</tag>`.
fn tags_of(tag: &str) -> (String, String) {
    (format!("<{tag}>"), format!("</{tag}>"))
}

/// The first match of `<tag>\s*(.*?)\s*</tag>` at or after `from`: the capture's range and
/// where the match ends.
fn section(text: &str, open: &str, close: &str, from: usize) -> Option<(Range<usize>, usize)> {
    let at = from + memmem::find(text.as_bytes().get(from..)?, open.as_bytes())?;
    let after = at + open.len();
    let start =
        after + (text[after..].len() - text[after..].trim_start_matches(pychar::is_space).len());
    let close_at = start + memmem::find(&text.as_bytes()[start..], close.as_bytes())?;
    let end = start
        + text[start..close_at]
            .trim_end_matches(pychar::is_space)
            .len();
    Some((start..end, close_at + close.len()))
}

/// The first section of `tag` in `text`, stripped.
fn first_section<'t>(text: &'t str, open: &str, close: &str) -> Option<&'t str> {
    section(text, open, close, 0).map(|(range, _)| &text[range])
}

/// The last of the sections of `tag` that `re.finditer` finds, stripped.
fn last_section<'t>(text: &'t str, open: &str, close: &str) -> Option<&'t str> {
    let mut last = None;
    let mut from = 0;
    while let Some((range, end)) = section(text, open, close, from) {
        last = Some(range);
        from = end;
    }
    last.map(|range| &text[range])
}

impl XmlParser {
    /// A parser of `fields`, in order (verifiers' `XMLParser(fields)`), its answer in the tag
    /// `answer`.
    ///
    /// ```
    /// use grader_core::format::{FormatError, XmlParser};
    ///
    /// assert!(XmlParser::new(["think", "answer"]).is_ok());
    /// assert!(matches!(XmlParser::new(["a.b"]), Err(FormatError::BadTag { .. })));
    /// assert!(matches!(XmlParser::new(["x", "x"]), Err(FormatError::DuplicateField { .. })));
    /// ```
    ///
    /// # Errors
    /// [`FormatError::NoFields`] without fields, [`FormatError::EmptyField`] for a field with
    /// no tag, [`FormatError::DuplicateField`] when two fields share their name,
    /// [`FormatError::BadTag`] for a tag name that is not one (see the [module docs](self)).
    pub fn new<F: Into<Field>>(fields: impl IntoIterator<Item = F>) -> Result<Self, FormatError> {
        const GRADER: &str = "xml_parser";
        let fields: Vec<Field> = fields.into_iter().map(Into::into).collect();
        if fields.is_empty() {
            return Err(FormatError::NoFields { grader: GRADER });
        }
        for (index, field) in fields.iter().enumerate() {
            if field.tags.is_empty() {
                return Err(FormatError::EmptyField {
                    grader: GRADER,
                    index,
                });
            }
            if let Some(tag) = field.tags.iter().find(|tag| !valid_tag(tag)) {
                return Err(FormatError::BadTag {
                    grader: GRADER,
                    tag: tag.clone(),
                });
            }
            if fields[..index].iter().any(|f| f.name() == field.name()) {
                return Err(FormatError::DuplicateField {
                    grader: GRADER,
                    name: field.name().to_owned(),
                });
            }
        }
        Ok(Self {
            fields,
            answer_field: "answer".to_owned(),
        })
    }

    /// The same parser, its answer in the tag `tag` (verifiers' `answer_field`). A tag that is
    /// none of the parser's gives no answer, as in verifiers.
    #[must_use]
    pub fn with_answer_field(mut self, tag: impl Into<String>) -> Self {
        self.answer_field = tag.into();
        self
    }

    /// The fields' names, in order (verifiers' `get_fields()`).
    #[must_use]
    pub fn fields(&self) -> Vec<&str> {
        self.fields.iter().map(Field::name).collect()
    }

    /// The tag that holds the answer.
    #[must_use]
    pub fn answer_field(&self) -> &str {
        &self.answer_field
    }

    fn parse_with<'t>(
        &self,
        text: &'t str,
        find: fn(&'t str, &str, &str) -> Option<&'t str>,
    ) -> Parsed<'t> {
        let mut entries = Vec::new();
        for tag in self.fields.iter().flat_map(|field| &field.tags) {
            let (open, close) = tags_of(tag);
            entries.push((tag.clone(), find(text, &open, &close)));
        }
        Parsed { entries }
    }

    /// The first section of each tag (verifiers' `parse(text)`).
    ///
    /// ```
    /// use grader_core::format::XmlParser;
    ///
    /// let parser = XmlParser::new(["reasoning", "answer"])?;
    /// let parsed = parser.parse("<answer>\n 42 \n</answer><answer>43</answer>");
    /// assert_eq!(parsed.get("answer"), Some("42"));
    /// assert_eq!(parsed.get("reasoning"), None);
    /// # Ok::<(), grader_core::format::FormatError>(())
    /// ```
    #[must_use]
    pub fn parse<'t>(&self, text: &'t str) -> Parsed<'t> {
        self.parse_with(text, first_section)
    }

    /// The last section of each tag (verifiers' `parse(text, last=True)`).
    #[must_use]
    pub fn parse_last<'t>(&self, text: &'t str) -> Parsed<'t> {
        self.parse_with(text, last_section)
    }

    /// The last answer in `text` (verifiers' `parse_answer` on a string): the last section of
    /// the answer tag.
    #[must_use]
    pub fn parse_answer<'t>(&self, text: &'t str) -> Option<&'t str> {
        if !self.has_tag(&self.answer_field) {
            return None;
        }
        let (open, close) = tags_of(&self.answer_field);
        last_section(text, &open, &close)
    }

    /// The answer of a conversation (verifiers' `parse_answer` on messages): from the last
    /// assistant message that has one, its first section of the answer tag. `messages` are
    /// the assistant messages' texts, in order.
    ///
    /// ```
    /// use grader_core::format::XmlParser;
    ///
    /// let parser = XmlParser::new(["reasoning", "answer"])?;
    /// let messages = ["<answer>1</answer>", "<answer>2</answer><answer>3</answer>", "none"];
    /// assert_eq!(parser.parse_answer_messages(&messages), Some("2"));
    /// # Ok::<(), grader_core::format::FormatError>(())
    /// ```
    #[must_use]
    pub fn parse_answer_messages<'t, S: AsRef<str>>(&self, messages: &'t [S]) -> Option<&'t str> {
        if !self.has_tag(&self.answer_field) {
            return None;
        }
        let (open, close) = tags_of(&self.answer_field);
        messages
            .iter()
            .rev()
            .find_map(|message| first_section(message.as_ref(), &open, &close))
    }

    fn has_tag(&self, tag: &str) -> bool {
        self.fields
            .iter()
            .any(|field| field.tags.iter().any(|t| t == tag))
    }

    /// The format score of one message, from 0 to 1 (see the [module docs](self)).
    ///
    /// ```
    /// use grader_core::format::XmlParser;
    ///
    /// let parser = XmlParser::new(["think", "answer"])?;
    /// assert_eq!(parser.format_score("<think>a</think><answer>b</answer>"), 1.0);
    /// // Starts right, both fields present, the answer left open: 0.4 + 0.2 + 0.2.
    /// assert!((parser.format_score("<think>a</think><answer>b") - 0.8).abs() < 1e-12);
    /// # Ok::<(), grader_core::format::FormatError>(())
    /// ```
    #[must_use]
    pub fn format_score(&self, message: &str) -> f64 {
        let mut has_any_field = false;
        let mut present = 0usize;
        for field in &self.fields {
            let mut field_present = false;
            for tag in &field.tags {
                let (open, close) = tags_of(tag);
                if first_section(message, &open, &close).is_some() {
                    has_any_field = true;
                    field_present = true;
                } else if memmem::find(message.as_bytes(), open.as_bytes()).is_some()
                    || memmem::find(message.as_bytes(), close.as_bytes()).is_some()
                {
                    field_present = true;
                }
            }
            present += usize::from(field_present);
        }
        let stripped = pychar::strip(message);
        let starts = self.fields.first().is_some_and(|field| {
            field
                .tags
                .iter()
                .any(|tag| stripped.starts_with(&tags_of(tag).0))
        });
        let ends = self.fields.last().is_some_and(|field| {
            field
                .tags
                .iter()
                .any(|tag| stripped.ends_with(&tags_of(tag).1))
        });
        #[allow(clippy::cast_precision_loss)] // counts of fields
        let ratio = present as f64 / self.fields.len() as f64;
        let mut score = 0.0;
        if has_any_field {
            score += 0.4 * ratio;
        }
        // verifiers' spacing check: a field parses with and without stripping alike.
        score += 0.2;
        if starts {
            score += 0.2;
        }
        if ends {
            score += 0.2;
        }
        score
    }

    /// The format reward of a conversation (verifiers' `get_format_reward_func()`): the mean
    /// of [`format_score`](Self::format_score) over the assistant messages' texts, 0 without
    /// any.
    ///
    /// ```
    /// use grader_core::format::XmlParser;
    ///
    /// let parser = XmlParser::new(["reasoning", "answer"])?;
    /// assert_eq!(parser.format_reward(&["<reasoning>r</reasoning><answer>a</answer>"]), 1.0);
    /// assert_eq!(parser.format_reward(&[] as &[&str]), 0.0);
    /// # Ok::<(), grader_core::format::FormatError>(())
    /// ```
    #[must_use]
    pub fn format_reward<S: AsRef<str>>(&self, messages: &[S]) -> f64 {
        if messages.is_empty() {
            return 0.0;
        }
        #[allow(clippy::cast_precision_loss)] // a count of messages
        let count = messages.len() as f64;
        neumaier_sum(messages.iter().map(|m| self.format_score(m.as_ref()))) / count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_follow_the_lazy_expression() {
        let parser = XmlParser::new(["a"]).expect("valid");
        let cases = [
            ("<a>x</a>", Some("x")),
            ("<a> \n x y \t</a>", Some("x y")),
            ("<a></a>", Some("")),
            ("<a>   </a>", Some("")),
            ("<a>x", None),
            ("</a><a>x", None),
            ("<a><a>x</a></a>", Some("<a>x")),
            ("<a>\u{1c}x\u{a0}</a>", Some("x")),
            ("<a>\u{200b}x</a>", Some("\u{200b}x")),
            ("<a>x</a >", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parser.parse(text).get("a"), expected, "{text:?}");
        }
        assert_eq!(
            parser.parse_last("<a>1</a><a>2</a><a>3").get("a"),
            Some("2")
        );
        assert_eq!(parser.parse_answer("<answer>1</answer>"), None);
    }

    #[test]
    fn bad_parsers_are_typed_errors() {
        assert_eq!(
            XmlParser::new(Vec::<Field>::new()),
            Err(FormatError::NoFields {
                grader: "xml_parser"
            })
        );
        assert!(matches!(
            XmlParser::new([Field::any_of(Vec::<String>::new())]),
            Err(FormatError::EmptyField { index: 0, .. })
        ));
        for tag in ["", "a b", "a>", "a(b)", "</a", "x*"] {
            assert!(
                matches!(XmlParser::new([tag]), Err(FormatError::BadTag { tag: t, .. }) if t == tag),
                "{tag:?}"
            );
        }
        assert!(XmlParser::new(["réponse", "a-b", "a_b:c"]).is_ok());
    }

    #[test]
    fn the_mean_is_summed_as_python_3_12_sums() {
        // Ten scores of 0.2 add up to 1.9999999999999998 left to right, to 2.0 compensated.
        let parser = XmlParser::new(["answer"]).expect("valid");
        assert_eq!(parser.format_reward(&["no tags"; 10]), 0.2);
    }
}
