//! `forge tune --shard i/n`: a deterministic split of the problem list, so that a batch
//! scheduler (a Slurm job array, a Kubernetes indexed Job) can run the shards on many hosts and
//! `forge merge` can put their profiles together.
//!
//! The split depends on the set of problems only, not on their order on the command line or on
//! the host: the problems are sorted and deduplicated, then dealt round-robin. Every problem
//! lands in exactly one shard, and shard sizes differ by at most one.

use crate::problem::Problem;
use std::fmt;
use std::str::FromStr;

/// Shard `index` of `count` (0-based, as `SLURM_ARRAY_TASK_ID` with `--array=0-N` and
/// Kubernetes' `JOB_COMPLETION_INDEX` count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| "expected i/n, e.g. 0/4 (shard i of n, counted from 0)".to_string())?;
        let parse = |what: &str, v: &str| {
            v.trim()
                .parse::<usize>()
                .map_err(|_| format!("{what} {v:?} is not a whole number"))
        };
        let (index, count) = (parse("shard index", i)?, parse("shard count", n)?);
        if count == 0 {
            return Err("the shard count must be at least 1".into());
        }
        if index >= count {
            return Err(format!(
                "shard index {index} is not below the shard count {count} (shards are \
                 counted from 0: 0/{count} … {}/{count})",
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// This shard's problems, in the canonical (sorted) order.
    pub fn select(&self, problems: &[Problem]) -> Vec<Problem> {
        let mut all = problems.to_vec();
        all.sort();
        all.dedup();
        all.into_iter()
            .enumerate()
            .filter(|(i, _)| i % self.count == self.index)
            .map(|(_, p)| p)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::{Dtype, Layout};
    use crate::shape::Shape;

    fn problems(dims: &[u32]) -> Vec<Problem> {
        dims.iter()
            .map(|&d| Problem::new(Dtype::Tf32, Layout::Tn, Shape::new(d, d + 1, d + 2)))
            .collect()
    }

    #[test]
    fn parses_and_refuses_with_one_clear_reason() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        assert_eq!("0/1".parse::<Shard>().unwrap().to_string(), "0/1");
        for (bad, why) in [
            ("4/4", "not below the shard count 4"),
            ("1/0", "at least 1"),
            ("1", "expected i/n"),
            ("a/2", "shard index \"a\""),
            ("1/-2", "shard count \"-2\""),
        ] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn shards_partition_the_set_whatever_the_order() {
        let list = problems(&[512, 4096, 128, 2048, 8192, 1000, 257]);
        let mut reversed = list.clone();
        reversed.reverse();
        reversed.push(list[0]); // a duplicate on the command line
        for count in 1..=8 {
            let mut seen = vec![];
            for index in 0..count {
                let shard = Shard { index, count };
                let mine = shard.select(&list);
                assert_eq!(mine, shard.select(&reversed), "order must not matter");
                let (lo, hi) = (list.len() / count, list.len().div_ceil(count));
                assert!((lo..=hi).contains(&mine.len()), "{shard}: {}", mine.len());
                seen.extend(mine);
            }
            seen.sort();
            let mut expected = list.clone();
            expected.sort();
            assert_eq!(
                seen, expected,
                "every problem in exactly one of {count} shards"
            );
        }
    }
}
