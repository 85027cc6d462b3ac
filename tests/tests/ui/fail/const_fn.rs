use grader_core::grader;

#[grader]
const fn always() -> f64 {
    1.0
}

fn main() {
    let _ = Always {}.grade(1.0);
}
