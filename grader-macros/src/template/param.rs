//! Parsing a parameter's `#[arg(description = "…", default = value)]` and doc comment: what
//! the manifest's schema says of one argument, as hud's `Annotated[T, Field(description=…)]`
//! and `= value`. Both are the template's own: the function is emitted without them (the
//! compiler accepts neither on a parameter).

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser as _;
use syn::{Attribute, Expr, FnArg, LitStr, Meta};

use crate::args::{Errors, did_you_mean, items};

/// The attribute's name.
pub const NAME: &str = "arg";

const USAGE: &str = "`#[arg(description = \"…\", default = value)]`";

/// How an argument that is left out gets its value.
pub enum Default {
    /// `default` alone: the type's `Default`.
    Trait,
    /// `default = value`.
    Value(Expr),
}

/// One parameter's `#[arg]` options.
#[derive(std::default::Default)]
pub struct Param {
    /// `description = "…"`.
    pub description: Option<LitStr>,
    /// `default` or `default = value`.
    pub default: Option<Default>,
    /// Where the attribute was written, when it was.
    pub span: Option<Span>,
}

/// Whether the attribute is the template's `#[arg]`.
pub fn is_arg(attr: &Attribute) -> bool {
    attr.path().is_ident(NAME)
}

/// Whether the attribute is one the template takes off a parameter: `#[arg]` or a doc comment.
pub fn is_ours(attr: &Attribute) -> bool {
    is_arg(attr) || attr.path().is_ident("doc")
}

/// A parameter's doc comment, as one text (lines trimmed, joined by spaces).
fn doc(attrs: &[Attribute]) -> Option<(LitStr, Span)> {
    let mut span = None;
    let lines: Vec<String> = attrs
        .iter()
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(nv) if nv.path.is_ident("doc") => match &nv.value {
                Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(text),
                    ..
                }) => {
                    span.get_or_insert(text.span());
                    Some(text.value().trim().to_owned())
                }
                _ => None,
            },
            _ => None,
        })
        .filter(|line| !line.is_empty())
        .collect();
    let span = span?;
    (!lines.is_empty()).then(|| (LitStr::new(&lines.join(" "), span), span))
}

/// The `#[arg]` options of every parameter, in order, and every error found.
pub fn parse(inputs: &[&FnArg]) -> (Vec<Param>, Option<syn::Error>) {
    let mut errors = Errors::default();
    let params = inputs
        .iter()
        .map(|input| {
            let attrs = match input {
                FnArg::Typed(typed) => &typed.attrs,
                FnArg::Receiver(receiver) => &receiver.attrs,
            };
            let mut param = Param::default();
            for attr in attrs.iter().filter(|attr| is_arg(attr)) {
                param
                    .span
                    .get_or_insert_with(|| attr.path().segments[0].ident.span());
                parse_one(attr, &mut param, &mut errors);
            }
            if let Some((text, span)) = doc(attrs) {
                param.span.get_or_insert(span);
                if param.description.is_some() {
                    errors.at(
                        span,
                        "this argument is described twice; keep the doc comment or \
                         #[arg(description = \"…\")]",
                    );
                } else {
                    param.description = Some(text);
                }
            }
            param
        })
        .collect();
    (params, errors.into_error())
}

fn parse_one(attr: &Attribute, param: &mut Param, errors: &mut Errors) {
    let Meta::List(list) = &attr.meta else {
        errors.push(syn::Error::new_spanned(
            &attr.meta,
            format!("#[template] parameter attributes are written {USAGE}"),
        ));
        return;
    };
    let list = match items.parse2(list.tokens.clone()) {
        Ok(list) => list,
        Err(error) => {
            let message = format!("#[arg] expects {USAGE}: {error}");
            errors.push(syn::Error::new(error.span(), message));
            return;
        }
    };
    if list.is_empty() {
        errors.push(syn::Error::new_spanned(
            &attr.meta,
            format!("#[arg] says nothing; write {USAGE}"),
        ));
    }
    for item in list {
        let key = item.key.to_string();
        let duplicate = match key.as_str() {
            "description" => param.description.is_some(),
            "default" => param.default.is_some(),
            _ => false,
        };
        if duplicate {
            errors.at(
                item.key.span(),
                format!("duplicate #[arg] option `{key}`; give it once"),
            );
            continue;
        }
        match key.as_str() {
            "description" => {
                let value = value(&item.rest).and_then(|tokens| {
                    syn::parse2::<LitStr>(tokens.clone())
                        .ok()
                        .ok_or(Some(tokens))
                });
                match value {
                    Ok(text) => param.description = Some(text),
                    Err(tokens) => errors.push(match tokens {
                        Some(tokens) => syn::Error::new_spanned(
                            tokens,
                            "#[arg] option `description` takes a string literal: \
                             `description = \"…\"`",
                        ),
                        None => syn::Error::new(
                            item.key.span(),
                            "#[arg] option `description` is written `description = \"…\"`",
                        ),
                    }),
                }
            }
            "default" if item.rest.is_empty() => param.default = Some(Default::Trait),
            "default" => {
                let parsed = value(&item.rest).and_then(|tokens| {
                    syn::parse2::<Expr>(tokens.clone()).ok().ok_or(Some(tokens))
                });
                match parsed {
                    Ok(expr) => param.default = Some(Default::Value(expr)),
                    Err(_) => errors.at(
                        item.key.span(),
                        "#[arg] option `default` is written `default = value`, or `default` \
                         alone for the type's `Default`",
                    ),
                }
            }
            other => errors.at(
                item.key.span(),
                format!(
                    "unknown #[arg] option `{other}`{}; the options are `description = \"…\"` \
                     and `default = value` (or `default` alone for the type's `Default`)",
                    did_you_mean(other, &["description", "default"])
                ),
            ),
        }
    }
}

/// The tokens after `=`: `Err(None)` without `=` or without a value.
fn value(rest: &TokenStream) -> Result<TokenStream, Option<TokenStream>> {
    let mut tokens = rest.clone().into_iter();
    match tokens.next() {
        Some(proc_macro2::TokenTree::Punct(eq)) if eq.as_char() == '=' => {
            let value: TokenStream = tokens.collect();
            if value.is_empty() {
                Err(None)
            } else {
                Ok(value)
            }
        }
        _ => Err(None),
    }
}
