//! The generated code, the only place with `quote!`: the args type (serde parses it, schemars
//! describes it) and its `template()`, which registers the function; or, on errors, the errors
//! with the function and a stub type, so code that uses the template reports nothing more.

use proc_macro2::TokenStream;
use quote::quote;
use syn::LitStr;

use super::model::{Call, Field, Template};
use super::param::Default;
use super::validate::borrowed_part;

fn crate_string(template: &Template, inner: &str) -> LitStr {
    let krate = &template.krate;
    let inner = quote::format_ident!("{inner}");
    let path = quote!(#krate::__private::#inner)
        .to_string()
        .replace(' ', "");
    LitStr::new(&path, proc_macro2::Span::call_site())
}

/// The args type and its `template()`, for a function that passed every check.
pub fn expand(template: &Template) -> TokenStream {
    let Template {
        krate,
        ident,
        id,
        description,
        cfgs,
        ..
    } = template;
    let vis = &template.func.vis;
    let function = &template.func.sig.ident;
    let docs = template.docs();
    let names: Vec<_> = template.fields.iter().map(|field| field.ident).collect();
    let fields = template.fields.iter().map(|field| {
        let (name, ty) = (field.ident, field.ty);
        let attrs = field_attributes(template, field);
        quote!(#attrs #vis #name: #ty,)
    });
    let defaults = template.fields.iter().filter_map(|field| {
        let Some(Default::Value(value)) = field.param.and_then(|param| param.default.as_ref())
        else {
            return None;
        };
        let (name, ty) = (default_function(field), field.ty);
        Some(quote! {
            fn #name() -> #ty {
                #value
            }
        })
    });
    let serde_path = crate_string(template, "serde");
    let schemars_path = crate_string(template, "schemars");
    let input = template.input.map(|ty| quote!(.input::<#ty>()));
    let returns = template.returns.map(|ty| quote!(.returns::<#ty>()));
    // Spanned on the return type, where a type that cannot be a grade is reported.
    let returned = match &template.func.sig.output {
        syn::ReturnType::Type(_, ty) => syn::spanned::Spanned::span(&**ty),
        syn::ReturnType::Default => template.func.sig.ident.span(),
    };
    let args = quote::format_ident!("args", span = proc_macro2::Span::mixed_site());
    let state = quote::format_ident!("state", span = proc_macro2::Span::mixed_site());
    let session = quote::format_ident!("session", span = proc_macro2::Span::mixed_site());
    // With no fields, the args value is not read.
    let args_pattern = if names.is_empty() {
        quote!(_)
    } else {
        quote!(#args)
    };
    let calls = template.calls.iter().map(|call| match call {
        Call::Field(name) => quote!(#args.#name),
        Call::State => quote!(#state),
    });
    let new = respan(
        match template.state {
            None => quote! {
                #krate::Template::new(#id, |#args_pattern: #ident, #session: #krate::Session| {
                    #function(#( #calls, )* #session)
                })
            },
            Some(ty) => quote! {
                #krate::Template::with_state(
                    #id,
                    |#args_pattern: #ident, #state: #krate::State<#ty>, #session: #krate::Session| {
                        #function(#( #calls, )* #session)
                    },
                )
            },
        },
        returned,
    );
    let made = template_type(template);
    quote! {
        #(#cfgs)*
        #docs
        #[derive(#krate::__private::serde::Deserialize, #krate::__private::schemars::JsonSchema)]
        #[serde(crate = #serde_path)]
        #[schemars(crate = #schemars_path)]
        // A doc comment on a field would become its description in the manifest's schema.
        #[allow(missing_docs)]
        #vis struct #ident {
            #( #fields )*
        }

        #(#cfgs)*
        impl #ident {
            #( #defaults )*

            /// The template, to register with `Environment::template`.
            #[must_use]
            #vis fn template() -> #made {
                #new
                .description(#description)
                #input
                #returns
            }
        }
    }
}

/// The errors, the function as written, and a stub args type whose `template()` never runs.
pub fn fallback(input: TokenStream, template: &Template, error: &syn::Error) -> TokenStream {
    let errors = error.to_compile_error();
    if template.func.sig.receiver().is_some() {
        // A method: the attribute sits inside an `impl`, where no type can be declared.
        return quote! { #errors #input };
    }
    let Template { ident, cfgs, .. } = template;
    let vis = &template.func.vis;
    let fields = template
        .fields
        .iter()
        .filter(|field| borrowed_part(field.ty).is_none())
        .map(|field| {
            let (name, ty) = (field.ident, field.ty);
            quote!(#vis #name: #ty,)
        });
    let made = template_type(template);
    quote! {
        #errors
        #input

        #(#cfgs)*
        #vis struct #ident { #(#fields)* }

        #(#cfgs)*
        impl #ident {
            /// The template (not generated: the function has errors).
            #vis fn template() -> #made {
                ::core::unreachable!()
            }
        }
    }
}

/// What `template()` returns: a `Template`, or a `StatefulTemplate<T>` for a function that
/// takes `State<T>`.
fn template_type(template: &Template<'_>) -> TokenStream {
    let krate = &template.krate;
    match template.state {
        None => quote!(#krate::Template),
        Some(ty) => quote!(#krate::StatefulTemplate<#ty>),
    }
}

/// The function giving an argument's `default = value`.
fn default_function(field: &Field<'_>) -> syn::Ident {
    use syn::ext::IdentExt as _;
    quote::format_ident!("__default_{}", field.ident.unraw())
}

/// `#[schemars(description = …)]` and `#[serde(default …)]` from the parameter's `#[arg]`.
fn field_attributes(template: &Template, field: &Field<'_>) -> TokenStream {
    let Some(param) = field.param else {
        return TokenStream::new();
    };
    let description = param
        .description
        .as_ref()
        .map(|text| quote!(#[schemars(description = #text)]));
    let default = param.default.as_ref().map(|default| match default {
        Default::Trait => quote!(#[serde(default)]),
        Default::Value(_) => {
            let path = format!("{}::{}", template.ident, default_function(field));
            let path = LitStr::new(&path, proc_macro2::Span::call_site());
            quote!(#[serde(default = #path)])
        }
    });
    quote!(#description #default)
}

/// The tokens with every span set to `span` (groups' contents included).
fn respan(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    use proc_macro2::TokenTree;
    tokens
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Group(group) => {
                let mut new =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                new.set_span(span);
                TokenTree::Group(new)
            }
            mut other => {
                other.set_span(span);
                other
            }
        })
        .collect()
}
