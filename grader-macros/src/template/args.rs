//! Parsing `#[template(id = "…", description = "…", input = Type, returns = Type,
//! crate = path)]`. Every problem is collected; the options that parsed are kept.

use proc_macro2::TokenStream;
use syn::parse::Parser as _;
use syn::{Ident, LitStr, Path, Type};

use crate::args::{Errors, Item, did_you_mean, items};

/// The options.
#[derive(Default)]
pub struct Options {
    /// `id = "…"`: the task id (default: the function's name).
    pub id: Option<LitStr>,
    /// `description = "…"`: the manifest's description (default: the doc comment).
    pub description: Option<LitStr>,
    /// `input = Type`: the type the agent is given.
    pub input: Option<Type>,
    /// `returns = Type`: the type the agent answers with.
    pub returns: Option<Type>,
    /// `crate = path`: where `grader_env` is.
    pub krate: Option<Path>,
}

const VALID: &str = "`id = \"…\"`, `description = \"…\"`, `input = Type`, `returns = Type` or \
                     `crate = path`";

/// The tokens after `key =`, or an error saying how the option is written.
fn value(item: &Item, usage: &str) -> syn::Result<TokenStream> {
    let mut tokens = item.rest.clone().into_iter();
    match tokens.next() {
        Some(proc_macro2::TokenTree::Punct(eq)) if eq.as_char() == '=' => {
            let rest: TokenStream = tokens.collect();
            if rest.is_empty() {
                Err(syn::Error::new(
                    eq.span(),
                    format!("#[template] option `{}` is written {usage}", item.key),
                ))
            } else {
                Ok(rest)
            }
        }
        _ => Err(syn::Error::new(
            item.key.span(),
            format!("#[template] option `{}` is written {usage}", item.key),
        )),
    }
}

fn string(item: &Item, usage: &str) -> syn::Result<LitStr> {
    let tokens = value(item, usage)?;
    let text: LitStr = syn::parse2(tokens.clone()).map_err(|_| {
        syn::Error::new_spanned(
            &tokens,
            format!(
                "#[template] option `{}` takes a string literal: {usage}",
                item.key
            ),
        )
    })?;
    if text.value().trim().is_empty() && item.key == "id" {
        return Err(syn::Error::new(
            text.span(),
            "#[template] `id` must not be empty",
        ));
    }
    Ok(text)
}

fn set<T>(slot: &mut Option<T>, value: T, key: &Ident, errors: &mut Errors) {
    if slot.is_some() {
        errors.at(
            key.span(),
            format!("duplicate #[template] option `{key}`; give it once"),
        );
    } else {
        *slot = Some(value);
    }
}

/// Parses the attribute's arguments, returning what parsed and every error found.
pub fn parse(args: TokenStream) -> (Options, Option<syn::Error>) {
    let mut options = Options::default();
    let mut errors = Errors::default();
    let list = match items.parse2(args) {
        Ok(list) => list,
        Err(error) => {
            let message = format!("#[template] expects {VALID}, separated by commas: {error}");
            return (options, Some(syn::Error::new(error.span(), message)));
        }
    };
    for item in list {
        let key = item.key.clone();
        match key.to_string().as_str() {
            "id" => {
                if let Some(id) = errors.ok(string(&item, "`id = \"fix-tests\"`")) {
                    set(&mut options.id, id, &key, &mut errors);
                }
            }
            "description" => {
                if let Some(text) = errors.ok(string(&item, "`description = \"…\"`")) {
                    set(&mut options.description, text, &key, &mut errors);
                }
            }
            "input" | "returns" => {
                let usage = format!("`{key} = Type`");
                let parsed = value(&item, &usage).and_then(|tokens| {
                    syn::parse2::<Type>(tokens.clone()).map_err(|_| {
                        syn::Error::new_spanned(
                            &tokens,
                            format!("#[template] option `{key}` takes a type: {usage}"),
                        )
                    })
                });
                if let Some(ty) = errors.ok(parsed) {
                    let slot = if key == "input" {
                        &mut options.input
                    } else {
                        &mut options.returns
                    };
                    set(slot, ty, &key, &mut errors);
                }
            }
            "crate" => {
                let usage = "`crate = my_reexport::grader_env`";
                let parsed = value(&item, usage).and_then(|tokens| {
                    syn::parse2::<Path>(tokens.clone()).map_err(|_| {
                        syn::Error::new_spanned(
                            &tokens,
                            format!("#[template] option `crate` takes a path: {usage}"),
                        )
                    })
                });
                if let Some(path) = errors.ok(parsed) {
                    set(&mut options.krate, path, &key, &mut errors);
                }
            }
            other => errors.at(
                key.span(),
                format!(
                    "unknown #[template] option `{other}`{}; the options are {VALID}",
                    did_you_mean(other, &["id", "description", "input", "returns", "crate"])
                ),
            ),
        }
    }
    (options, errors.into_error())
}
