//! Arguments described (a doc comment or `#[arg(description = …)]`) and defaulted
//! (`default = value`, or `default` for the type's `Default`); the attributes leave the
//! function, which is called as written.
use grader_env::{Environment, Session, template};

/// Check out a repository.
#[template(id = "checkout")]
pub async fn checkout(
    /// The repository URL.
    repo: String,
    #[arg(description = "Seconds the tests may take", default = 30 * 2)] timeout: u64,
    #[arg(default)] tags: Vec<String>,
    session: Session,
) -> Result<f64, grader_env::PromptError> {
    session.prompt(format!("{repo} {timeout} {tags:?}")).await?;
    Ok(1.0)
}

fn main() {
    let env = Environment::new("e")
        .template(Checkout::template())
        .unwrap();
    let args = &env.templates()[0].manifest()["args"];
    assert_eq!(
        args["properties"]["repo"]["description"],
        "The repository URL."
    );
    assert_eq!(args["properties"]["timeout"]["default"], 60);
    assert_eq!(args["properties"]["tags"]["default"], serde_json::json!([]));
    assert_eq!(args["required"], serde_json::json!(["repo"]));
    let _ = checkout;
}
