//! `#[template]`: parse the options ([`args`]), build the model ([`model`]), check it
//! ([`validate`]), then generate the args type and its `template()` or, on any error, the
//! fallback ([`expand`]).

mod args;
mod expand;
mod model;
mod param;
mod validate;

#[cfg(test)]
mod snapshots;

use proc_macro2::TokenStream;
use quote::quote;

use crate::args::Errors;

/// The whole attribute.
pub fn template(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let (options, arg_errors) = args::parse(args);
    errors.extend(arg_errors);
    let func = match syn::parse2::<model::Function>(input.clone()) {
        Ok(func) => func,
        Err(error) => {
            errors.push(error);
            let errors = errors.into_error().map(syn::Error::into_compile_error);
            return quote! { #errors #input };
        }
    };
    let inputs: Vec<&syn::FnArg> = func.sig.inputs.iter().collect();
    let (params, param_errors) = param::parse(&inputs);
    errors.extend(param_errors);
    errors.extend(validate::check(&func, &options, &params));
    let model = model::Template::new(&func, &options, &params);
    // The function as written, unless `#[arg]` attributes must come off its parameters.
    let function = if func.has_arg_attributes() {
        func.without_arg_attributes()
    } else {
        input
    };
    match errors.into_error() {
        None => {
            let generated = expand::expand(&model);
            quote! { #function #generated }
        }
        Some(error) => expand::fallback(function, &model, &error),
    }
}
