//! The generated code for `#[derive(Grader)]`: the `Grader` impl. The only module of the derive
//! that writes Rust with `quote!`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::model::Grader;
use crate::capture::{self, Recorded};

/// The `Grader` impl, for a struct that passed every check.
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
    let body = if score.is_async {
        quote_spanned! {method.span()=>
            #[allow(unused_mut)]
            let mut this = self;
            #krate::__private::score_method_async(this.#method()).await
        }
    } else {
        quote_spanned! {method.span()=>
            #[allow(unused_mut)]
            let mut this = self;
            #krate::__private::score_method(this.#method())
        }
    };
    quote! {
        #[automatically_derived]
        impl #impl_generics #krate::Grader for #ident #ty_generics #where_clause {
            fn name(&self) -> ::std::borrow::Cow<'_, str> {
                ::std::borrow::Cow::Borrowed(#name)
            }

            #parameters

            async fn score(
                self,
            ) -> ::core::result::Result<#krate::Score, #krate::Failure> {
                #body
            }
        }
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
    quote! {
        #errors

        #[automatically_derived]
        #[allow(unused_variables, clippy::all)]
        impl #impl_generics #krate::Grader for #ident #ty_generics #where_clause {
            fn name(&self) -> ::std::borrow::Cow<'_, str> {
                ::core::unreachable!()
            }

            async fn score(
                self,
            ) -> ::core::result::Result<#krate::Score, #krate::Failure> {
                ::core::unreachable!()
            }
        }
    }
}
