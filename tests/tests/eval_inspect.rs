//! Every metric and reducer of `grader_eval::metrics` against Inspect AI itself, installed
//! from PyPI into a virtual environment under the target directory, on seeded random score
//! sets: binary, continuous, with penalties below 0, of sizes 1, 2 and 1 000.
//!
//! Deterministic formulas must agree within 1e-12. The bootstrap resamples with numpy's global
//! random state there and seeded ChaCha8 here, so it is compared statistically.

use grader_eval::metrics;
use grader_tests::python::{inspect_python, run_script};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

const TOLERANCE: f64 = 1e-12;

/// Computes every metric and reducer for each set with Inspect AI; NaN becomes null.
const SCRIPT: &str = r#"
import json, math, sys
import numpy as np
from inspect_ai.scorer import SampleScore, Score
from inspect_ai.scorer._metrics import mean, var, std, stderr, bootstrap_stderr, ci, ci_wilson
from inspect_ai.scorer._reducer.reducer import (
    mean_score, median_score, mode_score, max_score, majority_score, at_least, pass_at, pass_k)

def clean(x):
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    x = float(x)
    return None if math.isnan(x) else x

np.random.seed(12345)
out = []
for case in json.load(sys.stdin):
    values, threshold = case["values"], case["threshold"]
    samples = [SampleScore(score=Score(value=v), sample_id=i) for i, v in enumerate(values)]
    scores = [Score(value=v) for v in values]
    r = {}
    for name, metric in [("mean", mean()), ("var", var()), ("std", std()), ("stderr", stderr()),
                         ("ci_t_95", ci(level=0.95)), ("ci_t_80", ci(level=0.8)),
                         ("bootstrap_stderr", bootstrap_stderr(num_samples=4000)),
                         ("ci_bootstrap", ci(level=0.9, method="bootstrap", num_samples=4000))]:
        r[name] = clean(metric(samples))
    try:
        r["ci_wilson_95"] = clean(ci_wilson(level=0.95)(samples))
        r["ci_wilson_99"] = clean(ci_wilson(level=0.99)(samples))
    except ValueError:
        r["ci_wilson_95"] = r["ci_wilson_99"] = "error"
    reducers = [("mean", mean_score()), ("median", median_score()), ("mode", mode_score()),
                ("max", max_score()), ("majority", majority_score())]
    for k in (1, 2, 3, 5):
        reducers += [(f"at_least_{k}", at_least(k, value=threshold)),
                     (f"pass_at_{k}", pass_at(k, value=threshold)),
                     (f"pass_k_{k}", pass_k(k, value=threshold))]
    for name, reducer in reducers:
        r["reduce_" + name] = clean(reducer(scores).value)
    out.append(r)
print(json.dumps(out))
"#;

struct Case {
    label: String,
    values: Vec<f64>,
    threshold: f64,
}

fn cases() -> Vec<Case> {
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let mut cases = Vec::new();
    for n in [1_usize, 2, 3, 7, 1000] {
        for round in 0..3 {
            let binary: Vec<f64> = (0..n)
                .map(|_| if rng.random_bool(0.6) { 1.0 } else { 0.0 })
                .collect();
            // Continuous rewards, some repeated so that mode and majority have something to do.
            let continuous: Vec<f64> = (0..n)
                .map(|_| {
                    if rng.random_bool(0.3) {
                        0.5
                    } else {
                        rng.random::<f64>()
                    }
                })
                .collect();
            let penalized: Vec<f64> = (0..n).map(|_| rng.random::<f64>() * 1.6 - 0.6).collect();
            cases.push(Case {
                label: format!("binary n={n} #{round}"),
                values: binary,
                threshold: 1.0,
            });
            cases.push(Case {
                label: format!("continuous n={n} #{round}"),
                values: continuous,
                threshold: 0.5,
            });
            cases.push(Case {
                label: format!("penalized n={n} #{round}"),
                values: penalized,
                threshold: 0.25,
            });
        }
    }
    cases
}

fn close(label: &str, what: &str, ours: f64, theirs: &Value) {
    let theirs = theirs
        .as_f64()
        .unwrap_or_else(|| panic!("{label} {what}: Inspect AI gave {theirs}"));
    assert!(
        (ours - theirs).abs() <= TOLERANCE,
        "{label} {what}: ours {ours:e}, Inspect AI {theirs:e}"
    );
}

fn close_option(label: &str, what: &str, ours: Option<f64>, theirs: &Value) {
    match ours {
        Some(ours) => close(label, what, ours, theirs),
        None => assert!(
            theirs.is_null(),
            "{label} {what}: ours undefined, Inspect AI {theirs}"
        ),
    }
}

fn close_interval(label: &str, what: &str, ours: metrics::Interval, theirs: &Value) {
    close(
        label,
        &format!("{what}.lower"),
        ours.lower,
        &theirs["lower"],
    );
    close(
        label,
        &format!("{what}.upper"),
        ours.upper,
        &theirs["upper"],
    );
}

#[test]
fn metrics_and_reducers_match_inspect_ai() {
    let Some(python) = inspect_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let cases = cases();
    let input: Vec<Value> = cases
        .iter()
        .map(|c| json!({"values": c.values, "threshold": c.threshold}))
        .collect();
    let output = run_script(&python, SCRIPT, &Value::from(input).to_string());
    let results: Vec<Value> = serde_json::from_str(&output).expect("Inspect AI's JSON");
    assert_eq!(results.len(), cases.len());

    for (case, theirs) in cases.iter().zip(&results) {
        let (label, values, threshold) = (&case.label, &case.values[..], case.threshold);
        close(label, "mean", metrics::mean(values), &theirs["mean"]);
        close(label, "var", metrics::var(values), &theirs["var"]);
        close(label, "std", metrics::std(values), &theirs["std"]);
        close(label, "stderr", metrics::stderr(values), &theirs["stderr"]);
        for (level, key) in [(0.95, "ci_t_95"), (0.8, "ci_t_80")] {
            let ours = metrics::ci_t(values, level).expect("a valid level");
            close_interval(label, key, ours, &theirs[key]);
        }
        for (level, key) in [(0.95, "ci_wilson_95"), (0.99, "ci_wilson_99")] {
            match metrics::ci_wilson(values, level) {
                Ok(ours) => close_interval(label, key, ours, &theirs[key]),
                Err(error) => assert_eq!(
                    theirs[key], "error",
                    "{label} {key}: ours failed ({error}), Inspect AI did not"
                ),
            }
        }

        let mut reducers: Vec<(String, Option<f64>)> = vec![
            ("mean".into(), Some(metrics::mean(values))),
            ("median".into(), metrics::median(values)),
            ("mode".into(), metrics::mode(values)),
            ("max".into(), metrics::max(values)),
            ("majority".into(), metrics::majority(values)),
        ];
        for k in [1_usize, 2, 3, 5] {
            let n = values.len() as u64;
            let c = values.iter().filter(|v| **v >= threshold).count() as u64;
            reducers.push((
                format!("at_least_{k}"),
                metrics::at_least(values, k, threshold),
            ));
            reducers.push((
                format!("pass_at_{k}"),
                metrics::pass_at(values, k, threshold),
            ));
            reducers.push((format!("pass_k_{k}"), metrics::pass_hat_k(n, c, k as u64)));
        }
        for (name, ours) in reducers {
            let key = format!("reduce_{name}");
            close_option(label, &key, ours, &theirs[&key]);
        }

        check_bootstrap(label, values, theirs);
    }
}

/// The bootstrap standard error and percentile interval, within what two independent
/// bootstraps of 4 000 resamples can differ by.
fn check_bootstrap(label: &str, values: &[f64], theirs: &Value) {
    let ours = metrics::bootstrap_stderr(values, 4000, 7);
    let theirs_se = theirs["bootstrap_stderr"].as_f64().expect("a number");
    // The population standard deviation of the data over √n: what both estimate.
    let n = values.len() as f64;
    let expected = (metrics::var(values) * (n - 1.0) / n).sqrt() / n.sqrt();
    if expected == 0.0 {
        // The mean of equal values can be an ulp off them, so the spread is 0 up to rounding.
        assert!(
            ours.abs() <= TOLERANCE,
            "{label}: bootstrap of constant data: {ours}"
        );
        assert!(
            theirs_se.abs() <= TOLERANCE,
            "{label}: Inspect AI's bootstrap of constant data: {theirs_se}"
        );
        return;
    }
    // A standard deviation from 4 000 resamples is within about 1.1 % of its expectation
    // (one standard error); allow 6 %.
    for (who, se) in [("ours", ours), ("Inspect AI", theirs_se)] {
        assert!(
            (se / expected - 1.0).abs() < 0.06,
            "{label}: {who} bootstrap stderr {se} vs expected {expected}"
        );
    }
    let interval = metrics::ci_bootstrap(values, 0.9, 4000, 7).expect("a valid level");
    for (bound, ours) in [("lower", interval.lower), ("upper", interval.upper)] {
        let theirs = theirs["ci_bootstrap"][bound].as_f64().expect("a number");
        assert!(
            (ours - theirs).abs() < 0.25 * expected + 1e-12,
            "{label}: bootstrap CI {bound}: ours {ours}, Inspect AI {theirs} (se {expected})"
        );
    }
}

/// The functions Inspect AI has beside its headline metrics, on Inspect AI's own inputs:
/// `value_to_float` (default and custom sentinels), `stderr(cluster=…)`, `ci(cluster=…)`, the
/// `collect` and `majority` reducers with unscored epochs, and a bootstrap interval over values
/// holding NaN.
const MORE_SCRIPT: &str = r#"
import json, logging, math, sys
import numpy as np
from inspect_ai.scorer import SampleScore, Score
from inspect_ai.scorer._metric import value_to_float
from inspect_ai.scorer._metrics import stderr, ci
from inspect_ai.scorer._reducer.reducer import (
    collect_score, majority_score, mean_score, median_score, mode_score, max_score, at_least, pass_at)

warned = []
class Catch(logging.Handler):
    def emit(self, record):
        warned.append(record.getMessage())
logging.getLogger("inspect_ai").addHandler(Catch())
logging.getLogger("inspect_ai").setLevel(logging.WARNING)

def clean(x):
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [clean(v) for v in x]
    x = float(x)
    return None if math.isnan(x) else x

job = json.load(sys.stdin)
out = {"convert": [], "clusters": [], "epochs": []}
for case in job["convert"]:
    to_float = value_to_float(**case["sentinels"])
    row = []
    for value in case["values"]:
        warned.clear()
        result = to_float(value)
        row.append({"value": result, "warned": bool(warned)})
    out["convert"].append(row)
for case in job["clusters"]:
    samples = [SampleScore(score=Score(value=v), sample_id=i, sample_metadata={"g": g})
               for i, (g, v) in enumerate(case)]
    out["clusters"].append({
        "stderr": clean(stderr(cluster="g")(samples)),
        "ci_t": clean(ci(level=0.9, cluster="g")(samples)),
    })
np.random.seed(7)
for values in job["epochs"]:
    scores = [Score(value=float("nan") if v is None else v) for v in values]
    collected = collect_score()(scores).value
    samples = [SampleScore(score=s, sample_id=i) for i, s in enumerate(scores)]
    out["epochs"].append({
        "collect": None if isinstance(collected, float) else collected,
        "majority": clean(majority_score()(scores).value),
        "reduce_mean": clean(mean_score()(scores).value),
        "reduce_median": clean(median_score()(scores).value),
        "reduce_mode": clean(mode_score()(scores).value),
        "reduce_max": clean(max_score()(scores).value),
        "reduce_at_least_2": clean(at_least(2, value=0.5)(scores).value),
        "reduce_pass_at_2": clean(pass_at(2, value=0.5)(scores).value),
        "ci_bootstrap": clean(ci(level=0.9, method="bootstrap", num_samples=500)(samples)),
    })
print(json.dumps(out))
"#;

fn convert_values() -> Vec<Value> {
    let mut values: Vec<Value> = [
        "C",
        "I",
        "P",
        "N",
        "c",
        "yes",
        "No",
        "TRUE",
        "false",
        " 3.5 ",
        "1_000",
        "1__0",
        "_1",
        "1_",
        "1._5",
        "\u{663}\u{660}",
        "\u{ff11}\u{ff12}",
        "\u{2003}7\u{2003}",
        "1e3",
        "1E-2",
        "1.",
        ".5",
        "+1",
        "-0",
        "1e",
        "e5",
        ".",
        "",
        " ",
        "inf",
        "-Infinity",
        "nan",
        "1e400",
        "0x10",
        "abc",
        "½",
        "²",
        "1,000",
        "A",
        "F",
        "B",
        "-",
    ]
    .iter()
    .map(|s| json!(s))
    .collect();
    values.extend([
        json!(1),
        json!(0),
        json!(2.5),
        json!(-1e300),
        json!(true),
        json!(false),
        json!(null),
        json!([1]),
        json!({"a": 1}),
        json!(9_007_199_254_740_993_u64),
    ]);
    values
}

fn cluster_cases() -> Vec<Vec<(Value, f64)>> {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut cases = vec![
        vec![],
        vec![(json!("a"), 1.0)],
        vec![(json!("a"), 1.0), (json!("a"), 0.0)],
        vec![(json!("a"), 1.0), (json!("b"), 0.0)],
    ];
    for (n, groups) in [(10, 3), (50, 7), (1000, 40), (1000, 1000)] {
        cases.push(
            (0..n)
                .map(|_| {
                    let group = rng.random_range(0..groups);
                    let value = if rng.random_bool(0.5) {
                        f64::from(u8::from(rng.random_bool(0.6)))
                    } else {
                        rng.random::<f64>() * 1.5 - 0.5
                    };
                    (json!(format!("g{group}")), value)
                })
                .collect(),
        );
    }
    // Integer keys, as metadata often holds them.
    cases.push((0..30).map(|i| (json!(i % 4), f64::from(i % 3))).collect());
    cases
}

fn epoch_cases() -> Vec<Vec<Option<f64>>> {
    vec![
        vec![Some(1.0), Some(1.0), Some(0.0)],
        vec![Some(1.0), Some(1.0), None, None],
        vec![Some(1.0), Some(1.0), Some(1.0), None],
        vec![None, None],
        vec![Some(0.5), None, Some(0.25)],
        vec![Some(0.0), Some(0.5), Some(1.0), Some(0.5), None],
    ]
}

#[test]
fn value_to_float_clusters_collect_and_nan_match_inspect_ai() {
    use grader_eval::value::ValueToFloat;

    let Some(python) = inspect_python(env!("CARGO_TARGET_TMPDIR")) else {
        return;
    };
    let converters: Vec<(Value, ValueToFloat)> = vec![
        (json!({}), ValueToFloat::new()),
        (
            json!({"correct": "A", "incorrect": "F", "partial": "B", "noanswer": "-"}),
            ValueToFloat::new()
                .correct("A")
                .incorrect("F")
                .partial("B")
                .noanswer("-"),
        ),
        (
            json!({"correct": 1, "incorrect": 0.0, "partial": 2.5}),
            ValueToFloat::new().correct(1).incorrect(0.0).partial(2.5),
        ),
    ];
    let values = convert_values();
    let clusters = cluster_cases();
    let epochs = epoch_cases();
    let job = json!({
        "convert": converters.iter().map(|(sentinels, _)| json!({"sentinels": sentinels, "values": values})).collect::<Vec<_>>(),
        "clusters": clusters.iter().map(|case| case.iter().map(|(g, v)| json!([g, v])).collect::<Vec<_>>()).collect::<Vec<_>>(),
        "epochs": epochs,
    });
    let output = run_script(&python, MORE_SCRIPT, &job.to_string());
    let theirs: Value = serde_json::from_str(&output).expect("Inspect AI's JSON");

    for ((sentinels, converter), row) in converters
        .iter()
        .zip(theirs["convert"].as_array().expect("rows"))
    {
        for (value, theirs) in values.iter().zip(row.as_array().expect("a row")) {
            let label = format!("value_to_float({sentinels})({value})");
            match converter.convert(value) {
                Ok(ours) => {
                    assert_eq!(
                        theirs["warned"], false,
                        "{label}: ours {ours}, Inspect AI warned"
                    );
                    close(&label, "value", ours, &theirs["value"]);
                }
                Err(error) => {
                    assert_eq!(
                        theirs["warned"], true,
                        "{label}: ours failed ({error}), Inspect AI read {}",
                        theirs["value"]
                    );
                    assert_eq!(error.value, *value);
                }
            }
        }
    }

    for (case, theirs) in clusters
        .iter()
        .zip(theirs["clusters"].as_array().expect("clusters"))
    {
        let label = format!("{} values", case.len());
        let keyed = || case.iter().map(|(g, v)| (g.to_string(), *v));
        close(
            &label,
            "stderr(cluster)",
            metrics::stderr_clustered(keyed()),
            &theirs["stderr"],
        );
        let interval = metrics::ci_t_clustered(keyed(), 0.9).expect("a valid level");
        close_interval(&label, "ci(cluster)", interval, &theirs["ci_t"]);
    }

    for (case, theirs) in epochs
        .iter()
        .zip(theirs["epochs"].as_array().expect("epochs"))
    {
        let label = format!("epochs {case:?}");
        let values: Vec<f64> = case.iter().map(|v| v.unwrap_or(f64::NAN)).collect();
        let collected = metrics::collect(&values);
        assert_eq!(
            collected.map(Value::from).unwrap_or(Value::Null),
            theirs["collect"],
            "{label}: collect"
        );
        close_option(
            &label,
            "majority",
            metrics::majority(&values),
            &theirs["majority"],
        );
        let interval = metrics::ci_bootstrap(&values, 0.9, 500, 7).expect("a valid level");
        if values.iter().any(|v| v.is_nan()) {
            // NaN in, NaN out: both bounds, as numpy's quantiles.
            assert!(
                interval.lower.is_nan() && interval.upper.is_nan(),
                "{label}: {interval:?}"
            );
            assert!(
                theirs["ci_bootstrap"]["lower"].is_null(),
                "{label}: {theirs}"
            );
            assert!(
                theirs["ci_bootstrap"]["upper"].is_null(),
                "{label}: {theirs}"
            );
        } else {
            assert!(interval.lower <= interval.upper, "{label}: {interval:?}");
        }
    }
}
