//! The words sent to the judge model.
//!
//! [`SYSTEM_PROMPT`] and [`user_prompt`] are the reference's (`hud/graders/judge.py` of
//! `hud==0.6.21`, `_SYSTEM_PROMPT` and `_user_prompt`) byte for byte; the line continuations
//! below are the same as in that file, so the two read side by side. The batch prompt is ours
//! (several criteria in one call, opt-in).

/// The reference's system prompt, byte for byte.
pub const SYSTEM_PROMPT: &str = "You evaluate a response against a single criterion and decide \
whether the thing the criterion describes is present in the response.

The <criterion_type> field says whether the criterion describes something desirable \
(positive) or an error to avoid (negative). Your job is the same for both: decide if \
the thing described is actually present.

- positive criterion -> MET when the response contains/satisfies it, UNMET otherwise.
- negative criterion -> MET when the response actually makes the error, UNMET when it \
does not (or only mentions it to warn against it).

Rules:
- Be strict about factual accuracy but flexible about wording; accept semantically \
equivalent statements and reasonable implications.
- Watch for negation, warnings, and contrasts (\"unlike X...\", \"avoid X\").
- An action required \"immediately\"/unconditionally is UNMET if the response only does \
it conditionally (\"if Y, then ...\").
- \"criterion_status\" is about presence, not quality.

Return ONLY raw JSON, no code fences, in exactly this form:
{\"criterion_status\": \"MET\", \"explanation\": \"Brief reason.\"}";

/// `positive` or `negative`, as the reference tells the judge: a negative weight makes a
/// negative criterion.
#[must_use]
pub fn criterion_type(weight: f64) -> &'static str {
    if weight < 0.0 { "negative" } else { "positive" }
}

/// The reference's user message for one criterion, byte for byte (`_user_prompt`).
#[must_use]
pub fn user_prompt(requirement: &str, weight: f64, answer: &str, question: &str) -> String {
    let query = if question.is_empty() {
        String::new()
    } else {
        format!("<query>\n{question}\n</query>\n\n")
    };
    format!(
        "<criterion_type>\n{}\n</criterion_type>\n\n<criterion>\n{requirement}\n</criterion>\n\n\
         {query}<response>\n{answer}\n</response>",
        criterion_type(weight)
    )
}

/// The system prompt of a batched call: the reference's rules, asked of several numbered
/// criteria at once, with one verdict per criterion in a JSON list.
pub const BATCH_SYSTEM_PROMPT: &str = "You evaluate a response against several criteria, \
one at a time, and decide for each whether the thing the criterion describes is present in \
the response.

Each <criterion> element has an id and a type. The type says whether the criterion describes \
something desirable (positive) or an error to avoid (negative). Your job is the same for both: \
decide if the thing described is actually present.

- positive criterion -> MET when the response contains/satisfies it, UNMET otherwise.
- negative criterion -> MET when the response actually makes the error, UNMET when it \
does not (or only mentions it to warn against it).

Rules:
- Judge every criterion on its own; one criterion's verdict says nothing about another's.
- Be strict about factual accuracy but flexible about wording; accept semantically \
equivalent statements and reasonable implications.
- Watch for negation, warnings, and contrasts (\"unlike X...\", \"avoid X\").
- An action required \"immediately\"/unconditionally is UNMET if the response only does \
it conditionally (\"if Y, then ...\").
- \"criterion_status\" is about presence, not quality.

Return ONLY raw JSON, no code fences, with exactly one verdict per criterion id, in this form:
{\"verdicts\": [{\"id\": 1, \"criterion_status\": \"MET\", \"explanation\": \"Brief reason.\"}]}";

/// The user message of a batched call: every criterion numbered from 1, then the query and the
/// response as in [`user_prompt`].
#[must_use]
pub fn batch_user_prompt<'a>(
    criteria: impl IntoIterator<Item = (&'a str, f64)>,
    answer: &str,
    question: &str,
) -> String {
    let mut text = String::from("<criteria>\n");
    for (id, (requirement, weight)) in criteria.into_iter().enumerate() {
        text.push_str(&format!(
            "<criterion id=\"{}\" type=\"{}\">\n{requirement}\n</criterion>\n",
            id + 1,
            criterion_type(weight)
        ));
    }
    text.push_str("</criteria>\n\n");
    if !question.is_empty() {
        text.push_str(&format!("<query>\n{question}\n</query>\n\n"));
    }
    text.push_str(&format!("<response>\n{answer}\n</response>"));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_prompt_has_the_reference_layout() {
        assert_eq!(
            user_prompt("Says Paris", 1.0, "Paris.", ""),
            "<criterion_type>\npositive\n</criterion_type>\n\n<criterion>\nSays Paris\n\
             </criterion>\n\n<response>\nParis.\n</response>"
        );
        assert!(user_prompt("x", -1.0, "a", "q?").contains("negative\n</criterion_type>\n\n"));
        assert!(
            user_prompt("x", 1.0, "a", "q?")
                .contains("</criterion>\n\n<query>\nq?\n</query>\n\n<response>")
        );
        // -0.0 is not below zero, as in Python.
        assert_eq!(criterion_type(-0.0), "positive");
    }

    #[test]
    fn the_system_prompt_joins_continued_lines_as_python_does() {
        assert!(SYSTEM_PROMPT.starts_with(
            "You evaluate a response against a single criterion and decide whether the thing"
        ));
        assert!(
            SYSTEM_PROMPT
                .ends_with("{\"criterion_status\": \"MET\", \"explanation\": \"Brief reason.\"}")
        );
        assert!(!SYSTEM_PROMPT.contains('\\'));
    }
}
