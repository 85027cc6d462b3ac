//! The derived grader as the expansion sees it: the struct, borrowed from the parsed input, its
//! fields with what each records, the grader's name and the method that scores.
//!
//! Building the model never fails: what cannot be part of it (the fields of an enum, a tuple
//! struct's unnamed fields) is left out, and [`validate`](super::validate) reports why.

use syn::{Attribute, Data, DeriveInput, Fields, Ident, Path, parse_quote};

use super::args::{FieldOptions, Options, ScoreMethod};
use crate::capture::type_name;
use crate::model::unraw;

/// One named field of the struct.
pub struct Field<'a> {
    /// The field's name, as written.
    pub ident: &'a Ident,
    /// The key in `_parameters`: the name without `r#`.
    pub key: String,
    /// The name in the placeholder for a value with no JSON form.
    pub type_name: String,
    /// Whether the field is recorded in `_parameters`.
    pub recorded: bool,
    /// The field's `cfg` attributes: a field compiled out is not recorded.
    pub cfgs: Vec<&'a Attribute>,
}

/// Everything the expansion needs.
pub struct Grader<'a> {
    /// The struct.
    pub input: &'a DeriveInput,
    /// The path to `grader_core`.
    pub krate: Path,
    /// The subscore's default name.
    pub name: String,
    /// The named fields, in order.
    pub fields: Vec<Field<'a>>,
    /// The method that scores, when one was named.
    pub score: Option<&'a ScoreMethod>,
}

impl<'a> Grader<'a> {
    /// Builds the model from the struct and its parsed options (`field_options` in field order).
    pub fn new(
        input: &'a DeriveInput,
        options: &'a Options,
        field_options: &[FieldOptions],
    ) -> Self {
        let krate = options
            .krate
            .clone()
            .unwrap_or_else(|| parse_quote!(::grader_core));
        let name = options
            .name
            .as_ref()
            .map_or_else(|| snake_case(&unraw(&input.ident)), syn::LitStr::value);
        let skipped: Vec<String> = options.skip.iter().flatten().map(unraw).collect();
        let fields = match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => named
                    .named
                    .iter()
                    .zip(
                        field_options
                            .iter()
                            .map(Some)
                            .chain(std::iter::repeat(None)),
                    )
                    .filter_map(|(field, field_options)| {
                        let ident = field.ident.as_ref()?;
                        let key = unraw(ident);
                        let skipped_here = field_options.is_some_and(|o| o.skip.is_some());
                        Some(Field {
                            ident,
                            recorded: !skipped_here && !skipped.contains(&key),
                            key,
                            type_name: type_name(&field.ty),
                            cfgs: field
                                .attrs
                                .iter()
                                .filter(|attr| attr.path().is_ident("cfg"))
                                .collect(),
                        })
                    })
                    .collect(),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        Grader {
            input,
            krate,
            name,
            fields,
            score: options.score.as_ref(),
        }
    }
}

/// `AnswerInSet` → `answer_in_set`, `HTTPCheck` → `http_check`, `F1Score` → `f1_score`: a word
/// starts at an upper-case letter that follows a lower-case letter or a digit, or that ends a
/// run of capitals (the last capital before a lower-case letter).
pub fn snake_case(camel: &str) -> String {
    let chars: Vec<char> = camel.chars().collect();
    let mut out = String::with_capacity(camel.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let previous = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1);
            let starts_word = match previous {
                None | Some('_') => false,
                Some(p) if p.is_lowercase() || p.is_ascii_digit() => true,
                Some(p) => p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()),
            };
            if starts_word {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::snake_case;

    #[test]
    fn names_become_snake_case() {
        assert_eq!(snake_case("AnswerInSet"), "answer_in_set");
        assert_eq!(snake_case("HTTPCheck"), "http_check");
        assert_eq!(snake_case("CheckHTTP"), "check_http");
        assert_eq!(snake_case("F1Score"), "f1_score");
        assert_eq!(snake_case("Check2fa"), "check2fa");
        assert_eq!(snake_case("X"), "x");
        assert_eq!(snake_case("Already_Snake"), "already_snake");
        assert_eq!(snake_case("ÉtéCheck"), "été_check");
    }
}
