use grader_env::template;

#[template]
struct Echo {
    word: String,
}

fn main() {}
