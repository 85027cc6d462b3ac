//! Compile-time behaviour of `#[grader]`, `#[derive(Grader)]` and `#[template]`: what must compile (`ui/pass`,
//! `ui/derive_pass`) and the exact error
//! for each mistake (`ui/fail`, `ui/derive_fail`, with the expected compiler output beside each
//! file).

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
    cases.pass("tests/ui/derive_pass/*.rs");
    cases.compile_fail("tests/ui/derive_fail/*.rs");
}

#[test]
fn template_ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/template_pass/*.rs");
    cases.compile_fail("tests/ui/template_fail/*.rs");
}
