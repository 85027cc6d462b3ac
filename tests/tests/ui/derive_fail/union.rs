use grader_core::Grader;

#[derive(Grader)]
#[grader(score = check)]
union Bits {
    int: u32,
    float: f32,
}

fn main() {}
