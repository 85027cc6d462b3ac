//! How a grader records its inputs under `_parameters`, shared by `#[grader]` and
//! `#[derive(Grader)]`: the `parameters` method that captures each value (its JSON when its type
//! implements `Serialize`, a placeholder otherwise), and the type name the placeholder shows.

use proc_macro2::{TokenStream, TokenTree};
use quote::{ToTokens, quote};
use syn::{Attribute, GenericArgument, Ident, Path, PathArguments, Type, TypeParamBound};

/// One recorded value: its key in `_parameters`, the field of `self` that holds it, and the name
/// its type goes by in the placeholder.
pub struct Recorded<'a> {
    /// The key (the name without `r#`).
    pub key: &'a str,
    /// The field, as written.
    pub field: &'a Ident,
    /// See [`type_name`].
    pub type_name: &'a str,
    /// The field's `cfg` attributes, repeated on its recording.
    pub cfgs: Vec<&'a Attribute>,
}

/// `Grader::parameters`: each recorded value's JSON (or placeholder), in the order given; and
/// `Grader::write_parameters`, the same object written as JSON text straight into a buffer.
/// The capture is written here, where the field's concrete type is known, so that method
/// resolution picks `CaptureSerialize` for `Serialize` types and `CapturePlaceholder` (one
/// autoref further) for the others.
pub fn parameters_method(krate: &Path, recorded: &[Recorded]) -> TokenStream {
    if recorded.is_empty() {
        return quote! {
            fn parameters(&self) -> #krate::Info {
                #krate::Info::new()
            }

            fn write_parameters(&self, _out: &mut #krate::params::ParametersWriter) {}
        };
    }
    let inserts = recorded.iter().map(|value| {
        let Recorded {
            key,
            field,
            type_name,
            cfgs,
        } = value;
        quote! {
            #(#cfgs)*
            parameters.insert(
                ::std::string::String::from(#key),
                (&#krate::__private::Capture(&self.#field)).__grader_capture(#type_name),
            );
        }
    });
    let writes = recorded.iter().map(|value| {
        let Recorded {
            key,
            field,
            type_name,
            cfgs,
        } = value;
        // An identifier needs no escaping in JSON: the key is written as it is, quoted.
        let json_key = format!("\"{key}\":");
        quote! {
            #(#cfgs)*
            (&#krate::__private::Capture(&self.#field)).__grader_write(out, #json_key, #type_name);
        }
    });
    let count = recorded.len();
    // With every recorded field compiled out, nothing is inserted or written.
    let some_cfg = recorded.iter().any(|value| !value.cfgs.is_empty());
    let allow_unused_mut = some_cfg.then(|| quote!(#[allow(unused_mut)]));
    let allow_unused_variables = some_cfg.then(|| quote!(#[allow(unused_variables)]));
    quote! {
        #[allow(clippy::needless_borrow)]
        #allow_unused_mut
        fn parameters(&self) -> #krate::Info {
            use #krate::__private::{CapturePlaceholder as _, CaptureSerialize as _};
            let mut parameters = #krate::Info::with_capacity(#count);
            #(#inserts)*
            parameters
        }

        #[allow(clippy::needless_borrow)]
        #allow_unused_variables
        fn write_parameters(&self, out: &mut #krate::params::ParametersWriter) {
            use #krate::__private::{CapturePlaceholder as _, CaptureSerialize as _};
            #(#writes)*
        }
    }
}

/// The name a parameter's type goes by in the placeholder: the declared type with references
/// at the top and every lifetime stripped, printed compactly (`&'a mut Vec<Opaque<'a>>` →
/// `Vec<Opaque>`).
pub fn type_name(ty: &Type) -> String {
    let mut ty = ty;
    loop {
        match ty {
            Type::Reference(reference) => ty = &reference.elem,
            Type::Paren(paren) => ty = &paren.elem,
            Type::Group(group) => ty = &group.elem,
            _ => break,
        }
    }
    let mut stripped = ty.clone();
    strip_lifetimes(&mut stripped);
    let mut out = String::new();
    compact(stripped.into_token_stream(), &mut out);
    out.replace("->", " -> ")
}

fn strip_lifetimes(ty: &mut Type) {
    match ty {
        Type::Reference(reference) => {
            reference.lifetime = None;
            strip_lifetimes(&mut reference.elem);
        }
        Type::Path(path) => {
            if let Some(qself) = &mut path.qself {
                strip_lifetimes(&mut qself.ty);
            }
            strip_path(&mut path.path);
        }
        Type::Tuple(tuple) => tuple.elems.iter_mut().for_each(strip_lifetimes),
        Type::Slice(slice) => strip_lifetimes(&mut slice.elem),
        Type::Array(array) => strip_lifetimes(&mut array.elem),
        Type::Paren(paren) => strip_lifetimes(&mut paren.elem),
        Type::Group(group) => strip_lifetimes(&mut group.elem),
        Type::Ptr(ptr) => strip_lifetimes(&mut ptr.elem),
        Type::TraitObject(object) => {
            object.bounds = strip_bounds(std::mem::take(&mut object.bounds));
        }
        Type::ImplTrait(impl_trait) => {
            impl_trait.bounds = strip_bounds(std::mem::take(&mut impl_trait.bounds));
        }
        _ => {}
    }
}

fn strip_bounds(
    bounds: syn::punctuated::Punctuated<TypeParamBound, syn::Token![+]>,
) -> syn::punctuated::Punctuated<TypeParamBound, syn::Token![+]> {
    bounds
        .into_iter()
        .filter(|bound| !matches!(bound, TypeParamBound::Lifetime(_)))
        .map(|mut bound| {
            if let TypeParamBound::Trait(trait_bound) = &mut bound {
                strip_path(&mut trait_bound.path);
            }
            bound
        })
        .collect()
}

fn strip_path(path: &mut Path) {
    for segment in &mut path.segments {
        if let PathArguments::AngleBracketed(args) = &mut segment.arguments {
            args.args = std::mem::take(&mut args.args)
                .into_iter()
                .filter(|arg| !matches!(arg, GenericArgument::Lifetime(_)))
                .map(|mut arg| {
                    match &mut arg {
                        GenericArgument::Type(ty) => strip_lifetimes(ty),
                        GenericArgument::AssocType(assoc) => strip_lifetimes(&mut assoc.ty),
                        _ => {}
                    }
                    arg
                })
                .collect();
            if args.args.is_empty() {
                segment.arguments = PathArguments::None;
            }
        }
    }
}

/// Prints tokens with spaces only where Rust needs them or they help reading: between words,
/// after commas and semicolons, around `+`.
fn compact(tokens: TokenStream, out: &mut String) {
    let mut previous_word = false;
    for token in tokens {
        match token {
            TokenTree::Ident(ident) => {
                if previous_word {
                    out.push(' ');
                }
                out.push_str(&ident.to_string());
                previous_word = true;
            }
            TokenTree::Literal(literal) => {
                if previous_word {
                    out.push(' ');
                }
                out.push_str(&literal.to_string());
                previous_word = true;
            }
            TokenTree::Punct(punct) => {
                match punct.as_char() {
                    ',' | ';' => out.push_str(&format!("{} ", punct.as_char())),
                    '+' => out.push_str(" + "),
                    '=' => out.push_str(" = "),
                    c => out.push(c),
                }
                previous_word = false;
            }
            TokenTree::Group(group) => {
                let (open, close) = match group.delimiter() {
                    proc_macro2::Delimiter::Parenthesis => ("(", ")"),
                    proc_macro2::Delimiter::Bracket => ("[", "]"),
                    proc_macro2::Delimiter::Brace => ("{", "}"),
                    proc_macro2::Delimiter::None => ("", ""),
                };
                if previous_word && !open.is_empty() && open != "(" && open != "[" {
                    out.push(' ');
                }
                out.push_str(open);
                compact(group.stream(), out);
                out.push_str(close);
                previous_word = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::type_name;

    #[test]
    fn placeholder_names_strip_references_and_lifetimes() {
        let name = |ty: &str| type_name(&syn::parse_str(ty).expect("a type"));
        assert_eq!(name("&'a Opaque"), "Opaque");
        assert_eq!(name("&mut Vec<Opaque>"), "Vec<Opaque>");
        assert_eq!(name("&&'a Wrapper<'a, T>"), "Wrapper<T>");
        assert_eq!(
            name("HashMap<String, Vec<&'static str>>"),
            "HashMap<String, Vec<&str>>"
        );
        assert_eq!(name("[u8; 4]"), "[u8; 4]");
        assert_eq!(name("impl Display + 'a"), "impl Display");
        assert_eq!(name("&dyn Fn(&str) -> bool"), "dyn Fn(&str) -> bool");
        assert_eq!(name("std::path::Path"), "std::path::Path");
    }
}
