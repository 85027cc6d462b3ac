//! An async grader whose function holds an `Rc` across an await is still a grader; its future is
//! simply not `Send`, and it can be awaited where that is fine.
use std::rc::Rc;

use grader_core::grader;

#[grader]
async fn shared_answer(answer: Rc<str>) -> bool {
    let held = Rc::clone(&answer);
    std::future::ready(()).await;
    !held.is_empty()
}

fn main() {
    let future = SharedAnswer { answer: Rc::from("yes") }.grade(1.0);
    drop(future);
}
