//! Compile-time behaviour of `#[grader]`: what must compile (`ui/pass`) and the exact error
//! for each mistake (`ui/fail`, with the expected compiler output beside each file).

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}
