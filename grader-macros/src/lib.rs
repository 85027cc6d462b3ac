//! The `#[grader]` attribute macro. Use it through `grader-core`, which re-exports it.

use proc_macro::TokenStream;

/// Turns a scoring function into a grader type. (Implemented in a later change.)
#[proc_macro_attribute]
pub fn grader(_args: TokenStream, input: TokenStream) -> TokenStream {
    input
}
