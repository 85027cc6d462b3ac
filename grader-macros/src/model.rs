//! The grader as the expansion sees it: the function's parts, borrowed from the parsed
//! signature, and the grader type's name, fields and generics derived from them.
//!
//! Building the model never fails: a parameter that cannot become a field (a receiver, a
//! destructuring pattern) is left out, so the fallback can still emit a grader type after
//! [`validate`](crate::validate) reported the problem.

use std::collections::BTreeSet;

use proc_macro2::{Span, TokenStream};
use quote::format_ident;
use syn::parse::{Parse, ParseStream};
use syn::{
    AngleBracketedGenericArguments, Attribute, FnArg, GenericArgument, GenericParam, Generics,
    Ident, Lifetime, LifetimeParam, Pat, Path, PathArguments, ReturnType, Signature, Type,
    TypeParam, TypeParamBound, Visibility, parse_quote,
};

use crate::args::Options;
use crate::capture::type_name;

/// The annotated function's attributes, visibility and signature. The body is skipped: the
/// function is emitted from the tokens it was written with.
pub struct Function {
    /// The function's outer attributes (doc comments included).
    pub attrs: Vec<Attribute>,
    /// Its visibility.
    pub vis: Visibility,
    /// Its signature.
    pub sig: Signature,
}

impl Parse for Function {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let sig = if starts_signature(input) {
            input.parse::<Signature>()?
        } else if input.peek(syn::Token![struct]) {
            return Err(input.error(
                "#[grader] goes on a function (`fn name(param: Type, …) -> f64 { … }`); a \
                 struct derives its grader: `#[derive(Grader)]`, then \
                 `#[grader(score = method)]` below it",
            ));
        } else {
            return Err(
                input.error("#[grader] goes on a function: `fn name(param: Type, …) -> f64 { … }`")
            );
        };
        // The body is emitted from the original tokens; it is never parsed.
        input.parse::<TokenStream>()?;
        Ok(Function { attrs, vis, sig })
    }
}

fn starts_signature(input: ParseStream) -> bool {
    input.peek(syn::Token![fn])
        || input.peek(syn::Token![async])
        || input.peek(syn::Token![const])
        || input.peek(syn::Token![unsafe])
        || input.peek(syn::Token![extern])
}

/// One parameter of the function, and the field that holds it.
pub struct Param<'a> {
    /// The parameter's name, as written (`r#type` stays raw).
    pub ident: &'a Ident,
    /// The key in `_parameters`: the name without `r#`.
    pub key: String,
    /// The field's type: the parameter's, with elided lifetimes named and `impl Trait` made a
    /// type parameter of the grader type.
    pub field_ty: Type,
    /// The name in the placeholder for a value with no JSON form.
    pub type_name: String,
    /// Whether the argument is recorded in `_parameters` (not `skip`ped).
    pub recorded: bool,
}

/// Everything the expansion needs.
pub struct Grader<'a> {
    /// The function.
    pub func: &'a Function,
    /// The path to `grader_core`.
    pub krate: Path,
    /// The subscore's default name.
    pub name: String,
    /// The grader type's name.
    pub ident: Ident,
    /// Whether the function is `async`.
    pub is_async: bool,
    /// The parameters that become fields, in order.
    pub params: Vec<Param<'a>>,
    /// The grader type's generics: the function's, plus a lifetime per elided one and a type
    /// parameter per `impl Trait`.
    pub generics: Generics,
    /// The function's type and const parameters, passed explicitly at the call.
    pub turbofish: Vec<&'a Ident>,
    /// The function's doc attributes, copied onto the type.
    pub docs: Vec<&'a Attribute>,
    /// The function's `cfg` attributes, copied onto everything generated.
    pub cfgs: Vec<&'a Attribute>,
    /// The declared return type, if any.
    pub output: Option<&'a Type>,
}

impl<'a> Grader<'a> {
    /// Builds the model, leaving out what cannot be part of it.
    pub fn new(func: &'a Function, options: &Options) -> Self {
        let sig = &func.sig;
        let fn_name = unraw(&sig.ident);
        let ident = type_ident(&sig.ident, options);
        let krate = options
            .krate
            .clone()
            .unwrap_or_else(|| parse_quote!(::grader_core));
        let name = options
            .name
            .as_ref()
            .map_or_else(|| fn_name.clone(), syn::LitStr::value);
        let skipped: Vec<&Ident> = options.skip.iter().flatten().collect();

        let mut normalizer = Normalizer::new(&sig.generics);
        let mut params = Vec::new();
        for arg in &sig.inputs {
            let FnArg::Typed(typed) = arg else { continue };
            let Pat::Ident(pat) = &*typed.pat else {
                continue;
            };
            if pat.by_ref.is_some() || pat.subpat.is_some() {
                continue;
            }
            let key = unraw(&pat.ident);
            normalizer.prefix = key.clone();
            let mut field_ty = (*typed.ty).clone();
            normalizer.normalize(&mut field_ty);
            params.push(Param {
                ident: &pat.ident,
                recorded: !skipped.iter().any(|skip| unraw(skip) == key),
                key,
                field_ty,
                type_name: type_name(&typed.ty),
            });
        }

        let mut generics = sig.generics.clone();
        let fresh_lifetimes = normalizer
            .fresh_lifetimes
            .into_iter()
            .map(|lifetime| GenericParam::Lifetime(LifetimeParam::new(lifetime)));
        let impl_params = normalizer.impl_params.into_iter().map(GenericParam::Type);
        let (lifetimes, others): (Vec<_>, Vec<_>) = std::mem::take(&mut generics.params)
            .into_iter()
            .chain(fresh_lifetimes)
            .chain(impl_params)
            .partition(|param| matches!(param, GenericParam::Lifetime(_)));
        generics.params = lifetimes.into_iter().chain(others).collect();

        let turbofish = sig
            .generics
            .params
            .iter()
            .filter_map(|param| match param {
                GenericParam::Type(ty) => Some(&ty.ident),
                GenericParam::Const(c) => Some(&c.ident),
                GenericParam::Lifetime(_) => None,
            })
            .collect();

        Grader {
            func,
            krate,
            name,
            ident,
            is_async: sig.asyncness.is_some(),
            params,
            generics,
            turbofish,
            docs: attrs_named(&func.attrs, "doc"),
            cfgs: attrs_named(&func.attrs, "cfg"),
            output: match &sig.output {
                ReturnType::Type(_, ty) => Some(ty),
                ReturnType::Default => None,
            },
        }
    }
}

/// The names of the prelude's types and traits (and `Self`): a grader type with one of them
/// would shadow it for the rest of the module.
pub const PRELUDE: &[&str] = &[
    "AsMut",
    "AsRef",
    "AsyncFn",
    "AsyncFnMut",
    "AsyncFnOnce",
    "Box",
    "Clone",
    "Copy",
    "Default",
    "DoubleEndedIterator",
    "Drop",
    "Eq",
    "ExactSizeIterator",
    "Extend",
    "Fn",
    "FnMut",
    "FnOnce",
    "From",
    "FromIterator",
    "Future",
    "Into",
    "IntoFuture",
    "IntoIterator",
    "Iterator",
    "Option",
    "Ord",
    "PartialEq",
    "PartialOrd",
    "Result",
    "Self",
    "Send",
    "Sized",
    "String",
    "Sync",
    "ToOwned",
    "ToString",
    "TryFrom",
    "TryInto",
    "Unpin",
    "Vec",
];

/// The grader type's name: the `type` option, or the function's name in UpperCamelCase
/// (`Grader` when that leaves nothing, `ResultGrader` for a prelude name like `Result`: errors
/// that [`validate`](crate::validate) reports, so the fallback's stub shadows nothing).
pub fn type_ident(fn_ident: &Ident, options: &Options) -> Ident {
    if let Some(ty) = &options.ty {
        return ty.clone();
    }
    let name = upper_camel_case(&unraw(fn_ident));
    let name = if name.is_empty() {
        "Grader".to_owned()
    } else if PRELUDE.contains(&name.as_str()) {
        format!("{name}Grader")
    } else {
        name
    };
    Ident::new(&name, fn_ident.span())
}

fn attrs_named<'a>(attrs: &'a [Attribute], name: &str) -> Vec<&'a Attribute> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident(name))
        .collect()
}

/// An identifier without its `r#`.
pub fn unraw(ident: &Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map_or(text.clone(), str::to_owned)
}

/// `tests_pass` → `TestsPass`; leading, trailing and doubled underscores are dropped.
pub fn upper_camel_case(snake: &str) -> String {
    snake
        .split('_')
        .filter(|word| !word.is_empty())
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect()
            })
        })
        .collect()
}

/// Rewrites parameter types into field types: every elided lifetime (`&T`, `'_`) gets a
/// fresh named lifetime, and every `impl Trait` becomes a new type parameter with that bound.
/// Lifetimes inside `Fn(&T)` sugar and `fn(&T)` pointers are higher-ranked and left alone.
struct Normalizer {
    taken: BTreeSet<String>,
    prefix: String,
    fresh_lifetimes: Vec<Lifetime>,
    impl_params: Vec<TypeParam>,
}

impl Normalizer {
    fn new(generics: &Generics) -> Self {
        let taken = generics
            .params
            .iter()
            .map(|param| match param {
                GenericParam::Lifetime(l) => l.lifetime.ident.to_string(),
                GenericParam::Type(t) => t.ident.to_string(),
                GenericParam::Const(c) => c.ident.to_string(),
            })
            .collect();
        Normalizer {
            taken,
            prefix: String::new(),
            fresh_lifetimes: Vec::new(),
            impl_params: Vec::new(),
        }
    }

    fn fresh_name(&mut self, base: &str) -> String {
        let mut candidate = base.to_owned();
        let mut n = 1;
        while self.taken.contains(&candidate) || is_reserved(&candidate) {
            n += 1;
            candidate = format!("{base}{n}");
        }
        self.taken.insert(candidate.clone());
        candidate
    }

    fn fresh_lifetime(&mut self, span: Span) -> Lifetime {
        let name = self.fresh_name(&self.prefix.clone());
        let lifetime = Lifetime::new(&format!("'{name}"), span);
        self.fresh_lifetimes.push(lifetime.clone());
        lifetime
    }

    fn lifetime(&mut self, lifetime: &mut Lifetime) {
        if lifetime.ident == "_" {
            *lifetime = self.fresh_lifetime(lifetime.apostrophe);
        }
    }

    fn normalize(&mut self, ty: &mut Type) {
        match ty {
            Type::Reference(reference) => {
                match &mut reference.lifetime {
                    Some(lifetime) => self.lifetime(lifetime),
                    None => {
                        reference.lifetime = Some(self.fresh_lifetime(reference.and_token.span));
                    }
                }
                self.normalize(&mut reference.elem);
            }
            Type::Path(path) => {
                if let Some(qself) = &mut path.qself {
                    self.normalize(&mut qself.ty);
                }
                self.path(&mut path.path);
            }
            Type::Tuple(tuple) => tuple.elems.iter_mut().for_each(|elem| self.normalize(elem)),
            Type::Slice(slice) => self.normalize(&mut slice.elem),
            Type::Array(array) => self.normalize(&mut array.elem),
            Type::Paren(paren) => self.normalize(&mut paren.elem),
            Type::Group(group) => self.normalize(&mut group.elem),
            Type::Ptr(ptr) => self.normalize(&mut ptr.elem),
            Type::TraitObject(object) => self.bounds(object.bounds.iter_mut()),
            Type::ImplTrait(impl_trait) => {
                self.bounds(impl_trait.bounds.iter_mut());
                let base = format!("__{}", upper_camel_case(&self.prefix));
                let ident = format_ident!("{}", self.fresh_name(&base));
                let mut param = TypeParam::from(ident.clone());
                param.colon_token = Some(Default::default());
                param.bounds = impl_trait.bounds.clone();
                self.impl_params.push(param);
                *ty = parse_quote!(#ident);
            }
            _ => {}
        }
    }

    fn bounds<'b>(&mut self, bounds: impl Iterator<Item = &'b mut TypeParamBound>) {
        for bound in bounds {
            match bound {
                TypeParamBound::Trait(trait_bound) if trait_bound.lifetimes.is_none() => {
                    self.path(&mut trait_bound.path);
                }
                TypeParamBound::Lifetime(lifetime) => self.lifetime(lifetime),
                _ => {}
            }
        }
    }

    fn path(&mut self, path: &mut Path) {
        for segment in &mut path.segments {
            if let PathArguments::AngleBracketed(args) = &mut segment.arguments {
                self.arguments(args);
            }
        }
    }

    fn arguments(&mut self, args: &mut AngleBracketedGenericArguments) {
        for arg in &mut args.args {
            match arg {
                GenericArgument::Lifetime(lifetime) => self.lifetime(lifetime),
                GenericArgument::Type(ty) => self.normalize(ty),
                GenericArgument::AssocType(assoc) => self.normalize(&mut assoc.ty),
                _ => {}
            }
        }
    }
}

fn is_reserved(name: &str) -> bool {
    name.is_empty()
        || name == "static"
        || syn::parse_str::<Ident>(name).is_err()
        || name.starts_with(|c: char| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::upper_camel_case;

    #[test]
    fn names_become_upper_camel_case() {
        assert_eq!(upper_camel_case("tests_pass"), "TestsPass");
        assert_eq!(upper_camel_case("_private__check_"), "PrivateCheck");
        assert_eq!(upper_camel_case("check2fa"), "Check2fa");
        assert_eq!(upper_camel_case("x"), "X");
    }
}
