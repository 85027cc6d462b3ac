//! The judge itself: [`LlmJudge`], a [`Grader`], and its run: every call at once, a panel's
//! majority per criterion, and the verdicts combined into the reference's subscore.

use std::borrow::Cow;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use serde_json::Value;
use tokio::time::Instant;

use super::config::{JudgeConfig, endpoint, transport_of};
use super::criterion::Criterion;
use super::error::JudgeError;
use super::request::{Run, Vote};
use super::usage::Totals;
use super::value;
use super::verdict::Verdict;
use crate::error::Failure;
use crate::grader::Grader;
use crate::grading::Grading;
use crate::score::{Info, Score, SubScore};

/// The judge's subscore name, as the reference's.
pub const NAME: &str = "LLMJudgeGrader";
/// The reference's default model.
pub const DEFAULT_MODEL: &str = "claude-sonnet-5-5";

/// The reference's `LLMJudgeGrader`: grades an answer against weighted criteria with an LLM.
///
/// Graded like every [`Grader`]; [`judge`](Self::judge) gives the reference's subscore without
/// `_parameters`. The name is `LLMJudgeGrader`; `_parameters` records `answer`, `criteria`
/// (texts, or `[text, weight]`), `question` and `model` (or `models` for a panel).
///
/// Where it differs: `_parameters` always holds all four inputs, defaults included (a
/// `question` of `""`, the default model). The reference's `Grader.grade(**kwargs)` records
/// the keyword arguments the caller passed, so a call without `question` or `model` records
/// neither there. Both describe the same grading; ours says it whole, so two results compare
/// without knowing the defaults of the version that made them.
#[derive(Debug, Clone)]
pub struct LlmJudge {
    answer: String,
    criteria: Vec<Criterion>,
    question: String,
    models: Vec<String>,
    config: JudgeConfig,
}

impl LlmJudge {
    /// A judge of `answer` against `criteria`, with the reference's defaults.
    #[must_use]
    pub fn new(
        answer: impl Into<String>,
        criteria: impl IntoIterator<Item = impl Into<Criterion>>,
    ) -> Self {
        LlmJudge {
            answer: answer.into(),
            criteria: criteria.into_iter().map(Into::into).collect(),
            question: String::new(),
            models: vec![DEFAULT_MODEL.to_owned()],
            config: JudgeConfig::default(),
        }
    }

    /// The question the answer responds to (sent as `<query>`).
    #[must_use]
    pub fn question(mut self, question: impl Into<String>) -> Self {
        self.question = question.into();
        self
    }

    /// The model to ask (default [`DEFAULT_MODEL`]).
    #[must_use]
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.models = vec![model.into()];
        self
    }

    /// Ask several models and decide each criterion by strict majority: MET when more than
    /// half of the panel says MET, UNMET when more than half says UNMET, otherwise a
    /// [`JudgeError::NoMajority`]. A judge that fails withholds its vote and still counts in the
    /// panel's size. Every vote is recorded in the criterion's info under `votes`.
    #[must_use]
    pub fn panel(mut self, models: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let models: Vec<String> = models.into_iter().map(Into::into).collect();
        if !models.is_empty() {
            self.models = models;
        }
        self
    }

    /// How to reach the model (default [`JudgeConfig::new`]).
    #[must_use]
    pub fn config(mut self, config: JudgeConfig) -> Self {
        self.config = config;
        self
    }

    /// Runs the judge: the reference's `compute_score`, a subscore named `LLMJudgeGrader`
    /// with info `model` and one child per criterion (name = text, weight, value 1 or 0, info
    /// `reason`). No criteria gives value 0 with info `error: "no criteria provided"`.
    ///
    /// # Errors
    /// A [`JudgeError`] naming the criterion when one cannot be judged (unless
    /// [`lenient`](JudgeConfig::lenient), where only all failing is an error).
    pub async fn judge(self) -> Result<SubScore, JudgeError> {
        run(self).await
    }

    /// The grading of this judge at `weight`: [`Grader::grade`], callable without importing
    /// the trait (the [module's example](crate::judge) grades this way). Await it, or add it to a
    /// gather or a tree.
    pub fn grade<'a>(self, weight: f64) -> Grading<'a, Self> {
        Grading::new(self, weight)
    }
}

impl Grader for LlmJudge {
    fn name(&self) -> Cow<'_, str> {
        NAME.into()
    }

    fn parameters(&self) -> Info {
        let mut params = Info::new();
        params.insert("answer".into(), self.answer.clone().into());
        params.insert(
            "criteria".into(),
            self.criteria.iter().map(Criterion::recorded).collect(),
        );
        params.insert("question".into(), self.question.clone().into());
        if let [model] = self.models.as_slice() {
            params.insert("model".into(), model.clone().into());
        } else {
            params.insert("models".into(), self.models.clone().into());
        }
        params
    }

    async fn score(self) -> Result<Score, Failure> {
        let sub = run(self).await?;
        Ok(Score::from(sub))
    }
}

impl From<JudgeError> for Failure {
    fn from(error: JudgeError) -> Self {
        Failure::Judge(Box::new(error))
    }
}

/// Each model's vote on one criterion, in panel order.
type Votes = Vec<(String, Result<Vote, JudgeError>)>;

/// The criterion's outcome under a panel: the strict majority of its votes.
fn decide(criterion: &Criterion, votes: Votes) -> (Result<Verdict, JudgeError>, Votes) {
    let judges = votes.len();
    if judges == 1 {
        let outcome = votes[0].1.clone().map(|vote| vote.verdict);
        return (outcome, votes);
    }
    let met = votes
        .iter()
        .filter(|(_, v)| v.as_ref().is_ok_and(|v| v.verdict.met))
        .count();
    let unmet = votes
        .iter()
        .filter(|(_, v)| v.as_ref().is_ok_and(|v| !v.verdict.met))
        .count();
    let outcome = if 2 * met > judges || 2 * unmet > judges {
        let met_wins = 2 * met > judges;
        let reason = votes
            .iter()
            .find_map(|(_, v)| v.as_ref().ok().filter(|v| v.verdict.met == met_wins))
            .map(|v| v.verdict.reason.clone())
            .unwrap_or_default();
        Ok(Verdict {
            met: met_wins,
            reason,
        })
    } else {
        Err(JudgeError::NoMajority {
            criterion: criterion.requirement.clone(),
            judges,
            met,
            unmet,
            failed: judges - met - unmet,
        })
    };
    (outcome, votes)
}

async fn run(judge: LlmJudge) -> Result<SubScore, JudgeError> {
    let started = Instant::now();
    let LlmJudge {
        answer,
        criteria,
        question,
        models,
        config,
    } = judge;
    if criteria.is_empty() {
        let mut info = Info::new();
        info.insert("error".into(), "no criteria provided".into());
        return Ok(SubScore::from_valid_parts(
            NAME.to_owned(),
            1.0,
            0.0,
            None,
            Some(info),
        ));
    }
    if let Some(bad) = criteria.iter().find(|c| !c.weight.is_finite()) {
        return Err(JudgeError::InvalidWeight {
            criterion: bad.requirement.clone(),
            weight: bad.weight,
        });
    }
    let settings = &*config.inner;
    let (url, key) = endpoint(settings)?;
    let mut headers = vec![
        ("authorization".to_owned(), format!("Bearer {key}")),
        ("content-type".to_owned(), "application/json".to_owned()),
    ];
    headers.extend(settings.headers.iter().cloned());
    let run = Run {
        settings,
        transport: transport_of(settings)?,
        url,
        headers,
        answer: &answer,
        question: &question,
        criteria: &criteria,
        deadline: settings.deadline.map(|d| (started + d, d)),
    };

    // Every (chunk, model) call at once; results land per criterion, per model.
    let indices: Vec<usize> = (0..criteria.len()).collect();
    let chunks: Vec<&[usize]> = indices.chunks(settings.batch).collect();
    let run = &run;
    let mut calls: FuturesUnordered<_> = chunks
        .iter()
        .flat_map(|&chunk| {
            models
                .iter()
                .enumerate()
                .map(move |(m, model)| async move { (chunk, m, run.votes(chunk, model).await) })
        })
        .collect();
    let mut votes: Vec<Vec<Option<Result<Vote, JudgeError>>>> =
        vec![vec![None; models.len()]; criteria.len()];
    // Strict with one model: the first failure is the judge's error, once every call has
    // ended, as the reference lets its other calls finish (so both send the same requests).
    let strict = !settings.lenient && models.len() == 1;
    let mut first_failure = None;
    while let Some((chunk, m, outcomes)) = calls.next().await {
        for (&i, outcome) in chunk.iter().zip(outcomes) {
            if strict
                && first_failure.is_none()
                && let Err(error) = &outcome
            {
                first_failure = Some(error.clone());
            }
            votes[i][m] = Some(outcome);
        }
    }
    drop(calls);
    if let Some(error) = first_failure {
        return Err(error);
    }

    let mut children = Vec::with_capacity(criteria.len());
    let mut errors = Vec::new();
    let mut totals = Totals::default();
    for (criterion, criterion_votes) in criteria.iter().zip(votes) {
        let criterion_votes: Votes = models
            .iter()
            .cloned()
            .zip(criterion_votes.into_iter().map(|v| {
                v.unwrap_or_else(|| {
                    Err(JudgeError::Malformed {
                        criterion: criterion.requirement.clone(),
                        model: String::new(),
                        reason: "no reply was recorded".into(),
                        body: String::new(),
                    })
                })
            }))
            .collect();
        let (outcome, criterion_votes) = decide(criterion, criterion_votes);
        let mut info = Info::new();
        let value = match outcome {
            Ok(verdict) => {
                info.insert("reason".into(), verdict.reason.into());
                if verdict.met { 1.0 } else { 0.0 }
            }
            Err(error) => {
                if !settings.lenient {
                    return Err(error);
                }
                info.insert("error".into(), error.to_string().into());
                errors.push(error);
                // A failure never helps the agent: a penalty counts as made, the rest as unmet.
                if criterion.weight < 0.0 { 1.0 } else { 0.0 }
            }
        };
        totals.record(settings, &criterion_votes, models.len(), &mut info);
        children.push(SubScore::from_valid_parts(
            criterion.requirement.clone(),
            criterion.weight,
            value,
            None,
            Some(info),
        ));
    }
    if errors.len() == criteria.len() {
        return Err(errors.swap_remove(0));
    }
    let value = value::rubric_value(children.iter().map(|c| (c.value(), c.weight())));
    let mut info = Info::new();
    if let [model] = models.as_slice() {
        info.insert("model".into(), model.clone().into());
    } else {
        info.insert("models".into(), models.clone().into());
    }
    if !errors.is_empty() {
        info.insert("failed_criteria".into(), errors.len().into());
        info.insert(
            "errors".into(),
            errors
                .iter()
                .map(|e| Value::String(e.to_string()))
                .collect(),
        );
    }
    totals.finish(settings, &mut info);
    Ok(SubScore::from_valid_parts(
        NAME.to_owned(),
        1.0,
        value,
        Some(children),
        Some(info),
    ))
}
