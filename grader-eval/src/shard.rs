//! Which part of a run this process does: [`Shard`], from `"i/n"` or from the environment a
//! scheduler sets ([`Shard::from_env`]): Kubernetes Indexed Jobs, Slurm job arrays, AWS Batch
//! array jobs, or a plain `GRADER_SHARD=i/n`.

use std::str::FromStr;

use crate::error::EvalError;
pub use crate::error::{SHARD_COUNT_VAR, SHARD_VAR, ShardEnvError};

/// Which part of a run this process does: shard `index` of `count` (`index` from 0).
///
/// A sample belongs to the shard `fnv1a64(id) % count`, so every job that is given the same
/// samples (in any order) and its own index grades a disjoint part, and together they grade
/// all. Parsed from `"i/n"`, or read from a scheduler's variables with [`Shard::from_env`].
///
/// ```
/// use grader_eval::Shard;
///
/// let shard: Shard = "1/3".parse()?;
/// assert_eq!(shard, Shard::new(1, 3)?);
/// let owners: Vec<u32> = (0..3).map(|i| Shard::new(i, 3).unwrap())
///     .filter(|s| s.contains("q17")).map(|s| s.index()).collect();
/// assert_eq!(owners.len(), 1);
/// # Ok::<(), grader_eval::EvalError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    index: u32,
    count: u32,
}

impl Shard {
    /// The whole run, unsharded.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Shard `index` of `count`.
    ///
    /// # Errors
    /// [`EvalError::InvalidShard`] unless `index < count`.
    pub fn new(index: u32, count: u32) -> Result<Self, EvalError> {
        if index < count {
            Ok(Shard { index, count })
        } else {
            Err(EvalError::InvalidShard {
                shard: format!("{index}/{count}"),
            })
        }
    }

    /// This shard's index, from 0.
    #[must_use]
    pub fn index(self) -> u32 {
        self.index
    }

    /// How many shards there are.
    #[must_use]
    pub fn count(self) -> u32 {
        self.count
    }

    /// Whether the sample with this id is in this shard.
    #[must_use]
    pub fn contains(self, id: &str) -> bool {
        if self.count == 1 {
            return true;
        }
        // FNV-1a, 64 bits: stable across platforms, versions and processes.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in id.bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        hash % u64::from(self.count) == u64::from(self.index)
    }
}

impl FromStr for Shard {
    type Err = EvalError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || EvalError::InvalidShard {
            shard: text.to_owned(),
        };
        let (index, count) = text.split_once('/').ok_or_else(invalid)?;
        let index = index.trim().parse().map_err(|_| invalid())?;
        let count = count.trim().parse().map_err(|_| invalid())?;
        Shard::new(index, count).map_err(|_| invalid())
    }
}

/// One scheduler's reading: its index variable and what it gives.
struct Found {
    variable: &'static str,
    index: u32,
    count: u32,
}

fn number(
    lookup: &impl Fn(&str) -> Option<String>,
    variable: &'static str,
) -> Result<Option<u32>, ShardEnvError> {
    match lookup(variable) {
        None => Ok(None),
        Some(value) => value
            .trim()
            .parse::<u32>()
            .map(Some)
            .map_err(|_| ShardEnvError::Invalid {
                variable,
                why: "not a whole number".to_owned(),
                value,
            }),
    }
}

fn explicit_count(
    lookup: &impl Fn(&str) -> Option<String>,
    index_variable: &'static str,
    index: u32,
    hint: &'static str,
) -> Result<u32, ShardEnvError> {
    number(lookup, SHARD_COUNT_VAR)?.ok_or_else(|| ShardEnvError::MissingCount {
        index_variable,
        index: index.to_string(),
        hint,
    })
}

/// Slurm: `SLURM_ARRAY_TASK_ID` from `SLURM_ARRAY_TASK_MIN` (0 when unset) to `MAX` in steps
/// of `SLURM_ARRAY_TASK_STEP` (1 when unset): the task's index and, where the variables say it
/// (the bounds, or `SLURM_ARRAY_TASK_COUNT`, which must agree), the number of tasks.
fn slurm(
    lookup: &impl Fn(&str) -> Option<String>,
) -> Result<Option<(u32, Option<u32>)>, ShardEnvError> {
    const ID: &str = "SLURM_ARRAY_TASK_ID";
    let Some(id) = number(lookup, ID)? else {
        return Ok(None);
    };
    let min = number(lookup, "SLURM_ARRAY_TASK_MIN")?;
    let max = number(lookup, "SLURM_ARRAY_TASK_MAX")?;
    let step = number(lookup, "SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
    let given = number(lookup, "SLURM_ARRAY_TASK_COUNT")?;
    let low = min.unwrap_or(0);
    if id < low || max.is_some_and(|max| id > max) || (id - low) % step != 0 {
        let range = match max {
            Some(max) => format!("{low}-{max}:{step}"),
            None => format!("the ids from {low} in steps of {step}"),
        };
        return Err(ShardEnvError::Inconsistent(format!(
            "{ID}={id} is not one of {range}"
        )));
    }
    let count = match (min, max) {
        (Some(min), Some(max)) => {
            let count =
                u32::try_from(u64::from(max - min) / u64::from(step) + 1).map_err(|_| {
                    ShardEnvError::Inconsistent(format!(
                        "a Slurm array of {min}-{max}:{step} is too large"
                    ))
                })?;
            if let Some(given) = given
                && given != count
            {
                return Err(ShardEnvError::Inconsistent(format!(
                    "SLURM_ARRAY_TASK_COUNT={given} but {min}-{max}:{step} has {count} tasks \
                     (an array of ids that are not evenly spaced cannot be sharded by id; use \
                     --array={min}-{max} or GRADER_SHARD)"
                )));
            }
            Some(count)
        }
        _ => given,
    };
    Ok(Some(((id - low) / step, count)))
}

/// Checks that every scheduler's variables that are set agree with `shard`, the explicit
/// `GRADER_SHARD=value`: the same index, and the same count where they say one. A value that
/// is not a number is an error here too.
fn check_against_schedulers(
    lookup: &impl Fn(&str) -> Option<String>,
    value: &str,
    shard: Shard,
) -> Result<(), ShardEnvError> {
    let disagree = |variable: &str, what: &str, theirs: u32| {
        ShardEnvError::Inconsistent(format!(
            "{SHARD_VAR}={value} but {variable} makes this task's {what} {theirs}; leave \
             {SHARD_VAR} unset in an array job, or set it per task"
        ))
    };
    if let Some(count) = number(lookup, SHARD_COUNT_VAR)?
        && count != shard.count()
    {
        return Err(disagree(SHARD_COUNT_VAR, "number of shards", count));
    }
    for variable in ["JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX"] {
        if let Some(index) = number(lookup, variable)?
            && index != shard.index()
        {
            return Err(disagree(variable, "index", index));
        }
    }
    if let Some((index, count)) = slurm(lookup)? {
        if index != shard.index() {
            return Err(disagree("SLURM_ARRAY_TASK_ID", "index", index));
        }
        if let Some(count) = count
            && count != shard.count()
        {
            return Err(disagree("the Slurm array", "number of shards", count));
        }
    }
    Ok(())
}

impl Shard {
    /// The shard this process should do, read from the environment a scheduler sets:
    ///
    /// 1. `GRADER_SHARD=i/n`, when set, wins over everything else (a scheduler's index and
    ///    count, and `GRADER_SHARD_COUNT`, where set too, must agree with it: a fixed value in
    ///    a job template is refused);
    /// 2. Kubernetes Indexed Jobs: `JOB_COMPLETION_INDEX`, with the count from
    ///    `GRADER_SHARD_COUNT` (Kubernetes does not pass `completions` to the pod; set the
    ///    variable to it in the manifest);
    /// 3. Slurm job arrays: `SLURM_ARRAY_TASK_ID` with `SLURM_ARRAY_TASK_MIN`, `MAX` and
    ///    `STEP` (an array `--array=1-16` is shards 0 to 15 of 16), checked against
    ///    `SLURM_ARRAY_TASK_COUNT` and `GRADER_SHARD_COUNT` when set;
    /// 4. AWS Batch array jobs: `AWS_BATCH_JOB_ARRAY_INDEX`, with the count from
    ///    `GRADER_SHARD_COUNT` (the array's `size`).
    ///
    /// Nothing is ever guessed: no variable set, a value that is not a number, an index
    /// outside its count, a missing count, or two schedulers' indexes at once is an error
    /// naming the variables, never a silent "shard 0 of 1". Use
    /// [`Shard::ALL`] yourself where a run outside any scheduler is meant.
    ///
    /// ```
    /// use grader_eval::Shard;
    ///
    /// // In a Kubernetes Indexed Job with `completions: 8` and GRADER_SHARD_COUNT=8:
    /// let vars = [("JOB_COMPLETION_INDEX", "5"), ("GRADER_SHARD_COUNT", "8")];
    /// let lookup = |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string());
    /// assert_eq!(Shard::from_vars(lookup)?, Shard::new(5, 8)?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`ShardEnvError`] as above.
    pub fn from_env() -> Result<Shard, ShardEnvError> {
        Shard::from_vars(|name| std::env::var(name).ok())
    }

    /// [`Shard::from_env`] with the variables read through `lookup` (for tests, or for
    /// settings that come from somewhere else than the process's environment).
    ///
    /// # Errors
    /// [`ShardEnvError`], as [`Shard::from_env`].
    pub fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Result<Shard, ShardEnvError> {
        if let Some(value) = lookup(SHARD_VAR) {
            let shard: Shard = value.parse().map_err(|_| ShardEnvError::Invalid {
                variable: SHARD_VAR,
                value: value.clone(),
                why: "not `i/n` with 0 <= i < n".to_owned(),
            })?;
            // A fixed GRADER_SHARD in a job template would make every task do the same part:
            // a scheduler's settings, where some are set, must agree with it.
            check_against_schedulers(&lookup, &value, shard)?;
            return Ok(shard);
        }
        let mut found: Vec<Found> = Vec::new();
        if let Some(index) = number(&lookup, "JOB_COMPLETION_INDEX")? {
            let count = explicit_count(
                &lookup,
                "JOB_COMPLETION_INDEX",
                index,
                "the Job's spec.completions",
            )?;
            found.push(Found {
                variable: "JOB_COMPLETION_INDEX",
                index,
                count,
            });
        }
        if let Some((index, count)) = slurm(&lookup)? {
            let variable = "SLURM_ARRAY_TASK_ID";
            let count = count.ok_or_else(|| ShardEnvError::Invalid {
                variable,
                value: lookup(variable).unwrap_or_default(),
                why: "set without SLURM_ARRAY_TASK_MIN/MAX or COUNT, which Slurm sets for \
                      every array job: set GRADER_SHARD=i/n to say the shard"
                    .to_owned(),
            })?;
            if let Some(given) = number(&lookup, SHARD_COUNT_VAR)?
                && given != count
            {
                return Err(ShardEnvError::Inconsistent(format!(
                    "{SHARD_COUNT_VAR}={given} but the Slurm array has {count} tasks"
                )));
            }
            found.push(Found {
                variable,
                index,
                count,
            });
        }
        if let Some(index) = number(&lookup, "AWS_BATCH_JOB_ARRAY_INDEX")? {
            let count = explicit_count(
                &lookup,
                "AWS_BATCH_JOB_ARRAY_INDEX",
                index,
                "the array job's size",
            )?;
            found.push(Found {
                variable: "AWS_BATCH_JOB_ARRAY_INDEX",
                index,
                count,
            });
        }
        match found.as_slice() {
            [] => Err(ShardEnvError::NotSet),
            [one] => Shard::new(one.index, one.count).map_err(|_| {
                ShardEnvError::Inconsistent(format!(
                    "{}={} makes shard {} of {}, outside 0..{}",
                    one.variable,
                    lookup(one.variable).unwrap_or_default(),
                    one.index,
                    one.count,
                    one.count
                ))
            }),
            several => Err(ShardEnvError::Inconsistent(format!(
                "several schedulers' indexes are set ({}); set {SHARD_VAR}=i/n to say which",
                several
                    .iter()
                    .map(|f| f.variable)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)]) -> Result<Shard, ShardEnvError> {
        Shard::from_vars(|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    fn shard(index: u32, count: u32) -> Result<Shard, ShardEnvError> {
        Ok(Shard::new(index, count).expect("a shard"))
    }

    #[test]
    fn each_scheduler() {
        assert_eq!(read(&[("GRADER_SHARD", "2/8")]), shard(2, 8));
        assert_eq!(
            read(&[("JOB_COMPLETION_INDEX", "0"), ("GRADER_SHARD_COUNT", "4")]),
            shard(0, 4)
        );
        assert_eq!(
            read(&[
                ("SLURM_ARRAY_TASK_ID", "16"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_MAX", "16"),
                ("SLURM_ARRAY_TASK_COUNT", "16"),
            ]),
            shard(15, 16)
        );
        assert_eq!(
            read(&[
                ("SLURM_ARRAY_TASK_ID", "4"),
                ("SLURM_ARRAY_TASK_MIN", "0"),
                ("SLURM_ARRAY_TASK_MAX", "6"),
                ("SLURM_ARRAY_TASK_STEP", "2"),
            ]),
            shard(2, 4)
        );
        assert_eq!(
            read(&[
                ("AWS_BATCH_JOB_ARRAY_INDEX", "9"),
                ("GRADER_SHARD_COUNT", "10")
            ]),
            shard(9, 10)
        );
        // The explicit setting wins where it agrees with the scheduler's index...
        assert_eq!(
            read(&[("GRADER_SHARD", "1/2"), ("JOB_COMPLETION_INDEX", "1")]),
            shard(1, 2)
        );
        assert_eq!(
            read(&[
                ("GRADER_SHARD", "2/4"),
                ("SLURM_ARRAY_TASK_ID", "3"),
                ("SLURM_ARRAY_TASK_MIN", "1")
            ]),
            shard(2, 4)
        );
        assert_eq!(
            read(&[("GRADER_SHARD", "0/2"), ("SLURM_ARRAY_TASK_ID", "0")]),
            shard(0, 2)
        );
        // ... and is refused where it does not (a fixed value in a job template), in index
        // or in count.
        assert!(matches!(
            read(&[("GRADER_SHARD", "0/4"), ("JOB_COMPLETION_INDEX", "3")]),
            Err(ShardEnvError::Inconsistent(why)) if why.contains("JOB_COMPLETION_INDEX")
        ));
        assert!(matches!(
            read(&[("GRADER_SHARD", "1/2"), ("GRADER_SHARD_COUNT", "4")]),
            Err(ShardEnvError::Inconsistent(why)) if why.contains("GRADER_SHARD_COUNT")
        ));
        assert!(matches!(
            read(&[
                ("GRADER_SHARD", "0/2"),
                ("JOB_COMPLETION_INDEX", "0"),
                ("GRADER_SHARD_COUNT", "4")
            ]),
            Err(ShardEnvError::Inconsistent(why)) if why.contains("GRADER_SHARD_COUNT")
        ));
        assert!(matches!(
            read(&[
                ("GRADER_SHARD", "0/2"),
                ("SLURM_ARRAY_TASK_ID", "0"),
                ("SLURM_ARRAY_TASK_MIN", "0"),
                ("SLURM_ARRAY_TASK_MAX", "3")
            ]),
            Err(ShardEnvError::Inconsistent(why)) if why.contains("Slurm array")
        ));
        assert!(matches!(
            read(&[("GRADER_SHARD", "0/2"), ("SLURM_ARRAY_TASK_ID", "1")]),
            Err(ShardEnvError::Inconsistent(why)) if why.contains("SLURM_ARRAY_TASK_ID")
        ));
        assert!(matches!(
            read(&[("GRADER_SHARD", "0/2"), ("JOB_COMPLETION_INDEX", "abc")]),
            Err(ShardEnvError::Invalid {
                variable: "JOB_COMPLETION_INDEX",
                ..
            })
        ));
    }

    #[test]
    fn slurm_ids_count_from_the_minimum_whichever_bounds_are_set() {
        let slurm = |id: &str, min: &str| {
            read(&[
                ("SLURM_ARRAY_TASK_ID", id),
                ("SLURM_ARRAY_TASK_MIN", min),
                ("SLURM_ARRAY_TASK_COUNT", "4"),
            ])
        };
        assert_eq!(slurm("1", "1"), shard(0, 4));
        assert_eq!(slurm("4", "1"), shard(3, 4));
        assert!(matches!(
            slurm("0", "1"),
            Err(ShardEnvError::Inconsistent(why)) if why.contains("SLURM_ARRAY_TASK_ID=0")
        ));
        assert!(matches!(
            slurm("5", "1"),
            Err(ShardEnvError::Inconsistent(_))
        ));
    }

    #[test]
    fn nothing_is_guessed() {
        assert_eq!(read(&[]), Err(ShardEnvError::NotSet));
        assert!(matches!(
            read(&[("JOB_COMPLETION_INDEX", "3")]),
            Err(ShardEnvError::MissingCount {
                index_variable: "JOB_COMPLETION_INDEX",
                ..
            })
        ));
        assert!(matches!(
            read(&[
                ("AWS_BATCH_JOB_ARRAY_INDEX", "x"),
                ("GRADER_SHARD_COUNT", "2")
            ]),
            Err(ShardEnvError::Invalid {
                variable: "AWS_BATCH_JOB_ARRAY_INDEX",
                ..
            })
        ));
        assert!(matches!(
            read(&[("GRADER_SHARD", "3/3")]),
            Err(ShardEnvError::Invalid {
                variable: "GRADER_SHARD",
                ..
            })
        ));
        let outside = read(&[("JOB_COMPLETION_INDEX", "4"), ("GRADER_SHARD_COUNT", "4")]);
        assert!(
            matches!(&outside, Err(ShardEnvError::Inconsistent(why)) if why.contains("JOB_COMPLETION_INDEX=4")),
            "{outside:?}"
        );
        // Ids 1,3,7 are not evenly spaced: Slurm says 3 tasks, the bounds say 7.
        assert!(matches!(
            read(&[
                ("SLURM_ARRAY_TASK_ID", "3"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_MAX", "7"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
            ]),
            Err(ShardEnvError::Inconsistent(_))
        ));
        assert!(matches!(
            read(&[
                ("SLURM_ARRAY_TASK_ID", "2"),
                ("SLURM_ARRAY_TASK_MIN", "0"),
                ("SLURM_ARRAY_TASK_MAX", "3"),
                ("GRADER_SHARD_COUNT", "8"),
            ]),
            Err(ShardEnvError::Inconsistent(_))
        ));
        assert!(matches!(
            read(&[
                ("JOB_COMPLETION_INDEX", "1"),
                ("AWS_BATCH_JOB_ARRAY_INDEX", "1"),
                ("GRADER_SHARD_COUNT", "2"),
            ]),
            Err(ShardEnvError::Inconsistent(_))
        ));
        assert!(matches!(
            read(&[("SLURM_ARRAY_TASK_ID", "2")]),
            Err(ShardEnvError::Invalid {
                variable: "SLURM_ARRAY_TASK_ID",
                ..
            })
        ));
        assert!(matches!(
            read(&[
                ("SLURM_ARRAY_TASK_ID", "0"),
                ("SLURM_ARRAY_TASK_MIN", "0"),
                ("SLURM_ARRAY_TASK_MAX", "4294967295"),
            ]),
            Err(ShardEnvError::Inconsistent(_))
        ));
    }

    #[test]
    fn shards_parse_strictly_and_split_every_id_into_exactly_one() {
        assert_eq!("2/5".parse::<Shard>().ok(), Shard::new(2, 5).ok());
        for bad in ["5/5", "1", "a/3", "1/0", "-1/3", "1/3/4"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        let shards: Vec<Shard> = (0..4).filter_map(|i| Shard::new(i, 4).ok()).collect();
        let mut sizes = [0_usize; 4];
        for i in 0..4000 {
            let id = format!("sample-{i}");
            let owners: Vec<&Shard> = shards.iter().filter(|s| s.contains(&id)).collect();
            assert_eq!(owners.len(), 1, "{id}");
            sizes[owners[0].index() as usize] += 1;
        }
        // A fair split: each shard gets roughly a quarter.
        assert!(sizes.iter().all(|n| (800..1200).contains(n)), "{sizes:?}");
        assert!(Shard::ALL.contains("anything"));
    }
}
