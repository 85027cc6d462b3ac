//! math-verify's configuration surface as plain Rust values, with the anchor's names and
//! defaults (so that each maps one to one to its Python keyword): the extraction targets
//! (`LatexExtractionConfig`, `ExprExtractionConfig`, `StringExtractionConfig`),
//! latex2sympy2_extended's `NormalizationConfig`, `parse`'s and `verify`'s keyword arguments,
//! `math_metric`'s, and the configurations the trainers call it with.

use serde::{Deserialize, Serialize};

use super::limits::Limits;

/// Which `\boxed{}` contents latex2sympy2_extended's `normalize_latex` keeps
/// (`NormalizationConfig.boxed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BoxedMode {
    /// `"all"`: every boxed content, joined by commas.
    #[default]
    All,
    /// `"last"`: the last one (and those just before it separated by "and", "or", commas).
    Last,
    /// `"none"`: boxes are left as they are.
    None,
}

/// latex2sympy2_extended 1.11.0's `NormalizationConfig`: which clean-ups are applied to an
/// extracted LaTeX answer before it is parsed. [`Default`] is the class's own default;
/// [`NormalizationConfig::math_verify`] is the one `LatexExtractionConfig` uses by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct NormalizationConfig {
    /// `\mathrm`, `\displaystyle`, `\left`/`\right`, `\dfrac`, dollar signs, "and"/"or",
    /// percent words, `\!`, `{,}` and their kin (default `true`).
    pub basic_latex: bool,
    /// Units and `\text{…}` suffixes removed from the end (default `false`).
    pub units: bool,
    /// `\sqrt2`, `\frac12`, `^(…)`, `sqrt(…)` and `a/b` rewritten (default `false`).
    pub malformed_operators: bool,
    /// A leading `.` becomes `0.`, and `0.5` becomes `\frac{1}{2}` (default `false`).
    pub nits: bool,
    /// Which boxed contents are kept (default [`BoxedMode::All`]).
    pub boxed: BoxedMode,
    /// The text after the last `=` of a chain of three or more parts (deprecated in the
    /// anchor; default `false`).
    pub equations: bool,
}

impl Default for NormalizationConfig {
    fn default() -> Self {
        Self {
            basic_latex: true,
            units: false,
            malformed_operators: false,
            nits: false,
            boxed: BoxedMode::All,
            equations: false,
        }
    }
}

impl NormalizationConfig {
    /// The normalization `LatexExtractionConfig` uses by default: every clean-up but
    /// `equations`.
    #[must_use]
    pub fn math_verify() -> Self {
        Self {
            basic_latex: true,
            units: true,
            malformed_operators: true,
            nits: true,
            boxed: BoxedMode::All,
            equations: false,
        }
    }
}

/// math-verify's `LatexExtractionConfig`: LaTeX answers (`$…$`, `\[…\]`, `\(…\)`, ` […] `,
/// `\boxed{}`, bare `\frac{a}{b}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct LatexExtractionConfig {
    /// Whether LaTeX is looked for anywhere, not only after "answer" or "final answer … is"
    /// (default `true`).
    pub try_extract_without_anchor: bool,
    /// The priority of `\boxed{}` matches: 0 before everything, 50 (the default) with "final
    /// answer … is", -1 never.
    pub boxed_match_priority: i32,
    /// How the extracted LaTeX is cleaned up (default [`NormalizationConfig::math_verify`]).
    pub normalization_config: NormalizationConfig,
}

impl Default for LatexExtractionConfig {
    fn default() -> Self {
        Self {
            try_extract_without_anchor: true,
            boxed_match_priority: 50,
            normalization_config: NormalizationConfig::math_verify(),
        }
    }
}

/// math-verify's `ExprExtractionConfig`: plain numbers and expressions (`1,000.5`, `1/2`,
/// `(3+4)*2`, `30%`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct ExprExtractionConfig {
    /// Whether numbers are looked for anywhere (default `true`).
    pub try_extract_without_anchor: bool,
}

impl Default for ExprExtractionConfig {
    fn default() -> Self {
        Self {
            try_extract_without_anchor: true,
        }
    }
}

/// math-verify's `StringExtractionConfig`: one of given strings (multiple-choice letters).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct StringExtractionConfig {
    /// The strings (default `A`, `B`, `C`, `D`).
    pub strings: Vec<String>,
    /// Whether the strings are looked for anywhere (default `true`).
    pub try_extract_without_anchor: bool,
    /// Whether the string found is lower-cased (default `true`).
    pub lowercase: bool,
}

impl Default for StringExtractionConfig {
    fn default() -> Self {
        Self {
            strings: ["A", "B", "C", "D"].map(String::from).to_vec(),
            try_extract_without_anchor: true,
            lowercase: true,
        }
    }
}

/// One of math-verify's extraction targets (`ExtractionTarget`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtractionTarget {
    /// `LatexExtractionConfig`.
    Latex(LatexExtractionConfig),
    /// `ExprExtractionConfig`.
    Expr(ExprExtractionConfig),
    /// `StringExtractionConfig`.
    String(StringExtractionConfig),
}

impl From<LatexExtractionConfig> for ExtractionTarget {
    fn from(config: LatexExtractionConfig) -> Self {
        Self::Latex(config)
    }
}

impl From<ExprExtractionConfig> for ExtractionTarget {
    fn from(config: ExprExtractionConfig) -> Self {
        Self::Expr(config)
    }
}

impl From<StringExtractionConfig> for ExtractionTarget {
    fn from(config: StringExtractionConfig) -> Self {
        Self::String(config)
    }
}

/// `parse`'s `extraction_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtractionMode {
    /// `"first_match"`: only the first match found (the most important priority, rightmost
    /// first) is read; if it does not parse, nothing is.
    FirstMatch,
    /// `"any_match"` (the default): matches are read in order until one parses.
    #[default]
    AnyMatch,
}

/// `parse`'s `fallback_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FallbackMode {
    /// `"no_fallback"`: only what parsed.
    NoFallback,
    /// `"first_match"` (the default): the text of the first match too, compared as a string.
    #[default]
    FirstMatch,
}

/// Which verdicts [`verify`](super::verify) gives where math-verify's is mathematically wrong
/// (SPEC D36, D37).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Semantics {
    /// The right verdict (the default, `math_semantics: 2` in a grader's `info`): two
    /// different exact values are never equal, and the false verdicts listed in
    /// docs/graders.md are corrected.
    #[default]
    Exact,
    /// math-verify 0.9.0's verdict, its rounding and its wrong answers included (numbers
    /// closer than 2⁻⁵⁴ equal, coefficients equal to 15 digits, `\mathrm{e}` cut off), for a
    /// user who needs bit-for-bit agreement with the anchor.
    Parity,
}

impl Semantics {
    /// The number recorded as `math_semantics` in `info`: 2 for [`Semantics::Exact`], 1 for
    /// [`Semantics::Parity`] (the verdicts before exact comparison came, math-verify's own).
    #[must_use]
    pub fn version(self) -> u32 {
        match self {
            Self::Exact => 2,
            Self::Parity => 1,
        }
    }
}

/// `parse`'s keyword arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ParseOptions {
    /// What to look for (default: LaTeX, then plain expressions).
    pub extraction_config: Vec<ExtractionTarget>,
    /// Whether the first match's text is kept too (default [`FallbackMode::FirstMatch`]).
    pub fallback_mode: FallbackMode,
    /// Whether matches are tried until one parses (default [`ExtractionMode::AnyMatch`]).
    pub extraction_mode: ExtractionMode,
    /// Seconds before the parse stops with [`MathError::Deadline`](super::MathError)
    /// (default 5; `None` for none: the work [`Budget`](super::Budget) still bounds it).
    pub parsing_timeout: Option<u32>,
    /// Kept for the anchor's surface: failures here are always typed errors (SPEC D43), so
    /// this changes nothing (default `false`).
    pub raise_on_error: bool,
    /// How readings that math-verify gets wrong are read ([`Semantics::Exact`]).
    pub semantics: Semantics,
    /// The bounds on the text and each answer read (not in the anchor).
    pub limits: Limits,
}

impl Default for ParseOptions {
    fn default() -> Self {
        Self {
            extraction_config: vec![
                LatexExtractionConfig::default().into(),
                ExprExtractionConfig::default().into(),
            ],
            fallback_mode: FallbackMode::FirstMatch,
            extraction_mode: ExtractionMode::AnyMatch,
            parsing_timeout: Some(5),
            raise_on_error: false,
            semantics: Semantics::Exact,
            limits: Limits::default(),
        }
    }
}

impl ParseOptions {
    /// The defaults with these extraction targets.
    #[must_use]
    pub fn targets(targets: impl IntoIterator<Item = ExtractionTarget>) -> Self {
        Self {
            extraction_config: targets.into_iter().collect(),
            ..Self::default()
        }
    }
}

/// `verify`'s keyword arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct VerifyOptions {
    /// Decimals a decimal answer is rounded to before it is compared (default 6).
    pub float_rounding: u32,
    /// Significant digits of a numeric comparison (default 15).
    pub numeric_precision: u32,
    /// Whether variables must have the same names (default `true`; `false` renames the
    /// answer's to the gold's, in sorted order).
    pub strict: bool,
    /// Whether a relation answer is compared with a set gold as the set it describes (default
    /// `false`: only a relation gold with a set answer).
    pub allow_set_relation_comp: bool,
    /// Seconds before the comparison stops with [`MathError::Deadline`](super::MathError)
    /// (default 5; `None` for none).
    pub timeout_seconds: Option<u32>,
    /// Kept for the anchor's surface: failures are always typed errors (default `false`).
    pub raise_on_error: bool,
    /// Exact verdicts or math-verify's own (default [`Semantics::Exact`]).
    pub semantics: Semantics,
    /// The work one comparison may do (not in the anchor; default
    /// [`Budget::DEFAULT_WORK`](super::Budget::DEFAULT_WORK)).
    pub work: u64,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        Self {
            float_rounding: 6,
            numeric_precision: 15,
            strict: true,
            allow_set_relation_comp: false,
            timeout_seconds: Some(5),
            raise_on_error: false,
            semantics: Semantics::Exact,
            work: super::Budget::DEFAULT_WORK,
        }
    }
}

impl VerifyOptions {
    /// The defaults with math-verify's verdicts ([`Semantics::Parity`]).
    #[must_use]
    pub fn parity() -> Self {
        Self {
            semantics: Semantics::Parity,
            ..Self::default()
        }
    }
}

/// `math_metric`'s `aggregation_function` over the predictions' scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregation {
    /// `max` (the default).
    #[default]
    Max,
    /// `min`.
    Min,
    /// The mean.
    Mean,
}

/// How a gold and an answer are read and compared: the configuration of a reward function
/// (what TRL, open-r1 or verl pass to math-verify), with the anchors' presets.
///
/// ```
/// use grader_core::math::{ExtractionMode, MathConfig};
///
/// let trl = MathConfig::trl_accuracy_reward();
/// assert_eq!(trl.answer.extraction_mode, ExtractionMode::FirstMatch);
/// assert_eq!(MathConfig::default(), MathConfig::math_verify());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MathConfig {
    /// How the gold is parsed.
    pub gold: ParseOptions,
    /// How the answer is parsed.
    pub answer: ParseOptions,
    /// How they are compared.
    pub verify: VerifyOptions,
    /// Whether the gold is written into `\boxed{…}` before it is parsed (verl's
    /// `compute_score`).
    pub box_gold: bool,
}

impl Default for MathConfig {
    fn default() -> Self {
        Self::math_verify()
    }
}

impl MathConfig {
    /// `verify(parse(gold), parse(answer))` with math-verify's defaults.
    #[must_use]
    pub fn math_verify() -> Self {
        Self {
            gold: ParseOptions::default(),
            answer: ParseOptions::default(),
            verify: VerifyOptions::default(),
            box_gold: false,
        }
    }

    /// TRL 1.16.0's `trl.rewards.accuracy_reward`: the gold with the defaults (a gold that
    /// yields nothing is skipped), the answer as LaTeX only, `\boxed{}` first, no match
    /// without an anchor, the first match only, normalized as `NormalizationConfig(units=True)`;
    /// `parsing_timeout=10` and `timeout_seconds=5` (its main-thread values).
    #[must_use]
    pub fn trl_accuracy_reward() -> Self {
        Self {
            gold: ParseOptions {
                parsing_timeout: Some(10),
                ..ParseOptions::default()
            },
            answer: ParseOptions {
                extraction_config: vec![
                    LatexExtractionConfig {
                        normalization_config: NormalizationConfig {
                            units: true,
                            ..NormalizationConfig::default()
                        },
                        boxed_match_priority: 0,
                        try_extract_without_anchor: false,
                    }
                    .into(),
                ],
                extraction_mode: ExtractionMode::FirstMatch,
                parsing_timeout: Some(10),
                ..ParseOptions::default()
            },
            verify: VerifyOptions {
                timeout_seconds: Some(5),
                ..VerifyOptions::default()
            },
            box_gold: false,
        }
    }

    /// open-r1's `accuracy_reward` (and older TRL's, and the recipes copied from it): the
    /// gold with `extraction_mode="first_match"`, the answer as LaTeX only with
    /// `NormalizationConfig(nits=False, malformed_operators=False, basic_latex=True,
    /// equations=True, boxed="all", units=True)`, `\boxed{}` first, no match without an anchor,
    /// the first match only.
    #[must_use]
    pub fn open_r1_accuracy_reward() -> Self {
        Self {
            gold: ParseOptions {
                extraction_mode: ExtractionMode::FirstMatch,
                ..ParseOptions::default()
            },
            answer: ParseOptions {
                extraction_config: vec![
                    LatexExtractionConfig {
                        normalization_config: NormalizationConfig {
                            nits: false,
                            malformed_operators: false,
                            basic_latex: true,
                            equations: true,
                            boxed: BoxedMode::All,
                            units: true,
                        },
                        boxed_match_priority: 0,
                        try_extract_without_anchor: false,
                    }
                    .into(),
                ],
                extraction_mode: ExtractionMode::FirstMatch,
                ..ParseOptions::default()
            },
            verify: VerifyOptions::default(),
            box_gold: false,
        }
    }

    /// verl 0.9.1's `verl.utils.reward_score.math_verify.compute_score` (what `math_metric`
    /// with these targets computes): the gold written into `\boxed{…}` and parsed as LaTeX,
    /// the answer as a plain expression or LaTeX, the default `verify`.
    #[must_use]
    pub fn verl_math_verify() -> Self {
        Self {
            gold: ParseOptions::targets([LatexExtractionConfig::default().into()]),
            answer: ParseOptions::targets([
                ExprExtractionConfig::default().into(),
                LatexExtractionConfig::default().into(),
            ]),
            verify: VerifyOptions::default(),
            box_gold: true,
        }
    }

    /// The same configuration with math-verify's own verdicts ([`Semantics::Parity`]) in its
    /// parses and its comparison.
    #[must_use]
    pub fn parity(mut self) -> Self {
        self.gold.semantics = Semantics::Parity;
        self.answer.semantics = Semantics::Parity;
        self.verify.semantics = Semantics::Parity;
        self
    }
}
