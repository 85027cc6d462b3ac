//! A synchronous grader grades at once, with no async runtime anywhere in the program.
use grader_core::grader;

/// Passes when the answer mentions the city.
#[grader]
fn mentions_city(answer: &str, city: &str) -> bool {
    answer.contains(city)
}

fn main() {
    let sub = MentionsCity { answer: "It is Paris.", city: "Paris" }
        .grade(0.5)
        .expect("a valid score");
    assert_eq!((sub.name(), sub.value(), sub.weight()), ("mentions_city", 1.0, 0.5));
    assert!(mentions_city("still callable", "callable"));
}
