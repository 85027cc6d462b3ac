use grader_core::grader;

#[grader]
unsafe fn trusted(answer: &str) -> f64 {
    answer.len() as f64
}

fn main() {}
