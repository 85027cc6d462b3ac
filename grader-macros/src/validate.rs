//! Every rule a `#[grader]` function must follow, checked against the parsed signature so each
//! error points at the token to change. All problems are reported together.
//!
//! What is checked by the compiler instead: that the return type is a score (through
//! `IntoScore`'s `#[diagnostic::on_unimplemented]`, on the return type).

use syn::spanned::Spanned;
use syn::{FnArg, Pat, ReturnType};

use crate::args::{Errors, Options};
use crate::model::{Function, PRELUDE, unraw, upper_camel_case};

/// Checks the function and the options against each other.
pub fn check(func: &Function, options: &Options) -> Option<syn::Error> {
    let mut errors = Errors::default();
    let sig = &func.sig;

    if let Some(constness) = &sig.constness {
        errors.at(
            constness.span,
            "#[grader] functions cannot be `const fn`: a grade runs at run time; remove `const`",
        );
    }
    if let syn::Safety::Unsafe(unsafety) = &sig.safety {
        errors.at(
            unsafety.span,
            "#[grader] cannot call an `unsafe fn`; make it safe and use `unsafe` inside the body",
        );
    }
    if let Some(abi) = &sig.abi {
        errors.push(syn::Error::new_spanned(
            abi,
            "#[grader] functions use the Rust ABI; remove the `extern` qualifier",
        ));
    }
    if let Some(variadic) = &sig.variadic {
        errors.push(syn::Error::new_spanned(
            variadic,
            "#[grader] functions cannot be variadic; take a slice instead",
        ));
    }

    for arg in &sig.inputs {
        match arg {
            FnArg::Receiver(receiver) => {
                let token = receiver.self_token;
                errors.at(
                    token.span,
                    "#[grader] goes on free functions, not methods; move it out of the `impl` \
                     and take the value as an ordinary parameter",
                );
            }
            FnArg::Typed(typed) => match &*typed.pat {
                Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {}
                Pat::Ident(pat) if pat.by_ref.is_some() => errors.at(
                    pat.by_ref.span(),
                    "#[grader] parameters are taken by value; remove `ref` and take a \
                     reference type instead",
                ),
                pattern => errors.push(syn::Error::new_spanned(
                    pattern,
                    "#[grader] parameters must be plain identifiers, which name the grader's \
                     fields; destructure inside the body",
                )),
            },
        }
    }

    if let ReturnType::Default = sig.output {
        errors.at(
            sig.paren_token.span.close(),
            "#[grader] functions return a score; add a return type such as `-> f64`, `-> bool` \
             or `-> Result<f64, E>`",
        );
    }

    match &options.ty {
        Some(ty) if PRELUDE.contains(&unraw(ty).as_str()) => errors.at(
            ty.span(),
            format!(
                "#[grader] type `{ty}` would shadow the prelude's `{ty}` in this module; choose \
                 another name"
            ),
        ),
        Some(_) => {}
        None => {
            let fn_name = unraw(&sig.ident);
            let ty = upper_camel_case(&fn_name);
            if ty.is_empty() {
                errors.at(
                    sig.ident.span(),
                    format!(
                        "#[grader] cannot make a type name from `{fn_name}`; name the type: \
                         `#[grader(type = Name)]`"
                    ),
                );
            } else if PRELUDE.contains(&ty.as_str()) {
                errors.at(
                    sig.ident.span(),
                    format!(
                        "#[grader] would name the grader type of `{fn_name}` `{ty}`, shadowing \
                         the prelude's `{ty}` in this module; name the type: \
                         `#[grader(type = {ty}Grader)]`"
                    ),
                );
            }
        }
    }

    if let Some(skips) = &options.skip {
        let names: Vec<String> = sig
            .inputs
            .iter()
            .filter_map(|arg| match arg {
                FnArg::Typed(typed) => match &*typed.pat {
                    Pat::Ident(pat) => Some(unraw(&pat.ident)),
                    _ => None,
                },
                FnArg::Receiver(_) => None,
            })
            .collect();
        for (i, skip) in skips.iter().enumerate() {
            let name = unraw(skip);
            if !names.contains(&name) {
                let known = if names.is_empty() {
                    "the function has no parameters".to_owned()
                } else {
                    format!("the parameters are `{}`", names.join("`, `"))
                };
                errors.at(
                    skip.span(),
                    format!("#[grader] cannot skip `{name}`: no parameter has that name; {known}"),
                );
            } else if skips[..i].iter().any(|earlier| unraw(earlier) == name) {
                errors.at(
                    skip.span(),
                    format!("#[grader] skips `{name}` twice; list it once"),
                );
            }
        }
    }

    errors.into_error()
}
