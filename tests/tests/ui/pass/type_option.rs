use grader_core::text::ExactMatch;
use grader_core::{Grader, grader};

/// A grader beside a type of the same name.
#[grader(type = ExactMatchGrader)]
fn exact_match(answer: &str) -> bool {
    answer == "42"
}

/// A function whose default type name would shadow the prelude.
#[grader(type = ResultCheck)]
fn result(answer: &str) -> bool {
    answer.parse::<u32>().is_ok()
}

fn parse(text: &str) -> Result<u32, std::num::ParseIntError> {
    text.parse()
}

fn main() {
    let builtin = ExactMatch { answer: "42", expected: "42", normalize_text: true };
    let ours = ExactMatchGrader { answer: "42" };
    assert_eq!(ours.name(), "exact_match");
    assert_eq!(builtin.name(), "exact_match");
    assert_eq!(ResultCheck { answer: "7" }.name(), "result");
    assert_eq!(parse("7"), Ok(7));
}
