//! Parsing the attribute's own arguments: `#[grader(name = "…", skip(a, b), crate = path)]`.
//!
//! Every problem is collected, so one compile shows them all; the options that did parse are
//! kept, so the grader type can still be generated.

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit, LitStr, Meta, Path, Token};

/// The options, each with the span of the key that set it.
#[derive(Default)]
pub struct Options {
    /// `name = "…"`: the subscore's name.
    pub name: Option<LitStr>,
    /// `type = Name`: the grader type's name.
    pub ty: Option<Ident>,
    /// `skip(a, b)`: parameters left out of `_parameters`.
    pub skip: Option<Vec<Ident>>,
    /// `crate = path`: where `grader_core` is.
    pub krate: Option<Path>,
}

const VALID: &str = "`name = \"…\"`, `type = Name`, `skip(param, …)` or `crate = path`";

/// Parses the attribute's arguments, returning what parsed and every error found.
pub fn parse(args: TokenStream) -> (Options, Option<syn::Error>) {
    let mut options = Options::default();
    let mut errors = Errors::default();
    let items = match items.parse2(args) {
        Ok(items) => items,
        Err(error) => {
            let message = format!("#[grader] expects {VALID}, separated by commas: {error}");
            return (options, Some(syn::Error::new(error.span(), message)));
        }
    };
    for item in items {
        let key = &Path::from(item.key.clone());
        match item.key.to_string().as_str() {
            "name" => {
                if let Some(name) = errors.ok(item.meta().and_then(|meta| parse_name(&meta))) {
                    set(&mut options.name, name, key, &mut errors);
                }
            }
            "type" => {
                if let Some(ty) = errors.ok(item.meta().and_then(|meta| parse_type(&meta))) {
                    set(&mut options.ty, ty, key, &mut errors);
                }
            }
            "skip" => {
                if let Some(skip) = errors.ok(item.meta().and_then(|meta| parse_skip(&meta))) {
                    set(&mut options.skip, skip, key, &mut errors);
                }
            }
            "crate" => {
                if let Some(krate) = errors.ok(item.meta().and_then(|meta| parse_crate(&meta))) {
                    set(&mut options.krate, krate, key, &mut errors);
                }
            }
            other => errors.at(
                item.key.span(),
                format!(
                    "unknown #[grader] option `{other}`{}; the options are {VALID}",
                    did_you_mean(other, &["name", "type", "skip", "crate"])
                ),
            ),
        }
    }
    (options, errors.into_error())
}

/// One `key`, `key = value` or `key(…)` item of an attribute's arguments, kept as tokens. The
/// key may be a keyword (`type`, `crate`).
pub struct Item {
    /// The key.
    pub key: Ident,
    /// The tokens after it, up to the next top-level comma.
    pub rest: TokenStream,
}

impl Item {
    /// The item as a `Meta`, for the options whose value is an expression or a list.
    pub fn meta(&self) -> syn::Result<Meta> {
        let placeholder = Ident::new("key", self.key.span());
        let rest = &self.rest;
        let mut meta: Meta = syn::parse2(quote::quote!(#placeholder #rest)).map_err(|error| {
            let usage = match self.key.to_string().as_str() {
                "name" => "`name = \"…\"`",
                "type" => "`type = Name`",
                "skip" => "`skip(name, …)`",
                _ => "`crate = path`",
            };
            syn::Error::new(
                error.span(),
                format!(
                    "#[grader] option `{}` is written {usage}: {error}",
                    self.key
                ),
            )
        })?;
        let path = Path::from(self.key.clone());
        match &mut meta {
            Meta::Path(p) => *p = path,
            Meta::List(list) => list.path = path,
            Meta::NameValue(nv) => nv.path = path,
        }
        Ok(meta)
    }
}

/// Splits an attribute's arguments at top-level commas; each item starts with a key.
///
/// # Errors
/// When an item does not start with a name.
pub fn items(input: ParseStream) -> syn::Result<Vec<Item>> {
    let mut items = Vec::new();
    while !input.is_empty() {
        let key = Ident::parse_any(input)?;
        let mut rest = TokenStream::new();
        while !input.is_empty() && !input.peek(Token![,]) {
            let tree: proc_macro2::TokenTree = input.parse()?;
            rest.extend([tree]);
        }
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
        items.push(Item { key, rest });
    }
    Ok(items)
}

/// `" (did you mean `score`?)"` when `written` is a small edit away from one of `known`, else
/// nothing.
pub fn did_you_mean(written: &str, known: &[&str]) -> String {
    known
        .iter()
        .map(|candidate| (edit_distance(written, candidate), candidate))
        .filter(|(distance, candidate)| *distance <= (candidate.len() / 3).max(1))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| format!(" (did you mean `{candidate}`?)"))
        .unwrap_or_default()
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

/// Sets an option once; a second setting is reported on its key.
pub fn set<T>(slot: &mut Option<T>, value: T, key: &Path, errors: &mut Errors) {
    if slot.is_some() {
        let name = key.get_ident().map(ToString::to_string).unwrap_or_default();
        errors.push(syn::Error::new_spanned(
            key,
            format!("duplicate #[grader] option `{name}`; give it once"),
        ));
    } else {
        *slot = Some(value);
    }
}

pub fn parse_name(meta: &Meta) -> syn::Result<LitStr> {
    let value = match meta {
        Meta::NameValue(nv) => &nv.value,
        _ => {
            return Err(syn::Error::new(
                meta.span(),
                "#[grader] option `name` takes a string: `name = \"…\"`",
            ));
        }
    };
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(name),
            ..
        }) => {
            if name.value().is_empty() {
                Err(syn::Error::new(
                    name.span(),
                    "#[grader] `name` must not be empty",
                ))
            } else {
                Ok(name.clone())
            }
        }
        other => Err(syn::Error::new_spanned(
            other,
            "#[grader] `name` must be a string literal: `name = \"…\"`",
        )),
    }
}

fn parse_type(meta: &Meta) -> syn::Result<Ident> {
    let hint = "#[grader] option `type` names the grader type: `type = ExactMatchGrader`";
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Path(path) if path.qself.is_none() && path.attrs.is_empty() => {
                path.path.get_ident().cloned().ok_or_else(|| {
                    syn::Error::new_spanned(
                        &path.path,
                        "#[grader] option `type` takes a plain name, not a path: the type is \
                         declared beside the function, as `type = ExactMatchGrader`",
                    )
                })
            }
            other => Err(syn::Error::new_spanned(other, hint)),
        },
        _ => Err(syn::Error::new(meta.span(), hint)),
    }
}

pub fn parse_skip(meta: &Meta) -> syn::Result<Vec<Ident>> {
    let list = meta.require_list().map_err(|_| {
        syn::Error::new(
            meta.span(),
            "#[grader] option `skip` lists parameters: `skip(param, …)`",
        )
    })?;
    let idents = list.parse_args_with(Punctuated::<Ident, Token![,]>::parse_terminated)?;
    Ok(idents.into_iter().collect())
}

pub fn parse_crate(meta: &Meta) -> syn::Result<Path> {
    let hint = "#[grader] option `crate` takes a path: `crate = my_reexport::grader_core`";
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Path(path) if path.qself.is_none() && path.attrs.is_empty() => {
                Ok(path.path.clone())
            }
            Expr::Lit(ExprLit {
                lit: Lit::Str(text),
                ..
            }) => text
                .parse::<Path>()
                .map_err(|_| syn::Error::new(text.span(), hint)),
            other => Err(syn::Error::new_spanned(other, hint)),
        },
        _ => Err(syn::Error::new(meta.span(), hint)),
    }
}

/// Errors collected while parsing or checking, reported together.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    /// Adds an error.
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// Adds an error at `span`.
    pub fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    /// The value, or `None` with the error recorded.
    pub fn ok<T>(&mut self, result: syn::Result<T>) -> Option<T> {
        result.map_err(|error| self.push(error)).ok()
    }

    /// Moves another collection's errors into this one.
    pub fn extend(&mut self, other: Option<syn::Error>) {
        if let Some(error) = other {
            self.push(error);
        }
    }

    /// The collected errors as one.
    pub fn into_error(self) -> Option<syn::Error> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn near_misses_get_a_suggestion() {
        let known = ["score", "name", "skip", "crate"];
        assert_eq!(did_you_mean("scor", &known), " (did you mean `score`?)");
        assert_eq!(did_you_mean("nam", &known), " (did you mean `name`?)");
        assert_eq!(did_you_mean("skips", &known), " (did you mean `skip`?)");
        assert_eq!(did_you_mean("colour", &known), "");
        assert_eq!(did_you_mean("rename", &known), "");
    }
}
