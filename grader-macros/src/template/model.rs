//! The template as the expansion sees it: the function's parts, borrowed from the parsed
//! signature; the args type's name and fields; the state parameter, when there is one; the
//! session parameter.
//!
//! Building the model never fails: a parameter that cannot become a field (a receiver, a
//! pattern) is left out, so the fallback can still emit the args type after
//! [`validate`](super::validate) reported the problem.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt as _;
use syn::parse::{Parse, ParseStream};
use syn::{
    Attribute, Expr, ExprLit, FnArg, Ident, Lit, Meta, Pat, Path, Signature, Type, Visibility,
};

use super::args::Options;
use super::param::{self, Param};

/// The annotated function's attributes, visibility and signature; the body is never parsed.
pub struct Function {
    /// Outer attributes (doc comments included).
    pub attrs: Vec<Attribute>,
    /// Visibility.
    pub vis: Visibility,
    /// Signature.
    pub sig: Signature,
    /// The body, as raw tokens.
    pub body: TokenStream,
}

impl Parse for Function {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let starts = input.peek(syn::Token![fn])
            || input.peek(syn::Token![async])
            || input.peek(syn::Token![const])
            || input.peek(syn::Token![unsafe])
            || input.peek(syn::Token![extern]);
        if !starts {
            return Err(input.error(
                "#[template] goes on an async function: \
                 `async fn name(arg: Type, …, session: Session) -> f64 { … }`",
            ));
        }
        let sig: Signature = input.parse()?;
        let body = input.parse::<TokenStream>()?;
        Ok(Function {
            attrs,
            vis,
            sig,
            body,
        })
    }
}

impl Function {
    /// Whether a parameter carries `#[arg]` or a doc comment.
    pub fn has_arg_attributes(&self) -> bool {
        self.sig.inputs.iter().any(|input| match input {
            FnArg::Typed(typed) => typed.attrs.iter().any(param::is_ours),
            FnArg::Receiver(receiver) => receiver.attrs.iter().any(param::is_ours),
        })
    }

    /// The function as written, without the `#[arg]` attributes and doc comments of its
    /// parameters (the compiler accepts neither there); the body untouched.
    pub fn without_arg_attributes(&self) -> TokenStream {
        let Function {
            attrs,
            vis,
            sig,
            body,
        } = self;
        let mut sig = sig.clone();
        for input in &mut sig.inputs {
            match input {
                FnArg::Typed(typed) => typed.attrs.retain(|attr| !param::is_ours(attr)),
                FnArg::Receiver(receiver) => receiver.attrs.retain(|attr| !param::is_ours(attr)),
            }
        }
        quote!(#(#attrs)* #vis #sig #body)
    }
}

/// One argument of the template: a field of the args type.
pub struct Field<'a> {
    /// The parameter's name.
    pub ident: &'a Ident,
    /// Its type.
    pub ty: &'a Type,
    /// Its `#[arg]` options.
    pub param: Option<&'a Param>,
}

/// What the function is called with, in its order (the session last, not listed).
pub enum Call<'a> {
    /// An argument: the args type's field of this name.
    Field(&'a Ident),
    /// The environment's state.
    State,
}

/// Everything the expansion needs.
pub struct Template<'a> {
    /// The function.
    pub func: &'a Function,
    /// Where `grader_env` is.
    pub krate: Path,
    /// The task id.
    pub id: String,
    /// The manifest's description.
    pub description: String,
    /// The args type's name: the function's in UpperCamelCase.
    pub ident: Ident,
    /// The arguments (every parameter but the state and the last, the session).
    pub fields: Vec<Field<'a>>,
    /// The type `T` of the `State<T>` parameter, when the function takes the state.
    pub state: Option<&'a Type>,
    /// What the function is called with, in order, but the session.
    pub calls: Vec<Call<'a>>,
    /// `input = Type`.
    pub input: Option<&'a Type>,
    /// `returns = Type`.
    pub returns: Option<&'a Type>,
    /// The function's `#[cfg]`s, repeated on everything generated.
    pub cfgs: Vec<&'a Attribute>,
}

impl<'a> Template<'a> {
    pub fn new(func: &'a Function, options: &'a Options, params: &'a [Param]) -> Self {
        let name = func.sig.ident.unraw().to_string();
        let krate = options
            .krate
            .clone()
            .unwrap_or_else(|| syn::parse_quote!(::grader_env));
        let id = options
            .id
            .as_ref()
            .map_or_else(|| name.clone(), syn::LitStr::value);
        let description = options
            .description
            .as_ref()
            .map_or_else(|| doc_text(&func.attrs), syn::LitStr::value);
        let inputs: Vec<&FnArg> = func.sig.inputs.iter().collect();
        let args = inputs.split_last().map_or(&[][..], |(_, rest)| rest);
        let mut fields = Vec::new();
        let mut state = None;
        let mut calls = Vec::new();
        for (at, arg) in args.iter().enumerate() {
            let FnArg::Typed(typed) = arg else { continue };
            if let Some(inner) = state_type(&typed.ty) {
                // One state: a second one is an error `validate` reports.
                if state.is_none() {
                    state = Some(inner);
                    calls.push(Call::State);
                }
                continue;
            }
            if let Pat::Ident(pat) = &*typed.pat
                && pat.subpat.is_none()
            {
                fields.push(Field {
                    ident: &pat.ident,
                    ty: &typed.ty,
                    param: params.get(at),
                });
                calls.push(Call::Field(&pat.ident));
            }
        }
        Template {
            func,
            krate,
            id,
            description,
            ident: format_ident!("{}", upper_camel(&name), span = func.sig.ident.span()),
            fields,
            state,
            calls,
            input: options.input.as_ref(),
            returns: options.returns.as_ref(),
            cfgs: func
                .attrs
                .iter()
                .filter(|attr| attr.path().is_ident("cfg"))
                .collect(),
        }
    }

    /// The doc attributes of the function, for the args type.
    pub fn docs(&self) -> TokenStream {
        let docs = self.func.attrs.iter().filter(|a| a.path().is_ident("doc"));
        quote!(#(#docs)*)
    }
}

/// The `T` of a `State<T>` parameter's type (by any path ending in `State` with one type
/// argument), or `None` for an argument of the task.
pub fn state_type(ty: &Type) -> Option<&Type> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let last = path.path.segments.last()?;
    if last.ident != "State" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(generics) = &last.arguments else {
        return None;
    };
    match generics.args.iter().collect::<Vec<_>>().as_slice() {
        [syn::GenericArgument::Type(inner)] => Some(inner),
        _ => None,
    }
}

/// The doc comment as one text: lines trimmed, joined by newlines, outer blank lines dropped.
fn doc_text(attrs: &[Attribute]) -> String {
    let lines: Vec<String> = attrs
        .iter()
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(nv) if nv.path.is_ident("doc") => match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(text),
                    ..
                }) => Some(text.value().trim().to_owned()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    lines.join("\n").trim().to_owned()
}

/// `fix_tests` → `FixTests`.
pub fn upper_camel(name: &str) -> String {
    name.split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect()
            })
        })
        .collect()
}
