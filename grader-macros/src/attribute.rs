//! `#[grader]`, the whole attribute: parse the options ([`args`]), build the model
//! ([`model`](crate::model)), check it ([`validate`]), then emit the function and generate the
//! grader type ([`expand`]) or, on any error, the fallback ([`fallback`]). It sits above every
//! step, and no step imports it.

use proc_macro2::TokenStream;
use quote::quote;

use crate::args::{self, Errors};
use crate::model::{Function, Grader};
use crate::{expand, fallback, validate};

/// The whole attribute: parse, check, then generate, or on any error the fallback.
pub fn grader(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let (options, arg_errors) = args::parse(args);
    errors.extend(arg_errors);
    let func = match syn::parse2::<Function>(input.clone()) {
        Ok(func) => func,
        Err(error) => {
            errors.push(error);
            return fallback::not_a_function(input, errors);
        }
    };
    errors.extend(validate::check(&func, &options));
    let model = Grader::new(&func, &options);
    match errors.into_error() {
        None => {
            let generated = expand::expand(&model);
            quote! { #input #generated }
        }
        Some(error) => fallback::stub(input, &model, &error),
    }
}
