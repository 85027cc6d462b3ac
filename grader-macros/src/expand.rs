//! The generated code: the grader type and its impls, emitted after the user's function
//! (untouched) by [`attribute`](crate::attribute). The only module that writes Rust with `quote!`.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Type};

use crate::capture::{self, Recorded};
use crate::model::Grader;

/// The grader type and its impls, for a function that passed every check.
pub fn expand(grader: &Grader) -> TokenStream {
    let definition = definition(grader);
    let run = run(grader);
    let Grader {
        krate,
        name,
        ident,
        generics,
        cfgs,
        ..
    } = grader;
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let parameters = parameters(grader);
    let result = quote!(::core::result::Result<#krate::Score, #krate::Failure>);

    let (score, sync_impl) = if grader.is_async {
        // Spanned on the function's name, where a future that is not `Send` is reported.
        let score = quote_spanned! {grader.func.sig.ident.span()=>
            async fn score(self) -> #result {
                #run
            }
        };
        (score, quote!())
    } else {
        let score = quote! {
            fn score(
                self,
            ) -> impl ::core::future::Future<Output = #result> + ::core::marker::Send {
                ::core::future::ready(<Self as #krate::SyncGrader>::score_now(self))
            }

            fn score_at_once(self) -> #krate::grader::AtOnce<Self> {
                #krate::grader::AtOnce::Scored(<Self as #krate::SyncGrader>::score_now(self))
            }
        };
        let sync_impl = quote! {
            #(#cfgs)*
            impl #impl_generics #krate::SyncGrader for #ident #ty_generics #where_clause {
                fn score_now(self) -> #result {
                    #run
                }
            }
        };
        (score, sync_impl)
    };

    let inherent = inherent(grader);

    quote! {
        #definition

        #inherent

        #(#cfgs)*
        impl #impl_generics #krate::Grader for #ident #ty_generics #where_clause {
            fn name(&self) -> ::std::borrow::Cow<'_, str> {
                ::std::borrow::Cow::Borrowed(#name)
            }

            #parameters

            #score
        }

        #sync_impl
    }
}

/// The inherent `grade`, so that grading needs no import of the `Grader` trait.
pub fn inherent(grader: &Grader) -> TokenStream {
    let Grader {
        func,
        krate,
        ident,
        generics,
        cfgs,
        ..
    } = grader;
    let vis = &func.vis;
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let doc = format!(
        " The grading of this grader at `weight`: [`Grader::grade`]({krate}::Grader::grade), \
         callable without importing the trait. Await it{now}, or add it to a gather or a tree.",
        krate = quote!(#krate).to_string().replace(' ', ""),
        now = if grader.is_async {
            ""
        } else {
            ", run it with `.now()`"
        },
    );
    quote! {
        #(#cfgs)*
        impl #impl_generics #ident #ty_generics #where_clause {
            #[doc = #doc]
            #vis fn grade<'__grading>(
                self,
                weight: f64,
            ) -> #krate::Grading<'__grading, Self>
            where
                Self: '__grading,
            {
                #krate::Grading::new(self, weight)
            }
        }
    }
}

/// The struct: the function's docs, one field per parameter.
pub fn definition(grader: &Grader) -> TokenStream {
    let Grader {
        func,
        ident,
        generics,
        docs,
        cfgs,
        params,
        ..
    } = grader;
    let vis = &func.vis;
    let fn_name = &func.sig.ident;
    let where_clause = &generics.where_clause;
    let doc = if docs.is_empty() {
        let text = format!(" The grader made by `#[grader]` from `{fn_name}`.");
        quote!(#[doc = #text])
    } else {
        quote!(#(#docs)*)
    };
    let fields = params.iter().map(|param| {
        let field = param.ident;
        let ty = &param.field_ty;
        let text = if param.recorded {
            format!(" The `{}` argument of `{fn_name}`.", param.key)
        } else {
            format!(
                " The `{}` argument of `{fn_name}` (not recorded in `_parameters`).",
                param.key
            )
        };
        quote!(#[doc = #text] #vis #field: #ty)
    });
    quote! {
        #(#cfgs)*
        #doc
        #vis struct #ident #generics #where_clause {
            #(#fields,)*
        }
    }
}

/// `Grader::parameters`: each recorded argument's JSON (or placeholder), in parameter order.
fn parameters(grader: &Grader) -> TokenStream {
    let recorded: Vec<Recorded> = grader
        .params
        .iter()
        .filter(|param| param.recorded)
        .map(|param| Recorded {
            key: &param.key,
            field: param.ident,
            type_name: &param.type_name,
            cfgs: Vec::new(),
        })
        .collect();
    capture::parameters_method(&grader.krate, &recorded)
}

/// Takes the arguments out of `self`, calls the function, and converts what it returns with
/// `IntoScore`, spanned on the return type so a non-score is reported there.
fn run(grader: &Grader) -> TokenStream {
    let krate = &grader.krate;
    let fn_name = &grader.func.sig.ident;
    let locals: Vec<Ident> = (0..grader.params.len())
        .map(|i| format_ident!("arg{}", i, span = Span::mixed_site()))
        .collect();
    let fields = grader.params.iter().map(|param| param.ident);
    let turbofish = if grader.turbofish.is_empty() {
        quote!()
    } else {
        let params = &grader.turbofish;
        quote!(::<#(#params),*>)
    };
    let await_ = grader.is_async.then(|| quote!(.await));
    let value = Ident::new("value", Span::mixed_site());
    let convert = match grader.output {
        Some(output) if nameable(output) => quote_spanned! {output.span()=>
            <#output as #krate::IntoScore>::into_score(#value)
        },
        Some(output) => quote_spanned! {output.span()=>
            #krate::IntoScore::into_score(#value)
        },
        None => quote!(#krate::IntoScore::into_score(#value)),
    };
    quote! {{
        let Self { #(#fields: #locals),* } = self;
        let #value = #fn_name #turbofish (#(#locals),*) #await_;
        #convert
    }}
}

/// Whether a return type can be written in an expression (`impl Trait` cannot).
fn nameable(ty: &Type) -> bool {
    !quote!(#ty)
        .into_iter()
        .any(|token| matches!(token, proc_macro2::TokenTree::Ident(ident) if ident == "impl"))
        && !matches!(ty, Type::ImplTrait(_))
}
