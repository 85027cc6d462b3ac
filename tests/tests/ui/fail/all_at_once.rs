use grader_core::grader;

// Every mistake is reported in one compile, and the caller below sees no follow-on error.
#[grader(name = "", colour = "red", skip(missing))]
const fn check((a, b): (u32, u32), answer: &str) {
    let _ = (a, b, answer);
}

fn main() {
    let _ = Check { answer: "x" }.grade(1.0);
}
