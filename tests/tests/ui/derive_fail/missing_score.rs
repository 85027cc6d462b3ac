use grader_core::Grader;

#[derive(Grader)]
struct Exact {
    answer: String,
}

fn main() {
    let _ = Exact { answer: "a".into() }.name();
}
