//! Expansion snapshots: what `#[grader]` generates for each shape of function, pretty-printed.
//! Update with `UPDATE_EXPECT=1 cargo test -p grader-macros`.
//!
//! Why this file is long: each snapshot is the whole expansion of one shape of function, kept
//! inline beside its input so that a change to the generated code is read in one place.

use expect_test::{Expect, expect};
use quote::quote;

fn check(args: proc_macro2::TokenStream, input: proc_macro2::TokenStream, expected: &Expect) {
    let output = crate::attribute::grader(args, input);
    let file: syn::File = syn::parse2(output).expect("the expansion parses as a file");
    expected.assert_eq(&prettyplease::unparse(&file));
}

#[test]
fn sync() {
    check(
        quote!(),
        quote! {
            /// Passes when the answer names the city.
            pub fn mentions_city(answer: String, city: String) -> bool {
                answer.contains(&city)
            }
        },
        &expect![[r#"
            /// Passes when the answer names the city.
            pub fn mentions_city(answer: String, city: String) -> bool {
                answer.contains(&city)
            }
            /// Passes when the answer names the city.
            pub struct MentionsCity {
                /// The `answer` argument of `mentions_city`.
                pub answer: String,
                /// The `city` argument of `mentions_city`.
                pub city: String,
            }
            impl MentionsCity {
                /// The grading of this grader at `weight`: [`Grader::grade`](::grader_core::Grader::grade), callable without importing the trait. Await it, run it with `.now()`, or add it to a gather or a tree.
                pub fn grade<'__grading>(
                    self,
                    weight: f64,
                ) -> ::grader_core::Grading<'__grading, Self>
                where
                    Self: '__grading,
                {
                    ::grader_core::Grading::new(self, weight)
                }
            }
            impl ::grader_core::Grader for MentionsCity {
                fn name(&self) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed("mentions_city")
                }
                #[allow(clippy::needless_borrow)]
                fn parameters(&self) -> ::grader_core::Info {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    let mut parameters = ::grader_core::Info::with_capacity(2usize);
                    parameters
                        .insert(
                            ::std::string::String::from("answer"),
                            (&::grader_core::__private::Capture(&self.answer))
                                .__grader_capture("String"),
                        );
                    parameters
                        .insert(
                            ::std::string::String::from("city"),
                            (&::grader_core::__private::Capture(&self.city))
                                .__grader_capture("String"),
                        );
                    parameters
                }
                #[allow(clippy::needless_borrow)]
                fn write_parameters(&self, out: &mut ::grader_core::params::ParametersWriter) {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    (&::grader_core::__private::Capture(&self.answer))
                        .__grader_write(out, "\"answer\":", "String");
                    (&::grader_core::__private::Capture(&self.city))
                        .__grader_write(out, "\"city\":", "String");
                }
                fn score(
                    self,
                ) -> impl ::core::future::Future<
                    Output = ::core::result::Result<::grader_core::Score, ::grader_core::Failure>,
                > + ::core::marker::Send {
                    ::core::future::ready(<Self as ::grader_core::SyncGrader>::score_now(self))
                }
                fn score_at_once(self) -> ::grader_core::grader::AtOnce<Self> {
                    ::grader_core::grader::AtOnce::Scored(
                        <Self as ::grader_core::SyncGrader>::score_now(self),
                    )
                }
            }
            impl ::grader_core::SyncGrader for MentionsCity {
                fn score_now(
                    self,
                ) -> ::core::result::Result<::grader_core::Score, ::grader_core::Failure> {
                    {
                        let Self { answer: arg0, city: arg1 } = self;
                        let value = mentions_city(arg0, arg1);
                        <bool as ::grader_core::IntoScore>::into_score(value)
                    }
                }
            }
        "#]],
    );
}

#[test]
fn r#async() {
    check(
        quote!(),
        quote! {
            async fn replied(answer: String) -> Result<f64, Error> {
                Ok(1.0)
            }
        },
        &expect![[r#"
            async fn replied(answer: String) -> Result<f64, Error> {
                Ok(1.0)
            }
            /// The grader made by `#[grader]` from `replied`.
            struct Replied {
                /// The `answer` argument of `replied`.
                answer: String,
            }
            impl Replied {
                /// The grading of this grader at `weight`: [`Grader::grade`](::grader_core::Grader::grade), callable without importing the trait. Await it, or add it to a gather or a tree.
                fn grade<'__grading>(self, weight: f64) -> ::grader_core::Grading<'__grading, Self>
                where
                    Self: '__grading,
                {
                    ::grader_core::Grading::new(self, weight)
                }
            }
            impl ::grader_core::Grader for Replied {
                fn name(&self) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed("replied")
                }
                #[allow(clippy::needless_borrow)]
                fn parameters(&self) -> ::grader_core::Info {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    let mut parameters = ::grader_core::Info::with_capacity(1usize);
                    parameters
                        .insert(
                            ::std::string::String::from("answer"),
                            (&::grader_core::__private::Capture(&self.answer))
                                .__grader_capture("String"),
                        );
                    parameters
                }
                #[allow(clippy::needless_borrow)]
                fn write_parameters(&self, out: &mut ::grader_core::params::ParametersWriter) {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    (&::grader_core::__private::Capture(&self.answer))
                        .__grader_write(out, "\"answer\":", "String");
                }
                async fn score(
                    self,
                ) -> ::core::result::Result<::grader_core::Score, ::grader_core::Failure> {
                    {
                        let Self { answer: arg0 } = self;
                        let value = replied(arg0).await;
                        <Result<f64, Error> as ::grader_core::IntoScore>::into_score(value)
                    }
                }
            }
        "#]],
    );
}

#[test]
fn borrowed() {
    check(
        quote!(),
        quote! {
            pub(crate) fn tests_pass<'a>(repo: &Path, filter: &'a str, seen: &mut Vec<&'_ str>, items: &'a [u8]) -> f64 {
                1.0
            }
        },
        &expect![[r#"
            pub(crate) fn tests_pass<'a>(
                repo: &Path,
                filter: &'a str,
                seen: &mut Vec<&'_ str>,
                items: &'a [u8],
            ) -> f64 {
                1.0
            }
            /// The grader made by `#[grader]` from `tests_pass`.
            pub(crate) struct TestsPass<'a, 'repo, 'seen, 'seen2> {
                /// The `repo` argument of `tests_pass`.
                pub(crate) repo: &'repo Path,
                /// The `filter` argument of `tests_pass`.
                pub(crate) filter: &'a str,
                /// The `seen` argument of `tests_pass`.
                pub(crate) seen: &'seen mut Vec<&'seen2 str>,
                /// The `items` argument of `tests_pass`.
                pub(crate) items: &'a [u8],
            }
            impl<'a, 'repo, 'seen, 'seen2> TestsPass<'a, 'repo, 'seen, 'seen2> {
                /// The grading of this grader at `weight`: [`Grader::grade`](::grader_core::Grader::grade), callable without importing the trait. Await it, run it with `.now()`, or add it to a gather or a tree.
                pub(crate) fn grade<'__grading>(
                    self,
                    weight: f64,
                ) -> ::grader_core::Grading<'__grading, Self>
                where
                    Self: '__grading,
                {
                    ::grader_core::Grading::new(self, weight)
                }
            }
            impl<'a, 'repo, 'seen, 'seen2> ::grader_core::Grader
            for TestsPass<'a, 'repo, 'seen, 'seen2> {
                fn name(&self) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed("tests_pass")
                }
                #[allow(clippy::needless_borrow)]
                fn parameters(&self) -> ::grader_core::Info {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    let mut parameters = ::grader_core::Info::with_capacity(4usize);
                    parameters
                        .insert(
                            ::std::string::String::from("repo"),
                            (&::grader_core::__private::Capture(&self.repo)).__grader_capture("Path"),
                        );
                    parameters
                        .insert(
                            ::std::string::String::from("filter"),
                            (&::grader_core::__private::Capture(&self.filter))
                                .__grader_capture("str"),
                        );
                    parameters
                        .insert(
                            ::std::string::String::from("seen"),
                            (&::grader_core::__private::Capture(&self.seen))
                                .__grader_capture("Vec<&str>"),
                        );
                    parameters
                        .insert(
                            ::std::string::String::from("items"),
                            (&::grader_core::__private::Capture(&self.items))
                                .__grader_capture("[u8]"),
                        );
                    parameters
                }
                #[allow(clippy::needless_borrow)]
                fn write_parameters(&self, out: &mut ::grader_core::params::ParametersWriter) {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    (&::grader_core::__private::Capture(&self.repo))
                        .__grader_write(out, "\"repo\":", "Path");
                    (&::grader_core::__private::Capture(&self.filter))
                        .__grader_write(out, "\"filter\":", "str");
                    (&::grader_core::__private::Capture(&self.seen))
                        .__grader_write(out, "\"seen\":", "Vec<&str>");
                    (&::grader_core::__private::Capture(&self.items))
                        .__grader_write(out, "\"items\":", "[u8]");
                }
                fn score(
                    self,
                ) -> impl ::core::future::Future<
                    Output = ::core::result::Result<::grader_core::Score, ::grader_core::Failure>,
                > + ::core::marker::Send {
                    ::core::future::ready(<Self as ::grader_core::SyncGrader>::score_now(self))
                }
                fn score_at_once(self) -> ::grader_core::grader::AtOnce<Self> {
                    ::grader_core::grader::AtOnce::Scored(
                        <Self as ::grader_core::SyncGrader>::score_now(self),
                    )
                }
            }
            impl<'a, 'repo, 'seen, 'seen2> ::grader_core::SyncGrader
            for TestsPass<'a, 'repo, 'seen, 'seen2> {
                fn score_now(
                    self,
                ) -> ::core::result::Result<::grader_core::Score, ::grader_core::Failure> {
                    {
                        let Self { repo: arg0, filter: arg1, seen: arg2, items: arg3 } = self;
                        let value = tests_pass(arg0, arg1, arg2, arg3);
                        <f64 as ::grader_core::IntoScore>::into_score(value)
                    }
                }
            }
        "#]],
    );
}

#[test]
fn generic() {
    check(
        quote!(),
        quote! {
            fn within<T: PartialOrd + Serialize, const N: usize>(values: [T; N], limit: T) -> bool
            where
                T: Copy,
            {
                values.iter().all(|v| *v <= limit)
            }
        },
        &expect![[r#"
            fn within<T: PartialOrd + Serialize, const N: usize>(values: [T; N], limit: T) -> bool
            where
                T: Copy,
            {
                values.iter().all(|v| *v <= limit)
            }
            /// The grader made by `#[grader]` from `within`.
            struct Within<T: PartialOrd + Serialize, const N: usize>
            where
                T: Copy,
            {
                /// The `values` argument of `within`.
                values: [T; N],
                /// The `limit` argument of `within`.
                limit: T,
            }
            impl<T: PartialOrd + Serialize, const N: usize> Within<T, N>
            where
                T: Copy,
            {
                /// The grading of this grader at `weight`: [`Grader::grade`](::grader_core::Grader::grade), callable without importing the trait. Await it, run it with `.now()`, or add it to a gather or a tree.
                fn grade<'__grading>(self, weight: f64) -> ::grader_core::Grading<'__grading, Self>
                where
                    Self: '__grading,
                {
                    ::grader_core::Grading::new(self, weight)
                }
            }
            impl<T: PartialOrd + Serialize, const N: usize> ::grader_core::Grader for Within<T, N>
            where
                T: Copy,
            {
                fn name(&self) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed("within")
                }
                #[allow(clippy::needless_borrow)]
                fn parameters(&self) -> ::grader_core::Info {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    let mut parameters = ::grader_core::Info::with_capacity(2usize);
                    parameters
                        .insert(
                            ::std::string::String::from("values"),
                            (&::grader_core::__private::Capture(&self.values))
                                .__grader_capture("[T; N]"),
                        );
                    parameters
                        .insert(
                            ::std::string::String::from("limit"),
                            (&::grader_core::__private::Capture(&self.limit)).__grader_capture("T"),
                        );
                    parameters
                }
                #[allow(clippy::needless_borrow)]
                fn write_parameters(&self, out: &mut ::grader_core::params::ParametersWriter) {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    (&::grader_core::__private::Capture(&self.values))
                        .__grader_write(out, "\"values\":", "[T; N]");
                    (&::grader_core::__private::Capture(&self.limit))
                        .__grader_write(out, "\"limit\":", "T");
                }
                fn score(
                    self,
                ) -> impl ::core::future::Future<
                    Output = ::core::result::Result<::grader_core::Score, ::grader_core::Failure>,
                > + ::core::marker::Send {
                    ::core::future::ready(<Self as ::grader_core::SyncGrader>::score_now(self))
                }
                fn score_at_once(self) -> ::grader_core::grader::AtOnce<Self> {
                    ::grader_core::grader::AtOnce::Scored(
                        <Self as ::grader_core::SyncGrader>::score_now(self),
                    )
                }
            }
            impl<T: PartialOrd + Serialize, const N: usize> ::grader_core::SyncGrader
            for Within<T, N>
            where
                T: Copy,
            {
                fn score_now(
                    self,
                ) -> ::core::result::Result<::grader_core::Score, ::grader_core::Failure> {
                    {
                        let Self { values: arg0, limit: arg1 } = self;
                        let value = within::<T, N>(arg0, arg1);
                        <bool as ::grader_core::IntoScore>::into_score(value)
                    }
                }
            }
        "#]],
    );
}

#[test]
fn impl_trait() {
    check(
        quote!(),
        quote! {
            fn shown(value: impl Display, lines: impl Iterator<Item = &'static str>) -> (f64, Info) {
                (1.0, Info::new())
            }
        },
        &expect![[r#"
            fn shown(value: impl Display, lines: impl Iterator<Item = &'static str>) -> (f64, Info) {
                (1.0, Info::new())
            }
            /// The grader made by `#[grader]` from `shown`.
            struct Shown<__Value: Display, __Lines: Iterator<Item = &'static str>> {
                /// The `value` argument of `shown`.
                value: __Value,
                /// The `lines` argument of `shown`.
                lines: __Lines,
            }
            impl<__Value: Display, __Lines: Iterator<Item = &'static str>> Shown<__Value, __Lines> {
                /// The grading of this grader at `weight`: [`Grader::grade`](::grader_core::Grader::grade), callable without importing the trait. Await it, run it with `.now()`, or add it to a gather or a tree.
                fn grade<'__grading>(self, weight: f64) -> ::grader_core::Grading<'__grading, Self>
                where
                    Self: '__grading,
                {
                    ::grader_core::Grading::new(self, weight)
                }
            }
            impl<__Value: Display, __Lines: Iterator<Item = &'static str>> ::grader_core::Grader
            for Shown<__Value, __Lines> {
                fn name(&self) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed("shown")
                }
                #[allow(clippy::needless_borrow)]
                fn parameters(&self) -> ::grader_core::Info {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    let mut parameters = ::grader_core::Info::with_capacity(2usize);
                    parameters
                        .insert(
                            ::std::string::String::from("value"),
                            (&::grader_core::__private::Capture(&self.value))
                                .__grader_capture("impl Display"),
                        );
                    parameters
                        .insert(
                            ::std::string::String::from("lines"),
                            (&::grader_core::__private::Capture(&self.lines))
                                .__grader_capture("impl Iterator<Item = &str>"),
                        );
                    parameters
                }
                #[allow(clippy::needless_borrow)]
                fn write_parameters(&self, out: &mut ::grader_core::params::ParametersWriter) {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    (&::grader_core::__private::Capture(&self.value))
                        .__grader_write(out, "\"value\":", "impl Display");
                    (&::grader_core::__private::Capture(&self.lines))
                        .__grader_write(out, "\"lines\":", "impl Iterator<Item = &str>");
                }
                fn score(
                    self,
                ) -> impl ::core::future::Future<
                    Output = ::core::result::Result<::grader_core::Score, ::grader_core::Failure>,
                > + ::core::marker::Send {
                    ::core::future::ready(<Self as ::grader_core::SyncGrader>::score_now(self))
                }
                fn score_at_once(self) -> ::grader_core::grader::AtOnce<Self> {
                    ::grader_core::grader::AtOnce::Scored(
                        <Self as ::grader_core::SyncGrader>::score_now(self),
                    )
                }
            }
            impl<__Value: Display, __Lines: Iterator<Item = &'static str>> ::grader_core::SyncGrader
            for Shown<__Value, __Lines> {
                fn score_now(
                    self,
                ) -> ::core::result::Result<::grader_core::Score, ::grader_core::Failure> {
                    {
                        let Self { value: arg0, lines: arg1 } = self;
                        let value = shown(arg0, arg1);
                        <(f64, Info) as ::grader_core::IntoScore>::into_score(value)
                    }
                }
            }
        "#]],
    );
}

#[test]
fn skip_and_name() {
    check(
        quote!(name = "api_answer", skip(api_key, r#type)),
        quote! {
            fn api_answered(api_key: &str, r#type: &str, answer: &str) -> bool {
                true
            }
        },
        &expect![[r#"
            fn api_answered(api_key: &str, r#type: &str, answer: &str) -> bool {
                true
            }
            /// The grader made by `#[grader]` from `api_answered`.
            struct ApiAnswered<'api_key, 'type2, 'answer> {
                /// The `api_key` argument of `api_answered` (not recorded in `_parameters`).
                api_key: &'api_key str,
                /// The `type` argument of `api_answered` (not recorded in `_parameters`).
                r#type: &'type2 str,
                /// The `answer` argument of `api_answered`.
                answer: &'answer str,
            }
            impl<'api_key, 'type2, 'answer> ApiAnswered<'api_key, 'type2, 'answer> {
                /// The grading of this grader at `weight`: [`Grader::grade`](::grader_core::Grader::grade), callable without importing the trait. Await it, run it with `.now()`, or add it to a gather or a tree.
                fn grade<'__grading>(self, weight: f64) -> ::grader_core::Grading<'__grading, Self>
                where
                    Self: '__grading,
                {
                    ::grader_core::Grading::new(self, weight)
                }
            }
            impl<'api_key, 'type2, 'answer> ::grader_core::Grader
            for ApiAnswered<'api_key, 'type2, 'answer> {
                fn name(&self) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed("api_answer")
                }
                #[allow(clippy::needless_borrow)]
                fn parameters(&self) -> ::grader_core::Info {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    let mut parameters = ::grader_core::Info::with_capacity(1usize);
                    parameters
                        .insert(
                            ::std::string::String::from("answer"),
                            (&::grader_core::__private::Capture(&self.answer))
                                .__grader_capture("str"),
                        );
                    parameters
                }
                #[allow(clippy::needless_borrow)]
                fn write_parameters(&self, out: &mut ::grader_core::params::ParametersWriter) {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    (&::grader_core::__private::Capture(&self.answer))
                        .__grader_write(out, "\"answer\":", "str");
                }
                fn score(
                    self,
                ) -> impl ::core::future::Future<
                    Output = ::core::result::Result<::grader_core::Score, ::grader_core::Failure>,
                > + ::core::marker::Send {
                    ::core::future::ready(<Self as ::grader_core::SyncGrader>::score_now(self))
                }
                fn score_at_once(self) -> ::grader_core::grader::AtOnce<Self> {
                    ::grader_core::grader::AtOnce::Scored(
                        <Self as ::grader_core::SyncGrader>::score_now(self),
                    )
                }
            }
            impl<'api_key, 'type2, 'answer> ::grader_core::SyncGrader
            for ApiAnswered<'api_key, 'type2, 'answer> {
                fn score_now(
                    self,
                ) -> ::core::result::Result<::grader_core::Score, ::grader_core::Failure> {
                    {
                        let Self { api_key: arg0, r#type: arg1, answer: arg2 } = self;
                        let value = api_answered(arg0, arg1, arg2);
                        <bool as ::grader_core::IntoScore>::into_score(value)
                    }
                }
            }
        "#]],
    );
}

#[test]
fn crate_override() {
    check(
        quote!(crate = ::my_sdk::grader_core),
        quote! {
            fn constant() -> f64 {
                1.0
            }
        },
        &expect![[r#"
            fn constant() -> f64 {
                1.0
            }
            /// The grader made by `#[grader]` from `constant`.
            struct Constant {}
            impl Constant {
                /// The grading of this grader at `weight`: [`Grader::grade`](::my_sdk::grader_core::Grader::grade), callable without importing the trait. Await it, run it with `.now()`, or add it to a gather or a tree.
                fn grade<'__grading>(
                    self,
                    weight: f64,
                ) -> ::my_sdk::grader_core::Grading<'__grading, Self>
                where
                    Self: '__grading,
                {
                    ::my_sdk::grader_core::Grading::new(self, weight)
                }
            }
            impl ::my_sdk::grader_core::Grader for Constant {
                fn name(&self) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed("constant")
                }
                fn parameters(&self) -> ::my_sdk::grader_core::Info {
                    ::my_sdk::grader_core::Info::new()
                }
                fn write_parameters(
                    &self,
                    _out: &mut ::my_sdk::grader_core::params::ParametersWriter,
                ) {}
                fn score(
                    self,
                ) -> impl ::core::future::Future<
                    Output = ::core::result::Result<
                        ::my_sdk::grader_core::Score,
                        ::my_sdk::grader_core::Failure,
                    >,
                > + ::core::marker::Send {
                    ::core::future::ready(
                        <Self as ::my_sdk::grader_core::SyncGrader>::score_now(self),
                    )
                }
                fn score_at_once(self) -> ::my_sdk::grader_core::grader::AtOnce<Self> {
                    ::my_sdk::grader_core::grader::AtOnce::Scored(
                        <Self as ::my_sdk::grader_core::SyncGrader>::score_now(self),
                    )
                }
            }
            impl ::my_sdk::grader_core::SyncGrader for Constant {
                fn score_now(
                    self,
                ) -> ::core::result::Result<
                    ::my_sdk::grader_core::Score,
                    ::my_sdk::grader_core::Failure,
                > {
                    {
                        let Self {} = self;
                        let value = constant();
                        <f64 as ::my_sdk::grader_core::IntoScore>::into_score(value)
                    }
                }
            }
        "#]],
    );
}

#[test]
fn error_fallback() {
    check(
        quote!(colour = "red"),
        quote! {
            fn broken((a, b): (u8, u8), answer: &str) {
                let _ = (a, b, answer);
            }
        },
        &expect![[r##"
            ::core::compile_error! {
                "unknown #[grader] option `colour`; the options are `name = \"…\"`, `type = Name`, `skip(param, …)` or `crate = path`"
            }
            ::core::compile_error! {
                "#[grader] parameters must be plain identifiers, which name the grader's fields; destructure inside the body"
            }
            ::core::compile_error! {
                "#[grader] functions return a score; add a return type such as `-> f64`, `-> bool` or `-> Result<f64, E>`"
            }
            fn broken((a, b): (u8, u8), answer: &str) {
                let _ = (a, b, answer);
            }
            /// The grader made by `#[grader]` from `broken`.
            struct Broken<'answer> {
                /// The `answer` argument of `broken`.
                answer: &'answer str,
            }
            impl<'answer> Broken<'answer> {
                /// The grading of this grader at `weight`: [`Grader::grade`](::grader_core::Grader::grade), callable without importing the trait. Await it, run it with `.now()`, or add it to a gather or a tree.
                fn grade<'__grading>(self, weight: f64) -> ::grader_core::Grading<'__grading, Self>
                where
                    Self: '__grading,
                {
                    ::grader_core::Grading::new(self, weight)
                }
            }
            impl<'answer> ::grader_core::Grader for Broken<'answer> {
                fn name(&self) -> ::std::borrow::Cow<'_, str> {
                    ::core::unreachable!()
                }
                async fn score(
                    self,
                ) -> ::core::result::Result<::grader_core::Score, ::grader_core::Failure> {
                    ::core::unreachable!()
                }
            }
            impl<'answer> ::grader_core::SyncGrader for Broken<'answer> {
                fn score_now(
                    self,
                ) -> ::core::result::Result<::grader_core::Score, ::grader_core::Failure> {
                    ::core::unreachable!()
                }
            }
        "##]],
    );
}

#[test]
fn type_option_names_the_grader_type() {
    check(
        quote!(type = ExactMatchGrader),
        quote! {
            fn exact_match(answer: &str) -> bool {
                answer == "yes"
            }
        },
        &expect![[r#"
            fn exact_match(answer: &str) -> bool {
                answer == "yes"
            }
            /// The grader made by `#[grader]` from `exact_match`.
            struct ExactMatchGrader<'answer> {
                /// The `answer` argument of `exact_match`.
                answer: &'answer str,
            }
            impl<'answer> ExactMatchGrader<'answer> {
                /// The grading of this grader at `weight`: [`Grader::grade`](::grader_core::Grader::grade), callable without importing the trait. Await it, run it with `.now()`, or add it to a gather or a tree.
                fn grade<'__grading>(self, weight: f64) -> ::grader_core::Grading<'__grading, Self>
                where
                    Self: '__grading,
                {
                    ::grader_core::Grading::new(self, weight)
                }
            }
            impl<'answer> ::grader_core::Grader for ExactMatchGrader<'answer> {
                fn name(&self) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed("exact_match")
                }
                #[allow(clippy::needless_borrow)]
                fn parameters(&self) -> ::grader_core::Info {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    let mut parameters = ::grader_core::Info::with_capacity(1usize);
                    parameters
                        .insert(
                            ::std::string::String::from("answer"),
                            (&::grader_core::__private::Capture(&self.answer))
                                .__grader_capture("str"),
                        );
                    parameters
                }
                #[allow(clippy::needless_borrow)]
                fn write_parameters(&self, out: &mut ::grader_core::params::ParametersWriter) {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    (&::grader_core::__private::Capture(&self.answer))
                        .__grader_write(out, "\"answer\":", "str");
                }
                fn score(
                    self,
                ) -> impl ::core::future::Future<
                    Output = ::core::result::Result<::grader_core::Score, ::grader_core::Failure>,
                > + ::core::marker::Send {
                    ::core::future::ready(<Self as ::grader_core::SyncGrader>::score_now(self))
                }
                fn score_at_once(self) -> ::grader_core::grader::AtOnce<Self> {
                    ::grader_core::grader::AtOnce::Scored(
                        <Self as ::grader_core::SyncGrader>::score_now(self),
                    )
                }
            }
            impl<'answer> ::grader_core::SyncGrader for ExactMatchGrader<'answer> {
                fn score_now(
                    self,
                ) -> ::core::result::Result<::grader_core::Score, ::grader_core::Failure> {
                    {
                        let Self { answer: arg0 } = self;
                        let value = exact_match(arg0);
                        <bool as ::grader_core::IntoScore>::into_score(value)
                    }
                }
            }
        "#]],
    );
}

#[test]
fn a_prelude_name_is_refused() {
    check(
        quote!(),
        quote! {
            fn result(answer: &str) -> bool {
                answer == "yes"
            }
        },
        &expect![[r##"
            ::core::compile_error! {
                "#[grader] would name the grader type of `result` `Result`, shadowing the prelude's `Result` in this module; name the type: `#[grader(type = ResultGrader)]`"
            }
            fn result(answer: &str) -> bool {
                answer == "yes"
            }
            /// The grader made by `#[grader]` from `result`.
            struct ResultGrader<'answer> {
                /// The `answer` argument of `result`.
                answer: &'answer str,
            }
            impl<'answer> ResultGrader<'answer> {
                /// The grading of this grader at `weight`: [`Grader::grade`](::grader_core::Grader::grade), callable without importing the trait. Await it, run it with `.now()`, or add it to a gather or a tree.
                fn grade<'__grading>(self, weight: f64) -> ::grader_core::Grading<'__grading, Self>
                where
                    Self: '__grading,
                {
                    ::grader_core::Grading::new(self, weight)
                }
            }
            impl<'answer> ::grader_core::Grader for ResultGrader<'answer> {
                fn name(&self) -> ::std::borrow::Cow<'_, str> {
                    ::core::unreachable!()
                }
                async fn score(
                    self,
                ) -> ::core::result::Result<::grader_core::Score, ::grader_core::Failure> {
                    ::core::unreachable!()
                }
            }
            impl<'answer> ::grader_core::SyncGrader for ResultGrader<'answer> {
                fn score_now(
                    self,
                ) -> ::core::result::Result<::grader_core::Score, ::grader_core::Failure> {
                    ::core::unreachable!()
                }
            }
        "##]],
    );
}
