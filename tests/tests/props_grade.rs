//! Properties of `Grade::from_subscores` and `any`/`all` over random inputs: normalized
//! positive weights sum to 1, names are unique and follow the reference's algorithm, order is
//! kept, the reward is Σ value × weight, and permuting the input moves it by rounding at most.

use std::collections::{HashMap, HashSet};

use grader_core::{Grade, SubScore, all, any};
use proptest::prelude::*;

/// The reference's `_dedupe_subscore_names`, transcribed line by line (quadratic-free only by
/// accident; it is the oracle, not the implementation).
fn reference_dedupe(names: &[String]) -> Vec<String> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for name in names {
        *counts.entry(name).or_default() += 1;
    }
    let reserved: HashSet<&str> = names.iter().map(String::as_str).collect();
    let mut usage: HashMap<&str, usize> = HashMap::new();
    let mut used: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    for name in names {
        let final_name = if counts[name.as_str()] == 1 && !used.contains(name) {
            name.clone()
        } else {
            let mut suffix = usage.get(name.as_str()).copied().unwrap_or(0);
            loop {
                suffix += 1;
                let candidate = format!("{name}-{suffix}");
                if used.contains(&candidate) || reserved.contains(candidate.as_str()) {
                    continue;
                }
                usage.insert(name, suffix);
                break candidate;
            }
        };
        used.insert(final_name.clone());
        out.push(final_name);
    }
    out
}

/// Names drawn from a small set so that collisions with suffixes are common.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec!["a", "a-1", "a-2", "a-1-1", "b", "b-1", "", "-1", "é"])
            .prop_map(str::to_owned),
        1 => "[ab]{0,2}(-[0-3]){0,2}",
    ]
}

fn weight() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => 1e-6..100.0_f64,
        1 => Just(0.0),
        2 => -5.0..-1e-6_f64,
    ]
}

fn value() -> impl Strategy<Value = f64> {
    prop_oneof![4 => 0.0..=1.0_f64, 1 => Just(0.0), 1 => Just(1.0), 1 => Just(-0.0)]
}

fn subscores() -> impl Strategy<Value = Vec<SubScore>> {
    prop::collection::vec((name(), value(), weight()), 1..60)
        .prop_filter("at least one positive weight", |items| {
            items.iter().any(|(_, _, w)| *w > 0.0)
        })
        .prop_map(|items| {
            items
                .into_iter()
                .map(|(n, v, w)| {
                    SubScore::new(n, v)
                        .and_then(|s| s.with_weight(w))
                        .expect("valid")
                })
                .collect()
        })
}

fn exact_sum(values: impl IntoIterator<Item = f64>) -> f64 {
    // Sum in order of magnitude with compensation: an independent, accurate oracle.
    let mut values: Vec<f64> = values.into_iter().collect();
    values.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
    let (mut sum, mut carry) = (0.0_f64, 0.0_f64);
    for v in values {
        let y = v - carry;
        let t = sum + y;
        carry = (t - sum) - y;
        sum = t;
    }
    sum
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn normalized_positive_weights_sum_to_one(input in subscores()) {
        let result = Grade::from_subscores(input.clone()).expect("combines");
        let out = result.subscores.as_deref().expect("subscores");
        let positive = exact_sum(out.iter().map(SubScore::weight).filter(|w| *w > 0.0));
        prop_assert!((positive - 1.0).abs() <= 1e-12, "{positive}");
        for (before, after) in input.iter().zip(out) {
            if before.weight() <= 0.0 {
                // Penalties and zeros are kept exactly.
                prop_assert_eq!(before.weight().to_bits(), after.weight().to_bits());
            } else {
                prop_assert!(after.weight() > 0.0 && after.weight() <= 1.0);
            }
        }
    }

    #[test]
    fn names_are_unique_and_follow_the_reference(input in subscores()) {
        let result = Grade::from_subscores(input.clone()).expect("combines");
        let out: Vec<String> = result
            .subscores
            .as_deref()
            .expect("subscores")
            .iter()
            .map(|s| s.name().to_owned())
            .collect();
        let unique: HashSet<&String> = out.iter().collect();
        prop_assert_eq!(unique.len(), out.len());
        let input_names: Vec<String> = input.iter().map(|s| s.name().to_owned()).collect();
        prop_assert_eq!(&out, &reference_dedupe(&input_names));
    }

    #[test]
    fn order_values_info_and_children_are_kept(input in subscores()) {
        let result = Grade::from_subscores(input.clone()).expect("combines");
        let out = result.subscores.as_deref().expect("subscores");
        prop_assert_eq!(out.len(), input.len());
        for (before, after) in input.iter().zip(out) {
            prop_assert_eq!(before.value().to_bits(), after.value().to_bits());
            prop_assert_eq!(before.info(), after.info());
            prop_assert_eq!(before.children(), after.children());
            prop_assert!(after.name().starts_with(before.name()));
        }
        prop_assert!(result.done);
        prop_assert!(!result.is_error);
    }

    #[test]
    fn reward_is_the_sum_of_value_times_weight(input in subscores()) {
        let result = Grade::from_subscores(input).expect("combines");
        let out = result.subscores.as_deref().expect("subscores");
        let expected = exact_sum(out.iter().map(|s| s.value() * s.weight()));
        let scale = 1.0 + out.iter().map(|s| (s.value() * s.weight()).abs()).sum::<f64>();
        prop_assert!((result.reward() - expected).abs() <= 1e-14 * scale,
            "{} vs {expected}", result.reward());
        if out.iter().all(|s| s.weight() >= 0.0) {
            prop_assert!((0.0..=1.0 + 1e-12).contains(&result.reward()), "{}", result.reward());
        }
    }

    #[test]
    fn permuting_the_input_changes_the_reward_by_rounding_at_most(
        (input, shuffled) in subscores().prop_flat_map(|input| {
            let shuffled = Just(input.clone()).prop_shuffle();
            (Just(input), shuffled)
        })
    ) {
        let a = Grade::from_subscores(input).expect("combines");
        let b = Grade::from_subscores(shuffled).expect("combines");
        let scale = 1.0 + a
            .subscores
            .as_deref()
            .expect("subscores")
            .iter()
            .map(|s| (s.value() * s.weight()).abs())
            .sum::<f64>();
        prop_assert!((a.reward() - b.reward()).abs() <= 1e-14 * scale, "{} vs {}", a.reward(), b.reward());
    }

    #[test]
    fn any_is_max_and_all_is_min_with_deduplicated_children(input in subscores()) {
        let max = input.iter().map(SubScore::value).fold(f64::NEG_INFINITY, f64::max);
        let min = input.iter().map(SubScore::value).fold(f64::INFINITY, f64::min);
        let input_names: Vec<String> = input.iter().map(|s| s.name().to_owned()).collect();
        let expected_names = reference_dedupe(&input_names);
        let any_node = any("any", input.clone()).grade(0.5).now().expect("any");
        let all_node = all("all", input.clone()).grade(-0.5).now().expect("all");
        prop_assert_eq!(any_node.value(), max);
        prop_assert_eq!(all_node.value(), min);
        prop_assert_eq!(all_node.weight(), -0.5);
        for node in [&any_node, &all_node] {
            let children = node.children().expect("children");
            let names: Vec<String> = children.iter().map(|c| c.name().to_owned()).collect();
            prop_assert_eq!(&names, &expected_names);
            for (before, after) in input.iter().zip(children) {
                prop_assert_eq!(before.weight().to_bits(), after.weight().to_bits());
                prop_assert_eq!(before.value().to_bits(), after.value().to_bits());
            }
        }
    }

    #[test]
    fn info_stays_on_each_subscore_and_result_info_stays_empty(input in subscores()) {
        let input: Vec<SubScore> = input
            .into_iter()
            .enumerate()
            .map(|(i, s)| if i % 2 == 0 {
                let mut info = grader_core::Info::new();
                info.insert("index".into(), i.into());
                s.with_info(info)
            } else { s })
            .collect();
        let result = Grade::from_subscores(input).expect("combines");
        let out = result.subscores.as_deref().expect("subscores");
        // R9: the current reference copies nothing into the result's info.
        prop_assert!(result.info.is_empty());
        for (i, s) in out.iter().enumerate() {
            prop_assert_eq!(s.info().is_some(), i % 2 == 0);
            if let Some(info) = s.info() {
                prop_assert_eq!(&info["index"], &serde_json::Value::from(i));
            }
        }
    }
}

#[test]
fn thousands_of_equal_names_follow_the_reference() {
    // Half unique, half duplicated, with reserved suffixes among the unique ones.
    let mut names: Vec<String> = (0..2_000).map(|i| format!("n-{}", i * 2)).collect();
    names.extend(std::iter::repeat_n("n".to_owned(), 2_000));
    let input = names
        .iter()
        .map(|n| SubScore::new(n.clone(), 0.5).expect("valid"));
    let result = Grade::from_subscores(input).expect("combines");
    let out: Vec<String> = result
        .subscores
        .expect("subscores")
        .iter()
        .map(|s| s.name().to_owned())
        .collect();
    assert_eq!(out, reference_dedupe(&names));
    assert_eq!(out[2_000], "n-1");
    assert_eq!(out[3_999], "n-3999");
}
