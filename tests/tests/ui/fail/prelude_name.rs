use grader_core::grader;

// `Result` would shadow the prelude's `Result` in this module.
#[grader]
fn result(answer: &str) -> bool {
    answer == "42"
}

fn parse(text: &str) -> Result<u32, std::num::ParseIntError> {
    text.parse()
}

fn main() {
    let _ = parse("1");
    let _ = ResultGrader { answer: "42" };
}
