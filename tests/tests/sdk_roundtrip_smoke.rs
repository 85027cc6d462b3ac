//! The Python reference is reachable from the tests: its venv is made and imports.
use grader_tests::python::{hud_python, run_script};

#[test]
fn the_reference_package_imports() {
    let Some(python) = hud_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let out = run_script(
        &python,
        "import sys, hud.graders as g; print(g.EvaluationResult.model_validate_json(sys.stdin.read()).reward)",
        r#"{"reward": 0.25}"#,
    );
    assert_eq!(out.trim(), "0.25");
}
