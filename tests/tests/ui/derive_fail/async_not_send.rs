use std::rc::Rc;

use grader_core::Grader;

#[derive(Grader)]
#[grader(score = async check)]
struct Replied {
    answer: Rc<str>,
}

impl Replied {
    async fn check(&self) -> bool {
        tokio::task::yield_now().await;
        !self.answer.is_empty()
    }
}

fn main() {}
