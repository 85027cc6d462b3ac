//! Expansion snapshots: what `#[template]` generates, pretty-printed. Update with
//! `UPDATE_EXPECT=1 cargo test -p grader-macros`.

use expect_test::{Expect, expect};
use quote::quote;

fn check(args: proc_macro2::TokenStream, input: proc_macro2::TokenStream, expected: &Expect) {
    let output = super::template(args, input);
    let file: syn::File = syn::parse2(output).expect("the expansion parses as a file");
    expected.assert_eq(&prettyplease::unparse(&file));
}

#[test]
fn args_and_options() {
    check(
        quote!(id = "fix-tests", returns = Vec<i64>),
        quote! {
            /// Fix the tests.
            pub async fn fix_tests(repo: String, limit: Option<u32>, session: Session) -> f64 {
                1.0
            }
        },
        &expect![[r#"
            /// Fix the tests.
            pub async fn fix_tests(repo: String, limit: Option<u32>, session: Session) -> f64 {
                1.0
            }
            /// Fix the tests.
            #[derive(
                ::grader_env::__private::serde::Deserialize,
                ::grader_env::__private::schemars::JsonSchema
            )]
            #[serde(crate = "::grader_env::__private::serde")]
            #[schemars(crate = "::grader_env::__private::schemars")]
            #[allow(missing_docs)]
            pub struct FixTests {
                pub repo: String,
                pub limit: Option<u32>,
            }
            impl FixTests {
                /// The template, to register with `Environment::template`.
                #[must_use]
                pub fn template() -> ::grader_env::Template {
                    ::grader_env::Template::new(
                            "fix-tests",
                            |args: FixTests, session: ::grader_env::Session| {
                                fix_tests(args.repo, args.limit, session)
                            },
                        )
                        .description("Fix the tests.")
                        .returns::<Vec<i64>>()
                }
            }
        "#]],
    );
}

#[test]
fn errors_keep_the_function_and_a_stub() {
    check(
        quote!(),
        quote! {
            fn echo(word: &str, count: u8, session: Session) -> f64 {
                1.0
            }
        },
        &expect![[r##"
            ::core::compile_error! {
                "#[template] functions must be `async`: a template awaits the agent's answer"
            }
            ::core::compile_error! {
                "#[template] parameters must be owned types: their values are parsed from JSON (take `String`, not `&str`)"
            }
            fn echo(word: &str, count: u8, session: Session) -> f64 {
                1.0
            }
            struct Echo {
                count: u8,
            }
            impl Echo {
                /// The template (not generated: the function has errors).
                fn template() -> ::grader_env::Template {
                    ::core::unreachable!()
                }
            }
        "##]],
    );
}

#[test]
fn described_and_defaulted_arguments() {
    check(
        quote!(),
        quote! {
            async fn checkout(
                /// The repository.
                repo: String,
                #[arg(description = "Seconds", default = 60)] timeout: u64,
                #[arg(default)] tags: Vec<String>,
                session: Session,
            ) -> f64 {
                1.0
            }
        },
        &expect![[r#"
            async fn checkout(
                repo: String,
                timeout: u64,
                tags: Vec<String>,
                session: Session,
            ) -> f64 {
                1.0
            }
            #[derive(
                ::grader_env::__private::serde::Deserialize,
                ::grader_env::__private::schemars::JsonSchema
            )]
            #[serde(crate = "::grader_env::__private::serde")]
            #[schemars(crate = "::grader_env::__private::schemars")]
            #[allow(missing_docs)]
            struct Checkout {
                #[schemars(description = "The repository.")]
                repo: String,
                #[schemars(description = "Seconds")]
                #[serde(default = "Checkout::__default_timeout")]
                timeout: u64,
                #[serde(default)]
                tags: Vec<String>,
            }
            impl Checkout {
                fn __default_timeout() -> u64 {
                    60
                }
                /// The template, to register with `Environment::template`.
                #[must_use]
                fn template() -> ::grader_env::Template {
                    ::grader_env::Template::new(
                            "checkout",
                            |args: Checkout, session: ::grader_env::Session| {
                                checkout(args.repo, args.timeout, args.tags, session)
                            },
                        )
                        .description("")
                }
            }
        "#]],
    );
}

#[test]
fn a_state_parameter_is_passed_in_its_place_and_is_no_argument() {
    check(
        quote!(),
        quote! {
            async fn solve(n: usize, State(problems): State<Arc<Problems>>, hint: bool, session: Session) -> f64 {
                1.0
            }
        },
        &expect![[r#"
            async fn solve(
                n: usize,
                State(problems): State<Arc<Problems>>,
                hint: bool,
                session: Session,
            ) -> f64 {
                1.0
            }
            #[derive(
                ::grader_env::__private::serde::Deserialize,
                ::grader_env::__private::schemars::JsonSchema
            )]
            #[serde(crate = "::grader_env::__private::serde")]
            #[schemars(crate = "::grader_env::__private::schemars")]
            #[allow(missing_docs)]
            struct Solve {
                n: usize,
                hint: bool,
            }
            impl Solve {
                /// The template, to register with `Environment::template`.
                #[must_use]
                fn template() -> ::grader_env::StatefulTemplate<Arc<Problems>> {
                    ::grader_env::Template::with_state(
                            "solve",
                            |
                                args: Solve,
                                state: ::grader_env::State<Arc<Problems>>,
                                session: ::grader_env::Session|
                            { solve(args.n, state, args.hint, session) },
                        )
                        .description("")
                }
            }
        "#]],
    );
}
