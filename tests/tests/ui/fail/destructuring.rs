use grader_core::grader;

#[grader]
fn in_range((low, high): (f64, f64), value: f64) -> bool {
    low <= value && value <= high
}

fn main() {
    let _ = InRange { value: 0.5 }.grade(1.0);
}
