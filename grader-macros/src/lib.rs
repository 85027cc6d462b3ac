//! The `#[grader]` attribute macro. Use it through `grader-core`, which re-exports it.

mod args;
mod expand;
mod fallback;
mod model;
mod validate;

use proc_macro::TokenStream;

/// Turns a scoring function into a grader type.
#[proc_macro_attribute]
pub fn grader(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::grader(args.into(), input.into()).into()
}
