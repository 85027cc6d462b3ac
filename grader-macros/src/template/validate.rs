//! Every rule a template function must follow, each reported on the token to change, all at
//! once.

use syn::{FnArg, Pat, Type};

use super::args::Options;
use super::model::{Function, state_type};
use super::param::Param;
use crate::args::Errors;

/// Checks the function; `None` when it can be served.
pub fn check(func: &Function, _options: &Options, params: &[Param]) -> Option<syn::Error> {
    let mut errors = Errors::default();
    let sig = &func.sig;
    if sig.asyncness.is_none() {
        errors.at(
            sig.fn_token.span,
            "#[template] functions must be `async`: a template awaits the agent's answer",
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            "#[template] functions cannot be generic: their args are parsed from JSON into \
             concrete types",
        ));
    }
    let inputs: Vec<&FnArg> = sig.inputs.iter().collect();
    if let Some(span) = params.last().and_then(|param| param.span) {
        errors.at(
            span,
            "the session parameter of a #[template] function takes no #[arg] or doc comment: \
             it is not an argument of the task",
        );
    }
    match inputs.last() {
        Some(FnArg::Typed(last)) if is_session(&last.ty) => {}
        Some(last) => errors.push(syn::Error::new_spanned(
            last,
            "the last parameter of a #[template] function is its session: `session: Session`",
        )),
        None => errors.at(
            sig.paren_token.span.join(),
            "a #[template] function takes its args, then its session: \
             `(arg: Type, …, session: Session)`",
        ),
    }
    let first_state = inputs
        .iter()
        .position(|arg| matches!(arg, FnArg::Typed(typed) if state_type(&typed.ty).is_some()));
    for (at, arg) in inputs.iter().enumerate().rev().skip(1) {
        match arg {
            FnArg::Receiver(receiver) => errors.push(syn::Error::new_spanned(
                receiver,
                "#[template] goes on a free `async fn`, not a method",
            )),
            FnArg::Typed(typed) if state_type(&typed.ty).is_some() => {
                // Any pattern: the value is passed to the function as written.
                if Some(at) != first_state {
                    errors.push(syn::Error::new_spanned(
                        &typed.ty,
                        "a #[template] function takes the environment's state once: take one \
                         `State<T>` whose `T` holds what the template needs",
                    ));
                }
                if let Some(span) = params.get(at).and_then(|param| param.span) {
                    errors.at(
                        span,
                        "the state parameter of a #[template] function takes no #[arg] or doc \
                         comment: it is not an argument of the task",
                    );
                }
                if let Some(borrowed) = borrowed_part(&typed.ty) {
                    errors.push(syn::Error::new_spanned(
                        borrowed,
                        "a #[template] function's state is owned: each task gets a clone of \
                         the environment's (take `State<Arc<T>>` to share a large one)",
                    ));
                }
            }
            FnArg::Typed(typed) => {
                if !matches!(&*typed.pat, Pat::Ident(pat) if pat.subpat.is_none() && pat.by_ref.is_none())
                {
                    errors.push(syn::Error::new_spanned(
                        &typed.pat,
                        "#[template] parameters must be plain identifiers; destructure inside \
                         the body",
                    ));
                }
                if let Some(borrowed) = borrowed_part(&typed.ty) {
                    errors.push(syn::Error::new_spanned(
                        borrowed,
                        "#[template] parameters must be owned types: their values are parsed \
                         from JSON (take `String`, not `&str`)",
                    ));
                }
            }
        }
    }
    if let Some(FnArg::Receiver(receiver)) = inputs.first().filter(|_| inputs.len() == 1) {
        errors.push(syn::Error::new_spanned(
            receiver,
            "#[template] goes on a free `async fn`, not a method",
        ));
    }
    errors.into_error()
}

/// Whether the type is `Session` (by any path ending in it).
fn is_session(ty: &Type) -> bool {
    matches!(ty, Type::Path(path) if path.qself.is_none()
        && path.path.segments.last().is_some_and(|s| s.ident == "Session" && s.arguments.is_empty()))
}

/// The first reference, `impl Trait`, trait object or lifetime inside the type.
pub(super) fn borrowed_part(ty: &Type) -> Option<proc_macro2::TokenStream> {
    use quote::ToTokens as _;
    use syn::{GenericArgument, PathArguments};
    match ty {
        Type::Reference(_) | Type::ImplTrait(_) | Type::TraitObject(_) | Type::Ptr(_) => {
            Some(ty.to_token_stream())
        }
        Type::Array(array) => borrowed_part(&array.elem),
        Type::Slice(slice) => borrowed_part(&slice.elem),
        Type::Paren(paren) => borrowed_part(&paren.elem),
        Type::Group(group) => borrowed_part(&group.elem),
        Type::Tuple(tuple) => tuple.elems.iter().find_map(borrowed_part),
        Type::Path(path) => path.path.segments.iter().find_map(|segment| {
            let PathArguments::AngleBracketed(args) = &segment.arguments else {
                return None;
            };
            args.args.iter().find_map(|arg| match arg {
                GenericArgument::Type(ty) => borrowed_part(ty),
                GenericArgument::Lifetime(lifetime) => Some(lifetime.to_token_stream()),
                _ => None,
            })
        }),
        _ => None,
    }
}
