//! Every rule a derived grader must follow, checked against the parsed struct so each error
//! points at the token to change. All problems are reported together.
//!
//! What is checked by the compiler instead, on the method's name in `score = …`: that the
//! method exists and takes `self`, `&self` or `&mut self` and nothing else (rustc's own errors,
//! which name the method and suggest similar names), and that it returns a score, or a future
//! of one when named with `async` (`ScoreMethodOutput`'s and `AsyncScoreMethodOutput`'s
//! `#[diagnostic::on_unimplemented]`).

use syn::{Data, DeriveInput, Fields};

use super::args::{FieldOptions, Options};
use crate::args::Errors;
use crate::model::unraw;

/// The methods of `Grader` and `SyncGrader`: a score method of one of these names would be
/// shadowed by the trait's own in the generated call.
const TRAIT_METHODS: &[&str] = &[
    "name",
    "parameters",
    "resource",
    "score",
    "score_now",
    "grade",
];

/// Checks the struct and the options against each other.
pub fn check(
    input: &DeriveInput,
    options: &Options,
    field_options: &[FieldOptions],
) -> Option<syn::Error> {
    let mut errors = Errors::default();

    let names: Vec<String> = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => named
                .named
                .iter()
                .filter_map(|f| f.ident.as_ref())
                .map(unraw)
                .collect(),
            Fields::Unit => Vec::new(),
            Fields::Unnamed(unnamed) => {
                errors.push(syn::Error::new_spanned(
                    unnamed,
                    "#[derive(Grader)] needs named fields, which name what `_parameters` records; \
                     write `struct Name { field: Type, … }`",
                ));
                Vec::new()
            }
        },
        Data::Enum(data) => {
            errors.at(
                data.enum_token.span,
                "#[derive(Grader)] goes on a struct with named fields, not an enum; hold the \
                 enum in a field of a struct",
            );
            Vec::new()
        }
        Data::Union(data) => {
            errors.at(
                data.union_token.span,
                "#[derive(Grader)] goes on a struct with named fields, not a union",
            );
            Vec::new()
        }
    };

    if let Some(score) = &options.score {
        let method = unraw(&score.ident);
        if TRAIT_METHODS.contains(&method.as_str()) {
            errors.at(
                score.ident.span(),
                format!(
                    "#[derive(Grader)] cannot score with a method named `{method}`: the grader \
                     traits have a method of that name, which a call would find instead; \
                     rename it, e.g. `check`"
                ),
            );
        }
    }
    if options.score.is_none() && !options.score_misspelt {
        errors.at(
            input.ident.span(),
            "#[derive(Grader)] needs the method that scores: add `#[grader(score = method)]`, or \
             `#[grader(score = async method)]` for an `async fn`",
        );
    }

    let field_skips: Vec<String> = match &input.data {
        Data::Struct(data) => data
            .fields
            .iter()
            .zip(field_options)
            .filter(|(_, options)| options.skip.is_some())
            .filter_map(|(field, _)| field.ident.as_ref().map(unraw))
            .collect(),
        _ => Vec::new(),
    };
    if let Some(skips) = &options.skip {
        for (i, skip) in skips.iter().enumerate() {
            let name = unraw(skip);
            if !names.contains(&name) {
                let known = if names.is_empty() {
                    "the struct has no named fields".to_owned()
                } else {
                    format!("the fields are `{}`", names.join("`, `"))
                };
                errors.at(
                    skip.span(),
                    format!("#[grader] cannot skip `{name}`: no field has that name; {known}"),
                );
            } else if skips[..i].iter().any(|earlier| unraw(earlier) == name) {
                errors.at(
                    skip.span(),
                    format!("#[grader] skips `{name}` twice; list it once"),
                );
            } else if field_skips.contains(&name) {
                errors.at(
                    skip.span(),
                    format!(
                        "#[grader] skips `{name}` twice: the field is already marked \
                         `#[grader(skip)]`; keep one"
                    ),
                );
            }
        }
    }

    errors.into_error()
}
