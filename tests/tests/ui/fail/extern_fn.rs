use grader_core::grader;

#[grader]
extern "C" fn from_c(value: f64) -> f64 {
    value
}

fn main() {
    let _ = FromC { value: 1.0 }.grade(1.0);
}
