//! The generated code for `#[derive(Grader)]`: the `Grader` impl, and `SyncGrader` for a
//! synchronous score method. The only module of the derive that writes Rust with `quote!`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::model::Grader;
use crate::capture::{self, Recorded};

/// The `Grader` impl, and `SyncGrader` when the score method is synchronous, for a struct that
/// passed every check.
pub fn expand(grader: &Grader) -> TokenStream {
    let Some(score) = grader.score else {
        return TokenStream::new();
    };
    let Grader {
        input, krate, name, ..
    } = grader;
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let parameters = parameters(grader);
    let method = &score.ident;
    let result = quote!(::core::result::Result<#krate::Score, #krate::Failure>);
    // The call is spanned on the method's name in `score = …`, where rustc reports a missing
    // method, a wrong receiver, a return type that is not a score, or a future that is not Send.
    let (score_fn, sync_impl) = if score.is_async {
        let score_fn = quote_spanned! {method.span()=>
            async fn score(self) -> #result {
                #[allow(unused_mut)]
                let mut this = self;
                #krate::__private::score_method_async(this.#method()).await
            }
        };
        (score_fn, quote!())
    } else {
        let score_fn = quote! {
            fn score(
                self,
            ) -> impl ::core::future::Future<Output = #result> + ::core::marker::Send {
                ::core::future::ready(<Self as #krate::SyncGrader>::score_now(self))
            }

            fn score_at_once(self) -> #krate::grader::AtOnce<Self> {
                #krate::grader::AtOnce::Scored(<Self as #krate::SyncGrader>::score_now(self))
            }
        };
        let score_now = quote_spanned! {method.span()=>
            fn score_now(self) -> #result {
                #[allow(unused_mut)]
                let mut this = self;
                #krate::__private::score_method(this.#method())
            }
        };
        let sync_impl = quote! {
            #[automatically_derived]
            impl #impl_generics #krate::SyncGrader for #ident #ty_generics #where_clause {
                #score_now
            }
        };
        (score_fn, sync_impl)
    };
    quote! {
        #[automatically_derived]
        impl #impl_generics #krate::Grader for #ident #ty_generics #where_clause {
            fn name(&self) -> ::std::borrow::Cow<'_, str> {
                ::std::borrow::Cow::Borrowed(#name)
            }

            #parameters

            #score_fn
        }

        #sync_impl
    }
}

/// `Grader::parameters`: each recorded field's JSON (or placeholder), in field order.
fn parameters(grader: &Grader) -> TokenStream {
    let recorded: Vec<Recorded> = grader
        .fields
        .iter()
        .filter(|field| field.recorded)
        .map(|field| Recorded {
            key: &field.key,
            field: field.ident,
            type_name: &field.type_name,
            cfgs: field.cfgs.clone(),
        })
        .collect();
    capture::parameters_method(&grader.krate, &recorded)
}

/// What is emitted when there are errors: the errors, and a `Grader` impl whose methods are never
/// run, so the code that grades the struct sees no cascade of follow-on errors.
pub fn fallback(grader: &Grader, error: &syn::Error) -> TokenStream {
    let errors = error.to_compile_error();
    let Grader { input, krate, .. } = grader;
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let sync_impl = grader.score.filter(|score| !score.is_async).map(|_| {
        quote! {
            #[automatically_derived]
            impl #impl_generics #krate::SyncGrader for #ident #ty_generics #where_clause {
                fn score_now(self) -> ::core::result::Result<#krate::Score, #krate::Failure> {
                    ::core::unreachable!()
                }
            }
        }
    });
    quote! {
        #errors

        #[automatically_derived]
        #[allow(unused_variables, clippy::all)]
        impl #impl_generics #krate::Grader for #ident #ty_generics #where_clause {
            fn name(&self) -> ::std::borrow::Cow<'_, str> {
                ::core::unreachable!()
            }

            fn score(
                self,
            ) -> impl ::core::future::Future<
                Output = ::core::result::Result<#krate::Score, #krate::Failure>,
            > + ::core::marker::Send {
                // Never run; `pending` is `Send` whatever the struct holds.
                ::core::future::pending()
            }
        }

        #sync_impl
    }
}
