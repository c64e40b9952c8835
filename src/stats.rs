//! Robust statistics of timing samples: median, a distribution-free 95% confidence
//! interval of the median (order statistics of a Binomial(n, ½)), and Tukey-fence outliers.

use statrs::distribution::{Binomial, DiscreteCDF};

/// Summary of one set of samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub median: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub n: usize,
    pub outliers: usize,
}

impl Summary {
    /// Half-width of the confidence interval relative to the median.
    pub fn relative_half_width(&self) -> f64 {
        (self.ci_high - self.ci_low) / 2.0 / self.median
    }
}

fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// The median of samples (any order; the mean of the middle two for an even count), `None`
/// for none.
pub fn median(samples: &[f64]) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    Some(quantile_sorted(&s, 0.5))
}

/// Summarizes samples (any order). Needs at least one sample.
pub fn summarize(samples: &[f64]) -> Summary {
    assert!(!samples.is_empty(), "summarize needs samples");
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let median = quantile_sorted(&s, 0.5);
    // Ranks j < k with P(B ≤ j-1) ≤ 2.5% for B ~ Binomial(n, ½): [s_j, s_k] covers the
    // median with at least 95% probability. Too few samples: the whole range.
    let (ci_low, ci_high) = if n >= 6 {
        let b = Binomial::new(0.5, n as u64).expect("valid binomial");
        let mut j = 0usize;
        while j + 1 < n && b.cdf(j as u64) <= 0.025 {
            j += 1;
        }
        let k = n - 1 - j;
        (s[j.min(k)], s[k.max(j)])
    } else {
        (s[0], s[n - 1])
    };
    let q1 = quantile_sorted(&s, 0.25);
    let q3 = quantile_sorted(&s, 0.75);
    let iqr = q3 - q1;
    let (lo, hi) = (q1 - 1.5 * iqr, q3 + 1.5 * iqr);
    let outliers = s.iter().filter(|&&x| x < lo || x > hi).count();
    Summary {
        median,
        ci_low,
        ci_high,
        n,
        outliers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_interval_of_a_known_set() {
        let samples: Vec<f64> = (1..=101).map(f64::from).collect();
        let s = summarize(&samples);
        assert_eq!(s.median, 51.0);
        assert!(s.ci_low < 51.0 && s.ci_high > 51.0);
        // For n = 101 the 95% order-statistic interval is about ±10 ranks.
        assert!((s.ci_high - s.ci_low - 20.0).abs() <= 2.0, "{s:?}");
        assert_eq!(s.outliers, 0);
    }

    #[test]
    fn outliers_are_counted_not_dropped() {
        let mut samples = vec![10.0; 20];
        samples.push(1000.0);
        let s = summarize(&samples);
        assert_eq!(s.median, 10.0);
        assert_eq!(s.outliers, 1);
        assert_eq!(s.relative_half_width(), 0.0);
    }

    #[test]
    fn tiny_sets_use_the_range() {
        let s = summarize(&[3.0, 1.0, 2.0]);
        assert_eq!((s.median, s.ci_low, s.ci_high), (2.0, 1.0, 3.0));
    }
}
