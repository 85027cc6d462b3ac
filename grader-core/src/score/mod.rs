//! The wire format: [`SubScore`], [`EvaluationResult`], and [`Score`], what a scoring
//! computation produces before it is named and weighted.
//!
//! The JSON matches the HUD SDK's `hud.graders.SubScore` and `EvaluationResult`: the same field
//! names, defaults and strictness, so Python reads what Rust writes and the other way round.
//! Where we are stricter: a subscore's value must be a finite number in `[0, 1]`, its weight
//! and a result's reward finite, checked whenever one is built or parsed, so an invalid score
//! never exists. Where we keep more: a result's unknown fields ([`Extra`]) keep their exact
//! JSON text, so integers beyond 64 bits survive a round trip as they do through Python.

mod extra;
mod info;
mod result;
mod subscore;

pub use extra::{Extra, ExtraError};
pub use info::{Info, InfoError, info_from_value, json_kind};
pub use result::{EvaluationResult, RewardError, UNCLAMPED_REWARD_KEY};
pub use subscore::{Score, SubScore};
pub(crate) use subscore::{is_valid_value, parse_parameters};
