use grader_core::grader;

#[grader]
struct NotAFunction {
    value: f64,
}

fn main() {}
