use grader_core::Grader;

#[derive(Grader)]
#[grader(score = async check)]
struct Replied {
    answer: String,
}

impl Replied {
    async fn check(&self) -> Option<f64> {
        Some(1.0)
    }
}

fn main() {}
