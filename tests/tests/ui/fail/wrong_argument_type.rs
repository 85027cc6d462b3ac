use grader_core::grader;

#[grader]
fn at_least(count: u32, minimum: u32) -> bool {
    count >= minimum
}

fn main() {
    let _ = AtLeast { count: "3", minimum: 2 }.grade(1.0);
}
