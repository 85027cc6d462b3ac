//! An async grader whose function holds an `Rc` across an await has a future that is not
//! `Send`, which every grader's future must be: the error is on the function.
use std::rc::Rc;

use grader_core::grader;

#[grader]
async fn shared_answer(answer: Rc<str>) -> bool {
    let held = Rc::clone(&answer);
    std::future::ready(()).await;
    !held.is_empty()
}

fn main() {
    drop(SharedAnswer { answer: Rc::from("yes") }.grade(1.0));
}
