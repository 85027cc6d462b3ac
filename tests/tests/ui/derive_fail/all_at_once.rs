use grader_core::Grader;

// Every problem is reported at once, and the code using the grader reports nothing more.
#[derive(Grader)]
#[grader(name = "", skip(missing), colour = "red")]
pub struct Broken<'a, T> {
    #[grader(skip, skip)]
    pub answer: &'a str,
    pub value: T,
}

fn main() {
    let broken = Broken { answer: "a", value: 1 };
    let _ = broken.name();
    let _ = Grader::parameters(&broken);
}
