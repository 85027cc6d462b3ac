//! Expansion snapshots: what `#[derive(Grader)]` generates for each shape of struct,
//! pretty-printed. Update with `UPDATE_EXPECT=1 cargo test -p grader-macros`.
//!
//! The score method's receiver (`self`, `&self`, `&mut self`) does not change the expansion:
//! the method is called with method-call syntax, which borrows as the method asks. The
//! receivers are covered where they compile: `tests/ui/derive_pass` and
//! `tests/tests/derive_grader.rs`.

use expect_test::{Expect, expect};
use quote::quote;

fn check(input: proc_macro2::TokenStream, expected: &Expect) {
    let output = super::derive(input);
    let file: syn::File = syn::parse2(output).expect("the expansion parses as a file");
    expected.assert_eq(&prettyplease::unparse(&file));
}

#[test]
fn owned_fields() {
    check(
        quote! {
            #[grader(score = check)]
            pub struct AnswerInSet {
                answer: String,
                accepted: Vec<String>,
            }
        },
        &expect![[r##"
            #[automatically_derived]
            impl ::grader_core::Grader for AnswerInSet {
                fn name(&self) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed("answer_in_set")
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
                            ::std::string::String::from("accepted"),
                            (&::grader_core::__private::Capture(&self.accepted))
                                .__grader_capture("Vec<String>"),
                        );
                    parameters
                }
                #[allow(clippy::needless_borrow)]
                fn write_parameters(&self, out: &mut ::grader_core::params::ParametersWriter) {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    (&::grader_core::__private::Capture(&self.answer))
                        .__grader_write(out, "\"answer\":", "String");
                    (&::grader_core::__private::Capture(&self.accepted))
                        .__grader_write(out, "\"accepted\":", "Vec<String>");
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
            #[automatically_derived]
            impl ::grader_core::SyncGrader for AnswerInSet {
                fn score_now(
                    self,
                ) -> ::core::result::Result<::grader_core::Score, ::grader_core::Failure> {
                    #[allow(unused_mut)]
                    let mut this = self;
                    ::grader_core::__private::score_method(this.check())
                }
            }
        "##]],
    );
}

#[test]
fn lifetimes() {
    check(
        quote! {
            #[grader(score = check)]
            struct InReference<'a, 'b: 'a> {
                answer: &'a str,
                reference: &'b HashSet<&'a str>,
                opaque: &'a Opaque<'b>,
            }
        },
        &expect![[r##"
            #[automatically_derived]
            impl<'a, 'b: 'a> ::grader_core::Grader for InReference<'a, 'b> {
                fn name(&self) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed("in_reference")
                }
                #[allow(clippy::needless_borrow)]
                fn parameters(&self) -> ::grader_core::Info {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    let mut parameters = ::grader_core::Info::with_capacity(3usize);
                    parameters
                        .insert(
                            ::std::string::String::from("answer"),
                            (&::grader_core::__private::Capture(&self.answer))
                                .__grader_capture("str"),
                        );
                    parameters
                        .insert(
                            ::std::string::String::from("reference"),
                            (&::grader_core::__private::Capture(&self.reference))
                                .__grader_capture("HashSet<&str>"),
                        );
                    parameters
                        .insert(
                            ::std::string::String::from("opaque"),
                            (&::grader_core::__private::Capture(&self.opaque))
                                .__grader_capture("Opaque"),
                        );
                    parameters
                }
                #[allow(clippy::needless_borrow)]
                fn write_parameters(&self, out: &mut ::grader_core::params::ParametersWriter) {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    (&::grader_core::__private::Capture(&self.answer))
                        .__grader_write(out, "\"answer\":", "str");
                    (&::grader_core::__private::Capture(&self.reference))
                        .__grader_write(out, "\"reference\":", "HashSet<&str>");
                    (&::grader_core::__private::Capture(&self.opaque))
                        .__grader_write(out, "\"opaque\":", "Opaque");
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
            #[automatically_derived]
            impl<'a, 'b: 'a> ::grader_core::SyncGrader for InReference<'a, 'b> {
                fn score_now(
                    self,
                ) -> ::core::result::Result<::grader_core::Score, ::grader_core::Failure> {
                    #[allow(unused_mut)]
                    let mut this = self;
                    ::grader_core::__private::score_method(this.check())
                }
            }
        "##]],
    );
}

#[test]
fn generics() {
    check(
        quote! {
            #[grader(score = check, name = "within")]
            pub(crate) struct Within<T: PartialOrd, const N: usize>
            where
                T: Serialize,
            {
                values: [T; N],
                limit: T,
            }
        },
        &expect![[r##"
            #[automatically_derived]
            impl<T: PartialOrd, const N: usize> ::grader_core::Grader for Within<T, N>
            where
                T: Serialize,
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
            #[automatically_derived]
            impl<T: PartialOrd, const N: usize> ::grader_core::SyncGrader for Within<T, N>
            where
                T: Serialize,
            {
                fn score_now(
                    self,
                ) -> ::core::result::Result<::grader_core::Score, ::grader_core::Failure> {
                    #[allow(unused_mut)]
                    let mut this = self;
                    ::grader_core::__private::score_method(this.check())
                }
            }
        "##]],
    );
}

#[test]
fn skip() {
    check(
        quote! {
            #[grader(score = check, skip(client))]
            struct ApiAnswered {
                #[grader(skip)]
                api_key: String,
                client: Client,
                r#type: String,
            }
        },
        &expect![[r##"
            #[automatically_derived]
            impl ::grader_core::Grader for ApiAnswered {
                fn name(&self) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed("api_answered")
                }
                #[allow(clippy::needless_borrow)]
                fn parameters(&self) -> ::grader_core::Info {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    let mut parameters = ::grader_core::Info::with_capacity(1usize);
                    parameters
                        .insert(
                            ::std::string::String::from("type"),
                            (&::grader_core::__private::Capture(&self.r#type))
                                .__grader_capture("String"),
                        );
                    parameters
                }
                #[allow(clippy::needless_borrow)]
                fn write_parameters(&self, out: &mut ::grader_core::params::ParametersWriter) {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    (&::grader_core::__private::Capture(&self.r#type))
                        .__grader_write(out, "\"type\":", "String");
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
            #[automatically_derived]
            impl ::grader_core::SyncGrader for ApiAnswered {
                fn score_now(
                    self,
                ) -> ::core::result::Result<::grader_core::Score, ::grader_core::Failure> {
                    #[allow(unused_mut)]
                    let mut this = self;
                    ::grader_core::__private::score_method(this.check())
                }
            }
        "##]],
    );
}

#[test]
fn async_score() {
    check(
        quote! {
            #[grader(score = async check, crate = my::grader_core)]
            struct Replied {
                url: String,
            }
        },
        &expect![[r##"
            #[automatically_derived]
            impl my::grader_core::Grader for Replied {
                fn name(&self) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed("replied")
                }
                #[allow(clippy::needless_borrow)]
                fn parameters(&self) -> my::grader_core::Info {
                    use my::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    let mut parameters = my::grader_core::Info::with_capacity(1usize);
                    parameters
                        .insert(
                            ::std::string::String::from("url"),
                            (&my::grader_core::__private::Capture(&self.url))
                                .__grader_capture("String"),
                        );
                    parameters
                }
                #[allow(clippy::needless_borrow)]
                fn write_parameters(&self, out: &mut my::grader_core::params::ParametersWriter) {
                    use my::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    (&my::grader_core::__private::Capture(&self.url))
                        .__grader_write(out, "\"url\":", "String");
                }
                async fn score(
                    self,
                ) -> ::core::result::Result<my::grader_core::Score, my::grader_core::Failure> {
                    #[allow(unused_mut)]
                    let mut this = self;
                    my::grader_core::__private::score_method_async(this.check()).await
                }
            }
        "##]],
    );
}

#[test]
fn unit_struct_records_nothing() {
    check(
        quote! {
            #[grader(score = always)]
            struct AlwaysPasses;
        },
        &expect![[r##"
            #[automatically_derived]
            impl ::grader_core::Grader for AlwaysPasses {
                fn name(&self) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed("always_passes")
                }
                fn parameters(&self) -> ::grader_core::Info {
                    ::grader_core::Info::new()
                }
                fn write_parameters(&self, _out: &mut ::grader_core::params::ParametersWriter) {}
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
            #[automatically_derived]
            impl ::grader_core::SyncGrader for AlwaysPasses {
                fn score_now(
                    self,
                ) -> ::core::result::Result<::grader_core::Score, ::grader_core::Failure> {
                    #[allow(unused_mut)]
                    let mut this = self;
                    ::grader_core::__private::score_method(this.always())
                }
            }
        "##]],
    );
}

#[test]
fn error_fallback() {
    check(
        quote! {
            #[grader(name = "", skip(missing), scor = check)]
            struct Broken<T> {
                value: T,
            }
        },
        &expect![[r##"
            ::core::compile_error! {
                "#[grader] `name` must not be empty"
            }
            ::core::compile_error! {
                "unknown #[grader] option `scor` (did you mean `score`?); the options are `score = method`, `score = async method`, `name = \"…\"`, `skip(field, …)` or `crate = path`"
            }
            ::core::compile_error! {
                "#[grader] cannot skip `missing`: no field has that name; the fields are `value`"
            }
            #[automatically_derived]
            #[allow(unused_variables, clippy::all)]
            impl<T> ::grader_core::Grader for Broken<T> {
                fn name(&self) -> ::std::borrow::Cow<'_, str> {
                    ::core::unreachable!()
                }
                fn score(
                    self,
                ) -> impl ::core::future::Future<
                    Output = ::core::result::Result<::grader_core::Score, ::grader_core::Failure>,
                > + ::core::marker::Send {
                    ::core::future::pending()
                }
            }
        "##]],
    );
}

#[test]
fn cfg_fields() {
    check(
        quote! {
            #[grader(score = check)]
            struct Configured {
                #[cfg(feature = "verbose")]
                trace: Vec<String>,
                answer: String,
            }
        },
        &expect![[r##"
            #[automatically_derived]
            impl ::grader_core::Grader for Configured {
                fn name(&self) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed("configured")
                }
                #[allow(clippy::needless_borrow)]
                #[allow(unused_mut)]
                fn parameters(&self) -> ::grader_core::Info {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    let mut parameters = ::grader_core::Info::with_capacity(2usize);
                    #[cfg(feature = "verbose")]
                    parameters
                        .insert(
                            ::std::string::String::from("trace"),
                            (&::grader_core::__private::Capture(&self.trace))
                                .__grader_capture("Vec<String>"),
                        );
                    parameters
                        .insert(
                            ::std::string::String::from("answer"),
                            (&::grader_core::__private::Capture(&self.answer))
                                .__grader_capture("String"),
                        );
                    parameters
                }
                #[allow(clippy::needless_borrow)]
                #[allow(unused_variables)]
                fn write_parameters(&self, out: &mut ::grader_core::params::ParametersWriter) {
                    use ::grader_core::__private::{CapturePlaceholder as _, CaptureSerialize as _};
                    #[cfg(feature = "verbose")]
                    (&::grader_core::__private::Capture(&self.trace))
                        .__grader_write(out, "\"trace\":", "Vec<String>");
                    (&::grader_core::__private::Capture(&self.answer))
                        .__grader_write(out, "\"answer\":", "String");
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
            #[automatically_derived]
            impl ::grader_core::SyncGrader for Configured {
                fn score_now(
                    self,
                ) -> ::core::result::Result<::grader_core::Score, ::grader_core::Failure> {
                    #[allow(unused_mut)]
                    let mut this = self;
                    ::grader_core::__private::score_method(this.check())
                }
            }
        "##]],
    );
}
