//! What is emitted when the attribute finds errors: the errors, the function as written, and a
//! grader type with the same fields whose methods are never run, so the code that uses the
//! grader sees no cascade of follow-on errors. (Not for a method: inside an `impl` no type can
//! be declared, so only the error and the method are emitted.)

use proc_macro2::TokenStream;
use quote::quote;

use crate::args::Errors;
use crate::expand::{definition, inherent};
use crate::model::Grader;

/// The input was not a function: the error and the input, unchanged.
pub fn not_a_function(input: TokenStream, errors: Errors) -> TokenStream {
    let errors = errors.into_error().map(syn::Error::into_compile_error);
    quote! { #errors #input }
}

/// The errors, the function, and a stub grader type with the same fields and methods.
pub fn stub(input: TokenStream, grader: &Grader, error: &syn::Error) -> TokenStream {
    let errors = error.to_compile_error();
    if grader.func.sig.receiver().is_some() {
        // A method: the attribute sits inside an `impl`, where no type can be declared.
        return quote! { #errors #input };
    }
    let definition = definition(grader);
    let inherent = inherent(grader);
    let Grader {
        krate,
        ident,
        generics,
        cfgs,
        ..
    } = grader;
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let sync_impl = (!grader.is_async).then(|| {
        quote! {
            #(#cfgs)*
            impl #impl_generics #krate::SyncGrader for #ident #ty_generics #where_clause {
                fn score_now(self) -> ::core::result::Result<#krate::Score, #krate::Failure> {
                    ::core::unreachable!()
                }
            }
        }
    });
    quote! {
        #errors
        #input
        #definition
        #inherent

        #(#cfgs)*
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

        #sync_impl
    }
}
