use grader_core::grader;
use grader_core::text::ExactMatch;

// The generated `ExactMatch` clashes with the import; `#[grader(type = …)]` is the fix.
#[grader]
fn exact_match(answer: &str) -> bool {
    answer == "42"
}

fn main() {
    let _ = ExactMatch { answer: "42", expected: "42", normalize_text: true };
}
