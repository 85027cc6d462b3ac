//! An async grader whose function's future is `Send` grades with a `Send` future, so it can be
//! spawned and gathered beside `BashGrader` and hand-written graders.
use grader_core::{Gather, Grader, grader};

#[grader]
async fn slow_check(answer: &str, expected: String) -> Result<f64, std::io::Error> {
    std::future::ready(()).await;
    Ok(if answer == expected { 1.0 } else { 0.0 })
}

#[grader]
fn fast_check(value: f64) -> f64 {
    value
}

fn assert_send<T: Send>(_: T) {}

fn main() {
    assert_send(SlowCheck { answer: "a", expected: "a".into() }.grade(1.0));
    assert_send(Grader::grade(SlowCheck { answer: "a", expected: "a".into() }, 1.0));
    assert_send(FastCheck { value: 1.0 }.grade(1.0).named("fast"));
    let _gather = Gather::new()
        .add(SlowCheck { answer: "a", expected: "a".into() }.grade(0.5))
        .add(Grader::grade(FastCheck { value: 1.0 }, 0.5));
}
