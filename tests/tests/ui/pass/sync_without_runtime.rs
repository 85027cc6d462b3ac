//! A synchronous grader grades at once with `.now()`, with no async runtime anywhere in the
//! program; so does a tree of finished subscores.
use grader_core::{SubScore, all, grader};

/// Passes when the answer mentions the city.
#[grader]
fn mentions_city(answer: &str, city: &str) -> bool {
    answer.contains(city)
}

fn main() {
    let sub = MentionsCity { answer: "It is Paris.", city: "Paris" }
        .grade(0.5)
        .now()
        .expect("a valid score");
    assert_eq!((sub.name(), sub.value(), sub.weight()), ("mentions_city", 1.0, 0.5));
    assert!(mentions_city("still callable", "callable"));
    let node = all("both", [sub, SubScore::new("other", 0.5).expect("valid")])
        .grade(1.0)
        .now()
        .expect("finished children");
    assert_eq!(node.value(), 0.5);
}
