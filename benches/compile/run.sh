#!/usr/bin/env bash
# Compile time of #[grader]: a crate of N graders written with the attribute against the same
# crate written by hand, `cargo check` from clean and after touching one file. Both crates are
# generated under target/compile-bench and share one target directory, so dependencies are
# built once and only the crate itself is measured.
#
# Usage: benches/compile/run.sh [N=200] [RUNS=3]
set -euo pipefail

n=${1:-200}
runs=${2:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/target/compile-bench"
files=10
per_file=$(( (n + files - 1) / files ))
mkdir -p "$out"

manifest() {
    cat <<TOML
[package]
name = "$1"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
grader-core = { path = "$root/grader-core" }

[workspace]
TOML
}

# One grader: a few parameter shapes, a body that does a little work.
with_macro() {
    local i=$1
    cat <<RS
/// Grader number $i.
#[grader]
pub fn check_$i(answer: &str, expected: &[&str], limit: u32) -> f64 {
    let hits = expected.iter().filter(|w| answer.contains(*w)).count();
    if answer.len() > limit as usize { 0.0 } else { hits as f64 / expected.len().max(1) as f64 }
}

RS
}

by_hand() {
    local i=$1
    cat <<RS
/// Grader number $i.
pub fn check_$i(answer: &str, expected: &[&str], limit: u32) -> f64 {
    let hits = expected.iter().filter(|w| answer.contains(*w)).count();
    if answer.len() > limit as usize { 0.0 } else { hits as f64 / expected.len().max(1) as f64 }
}

/// The grader of \`check_$i\`.
pub struct Check$i<'answer, 'expected, 'expected2> {
    /// The answer.
    pub answer: &'answer str,
    /// The expected words.
    pub expected: &'expected [&'expected2 str],
    /// The length limit.
    pub limit: u32,
}

impl Check$i<'_, '_, '_> {
    /// Grades.
    ///
    /// # Errors
    /// When the grade fails.
    pub fn grade(self, weight: f64) -> Result<SubScore, GraderError> {
        self.grade_named(weight, "check_$i")
    }

    /// Grades under another name.
    ///
    /// # Errors
    /// When the grade fails.
    pub fn grade_named(self, weight: f64, name: impl Into<String>) -> Result<SubScore, GraderError> {
        let name = name.into();
        let parameters = self.parameters();
        let mut info = Info::new();
        info.insert("_parameters".into(), parameters.clone().into());
        let value = check_$i(self.answer, self.expected, self.limit);
        let fail = |failure| GraderError {
            grader: name.clone(),
            weight,
            parameters: Box::new(parameters.clone()),
            failure,
        };
        let sub = SubScore::new(name.clone(), value).map_err(|_| fail(Failure::InvalidScore { value }))?;
        let sub = sub.with_weight(weight).map_err(|_| fail(Failure::InvalidWeight { weight }))?;
        Ok(sub.with_info(info))
    }
}

impl Grader for Check$i<'_, '_, '_> {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed("check_$i")
    }

    fn parameters(&self) -> Info {
        let mut parameters = Info::with_capacity(3);
        parameters.insert("answer".into(), json_safe(self.answer, "str"));
        parameters.insert("expected".into(), json_safe(self.expected, "[&str]"));
        parameters.insert("limit".into(), json_safe(&self.limit, "u32"));
        parameters
    }

    async fn score(self) -> Result<Score, Failure> {
        Ok(Score::from(check_$i(self.answer, self.expected, self.limit)))
    }
}

RS
}

generate() {
    local name=$1 kind=$2 dir="$out/$1"
    rm -rf "$dir/src"
    mkdir -p "$dir/src"
    manifest "$name" >"$dir/Cargo.toml"
    {
        echo '//! Generated graders.'
        echo '#![allow(missing_docs, clippy::all)]'
        for f in $(seq 0 $((files - 1))); do echo "pub mod m$f;"; done
    } >"$dir/src/lib.rs"
    for f in $(seq 0 $((files - 1))); do
        {
            if [ "$kind" = macro ]; then
                echo 'use grader_core::grader;'
            else
                echo 'use std::borrow::Cow;'
                echo 'use grader_core::{Failure, Grader, GraderError, Info, Score, SubScore};'
                echo 'use grader_core::params::json_safe;'
            fi
            for k in $(seq 0 $((per_file - 1))); do
                i=$((f * per_file + k))
                [ "$i" -lt "$n" ] || break
                if [ "$kind" = macro ]; then with_macro "$i"; else by_hand "$i"; fi
            done
        } >"$dir/src/m$f.rs"
    done
}

generate graders_macro macro
generate graders_hand hand
export CARGO_TARGET_DIR="$out/target"

seconds() { # runs a command, prints its wall time in seconds
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || echo "failed: $*" >&2
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Dependencies once, for both.
for name in graders_macro graders_hand; do
    cargo check -q --manifest-path "$out/$name/Cargo.toml"
done

declare -A clean touched
for name in graders_macro graders_hand; do
    clean[$name]=$(for _ in $(seq "$runs"); do
        cargo clean -q -p "$name" --manifest-path "$out/$name/Cargo.toml"
        seconds cargo check --manifest-path "$out/$name/Cargo.toml"
    done | median)
    touched[$name]=$(for _ in $(seq "$runs"); do
        touch "$out/$name/src/m0.rs"
        seconds cargo check --manifest-path "$out/$name/Cargo.toml"
    done | median)
done

printf '%s graders, median of %s runs of `cargo check`\n' "$n" "$runs"
printf '%-14s %10s %10s\n' "" "clean (s)" "touch (s)"
for name in graders_macro graders_hand; do
    printf '%-14s %10.2f %10.2f\n' "$name" "${clean[$name]}" "${touched[$name]}"
done
printf '%-14s %10.2f %10.2f\n' "ratio" \
    "$(echo "${clean[graders_macro]} / ${clean[graders_hand]}" | bc -l)" \
    "$(echo "${touched[graders_macro]} / ${touched[graders_hand]}" | bc -l)"
