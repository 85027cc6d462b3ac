//! `#[derive(Grader)]`: parse the attributes ([`args`]), build the model ([`model`]), check it
//! ([`validate`]), then generate the impl or, on any error, the fallback ([`expand`]).

mod args;
mod expand;
mod model;
mod validate;

#[cfg(test)]
mod snapshots;

use proc_macro2::TokenStream;
use syn::{Data, DeriveInput};

use crate::args::Errors;

/// The whole derive.
pub fn derive(input: TokenStream) -> TokenStream {
    let input = match syn::parse2::<DeriveInput>(input) {
        Ok(input) => input,
        Err(error) => return error.into_compile_error(),
    };
    let mut errors = Errors::default();
    let (options, option_errors) = args::container(&input.attrs);
    errors.extend(option_errors);
    let field_options: Vec<args::FieldOptions> = match &input.data {
        Data::Struct(data) => data
            .fields
            .iter()
            .map(|field| {
                let (options, field_errors) = args::field(&field.attrs);
                errors.extend(field_errors);
                options
            })
            .collect(),
        Data::Enum(_) | Data::Union(_) => Vec::new(),
    };
    errors.extend(validate::check(&input, &options, &field_options));
    let model = model::Grader::new(&input, &options, &field_options);
    match errors.into_error() {
        None => expand::expand(&model),
        Some(error) => expand::fallback(&model, &error),
    }
}
