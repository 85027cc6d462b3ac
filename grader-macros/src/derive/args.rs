//! Parsing the derive's `#[grader(...)]` attributes: on the struct
//! (`score = [async] method`, `name = "…"`, `skip(field, …)`, `crate = path`) and on a field
//! (`skip`).
//!
//! Every problem is collected and the options that parsed are kept, as for `#[grader]`; `name`,
//! `skip` and `crate` are read by the same code as the attribute's options.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::parse::{ParseStream, Parser};
use syn::{Attribute, Ident, LitStr, Meta, Path, Token};

use crate::args::{Errors, Item, did_you_mean, items, parse_crate, parse_name, parse_skip, set};

/// The struct's options.
#[derive(Default)]
pub struct Options {
    /// `score = [async] method`.
    pub score: Option<ScoreMethod>,
    /// `name = "…"`.
    pub name: Option<LitStr>,
    /// `skip(field, …)`.
    pub skip: Option<Vec<Ident>>,
    /// `crate = path`.
    pub krate: Option<Path>,
    /// Whether an unknown option looked like a misspelt `score` (already reported, so a
    /// missing `score` is not reported again).
    pub score_misspelt: bool,
}

/// The method that scores, as named in `score = [async] method`.
pub struct ScoreMethod {
    /// The method's name, with the span it was written with.
    pub ident: Ident,
    /// Whether it was named with `async`.
    pub is_async: bool,
}

/// A field's options.
#[derive(Default)]
pub struct FieldOptions {
    /// `skip`, with the key that set it.
    pub skip: Option<Ident>,
}

const VALID: &str =
    "`score = method`, `score = async method`, `name = \"…\"`, `skip(field, …)` or `crate = path`";

/// The arguments of every `#[grader(...)]` attribute in `attrs`.
fn grader_items(attrs: &[Attribute], errors: &mut Errors, expects: &str) -> Vec<Item> {
    let mut all = Vec::new();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("grader")) {
        let Meta::List(list) = &attr.meta else {
            errors.push(syn::Error::new_spanned(
                attr,
                format!("#[grader] on a derived grader takes options: {expects}"),
            ));
            continue;
        };
        match items.parse2(list.tokens.clone()) {
            Ok(items) => all.extend(items),
            Err(error) => errors.at(
                error.span(),
                format!("#[grader] expects {expects}, separated by commas: {error}"),
            ),
        }
    }
    all
}

/// The struct's options, and every error found in them.
pub fn container(attrs: &[Attribute]) -> (Options, Option<syn::Error>) {
    let mut errors = Errors::default();
    let mut options = Options::default();
    for item in grader_items(attrs, &mut errors, VALID) {
        let key_path = Path::from(item.key.clone());
        let meta = || item.meta();
        match item.key.to_string().as_str() {
            "score" => {
                if let Some(score) = errors.ok(parse_score(&item.key, item.rest.clone())) {
                    set(&mut options.score, score, &key_path, &mut errors);
                }
            }
            "name" => {
                if let Some(name) = errors.ok(meta().and_then(|meta| parse_name(&meta))) {
                    set(&mut options.name, name, &key_path, &mut errors);
                }
            }
            "skip" => {
                if let Some(skip) = errors.ok(meta().and_then(|meta| parse_skip(&meta))) {
                    set(&mut options.skip, skip, &key_path, &mut errors);
                }
            }
            "crate" => {
                if let Some(krate) = errors.ok(meta().and_then(|meta| parse_crate(&meta))) {
                    set(&mut options.krate, krate, &key_path, &mut errors);
                }
            }
            other => {
                let suggestion = did_you_mean(other, &["score", "name", "skip", "crate"]);
                options.score_misspelt |= suggestion.contains("`score`");
                errors.at(
                    item.key.span(),
                    format!(
                        "unknown #[grader] option `{other}`{suggestion}; the options are {VALID}"
                    ),
                );
            }
        }
    }
    (options, errors.into_error())
}

/// `score = method` or `score = async method`.
fn parse_score(key: &Ident, rest: TokenStream) -> syn::Result<ScoreMethod> {
    let hint = "#[grader] option `score` names the method that scores: `score = method`, or \
                `score = async method` for an `async fn`";
    let parser = |input: ParseStream| {
        input.parse::<Token![=]>()?;
        let asyncness: Option<Token![async]> = input.parse()?;
        let ident: Ident = input.parse()?;
        if !input.is_empty() {
            return Err(input.error("expected the end of the option"));
        }
        Ok(ScoreMethod {
            ident,
            is_async: asyncness.is_some(),
        })
    };
    let span = rest
        .clone()
        .into_iter()
        .nth(1)
        .map_or_else(|| key.span(), |tree| tree.span());
    parser.parse2(rest).map_err(|_| syn::Error::new(span, hint))
}

/// A field's options, and every error found in them.
pub fn field(attrs: &[Attribute]) -> (FieldOptions, Option<syn::Error>) {
    let mut errors = Errors::default();
    let mut options = FieldOptions::default();
    let expects = "`skip`";
    for Item { key, rest } in grader_items(attrs, &mut errors, expects) {
        if key == "skip" {
            if rest.is_empty() {
                set(
                    &mut options.skip,
                    key.clone(),
                    &Path::from(key.clone()),
                    &mut errors,
                );
            } else {
                errors.push(syn::Error::new_spanned(
                    &rest,
                    "#[grader] field option `skip` takes no value: `#[grader(skip)]`",
                ));
            }
        } else {
            errors.at(
                key.span(),
                format!(
                    "unknown #[grader] field option `{}`; the only field option is `skip`{}",
                    key.to_token_stream(),
                    if ["score", "name", "crate"].contains(&key.to_string().as_str()) {
                        "; this option goes on the struct"
                    } else {
                        ""
                    }
                ),
            );
        }
    }
    (options, errors.into_error())
}
