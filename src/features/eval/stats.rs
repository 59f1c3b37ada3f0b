//! The statistics of comparing two evaluations: pass rates with Wilson score intervals,
//! the paired difference of two pass rates over the same samples (Newcombe's method 10,
//! built from the two Wilson intervals and the correlation of the pairs), the exact
//! McNemar test on the samples that flipped, and Holm's adjustment across checks.

/// z for a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// An interval `[lo, hi]` around an estimate.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Interval {
    /// The estimate.
    pub estimate: f64,
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
}

/// The Wilson score interval of `passed` out of `n` at `z`. With no samples the rate is
/// unknown: estimate 0 and the interval `[0, 1]`.
pub fn wilson(passed: u64, n: u64, z: f64) -> Interval {
    if n == 0 {
        return Interval {
            estimate: 0.0,
            lo: 0.0,
            hi: 1.0,
        };
    }
    let n_f = n as f64;
    let p = passed.min(n) as f64 / n_f;
    let z2 = z * z;
    let centre = p + z2 / (2.0 * n_f);
    let spread = z * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt();
    let denom = 1.0 + z2 / n_f;
    Interval {
        estimate: p,
        lo: ((centre - spread) / denom).max(0.0),
        hi: ((centre + spread) / denom).min(1.0),
    }
}

/// The outcomes of one check over the samples two evaluations share: how many passed in
/// both, only in the first (`a`), only in the second (`b`), in neither.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Paired {
    /// Passed in both.
    pub both: u64,
    /// Passed in the first only (a regression, if the second is the newer).
    pub first_only: u64,
    /// Passed in the second only (an improvement).
    pub second_only: u64,
    /// Passed in neither.
    pub neither: u64,
}

impl Paired {
    /// Samples counted.
    pub fn n(&self) -> u64 {
        self.both + self.first_only + self.second_only + self.neither
    }

    /// The second's pass rate minus the first's, with Newcombe's method 10 interval at
    /// `z`. With no samples: 0 within `[-1, 1]`.
    pub fn difference(&self, z: f64) -> Interval {
        let n = self.n();
        if n == 0 {
            return Interval {
                estimate: 0.0,
                lo: -1.0,
                hi: 1.0,
            };
        }
        let (a, b, c, d) = (
            self.both as f64,
            self.first_only as f64,
            self.second_only as f64,
            self.neither as f64,
        );
        let first = wilson(self.both + self.first_only, n, z);
        let second = wilson(self.both + self.second_only, n, z);
        let (p1, p2) = (first.estimate, second.estimate);
        let margins = (a + b) * (c + d) * (a + c) * (b + d);
        let phi = if margins > 0.0 {
            (a * d - b * c) / margins.sqrt()
        } else {
            0.0
        };
        let diff = p2 - p1;
        // Distances from each rate to its own limits, combined with the pairs'
        // correlation: the lower limit uses the second's lower and the first's upper.
        let down = {
            let (x, y) = (p2 - second.lo, first.hi - p1);
            (x * x - 2.0 * phi * x * y + y * y).max(0.0).sqrt()
        };
        let up = {
            let (x, y) = (second.hi - p2, p1 - first.lo);
            (x * x - 2.0 * phi * x * y + y * y).max(0.0).sqrt()
        };
        Interval {
            estimate: diff,
            lo: (diff - down).max(-1.0),
            hi: (diff + up).min(1.0),
        }
    }

    /// The exact two-sided McNemar p-value: the samples that flipped, tested against
    /// flipping either way with even odds.
    pub fn mcnemar_p(&self) -> f64 {
        binomial_two_sided(self.first_only, self.first_only + self.second_only)
    }
}

/// Two-sided exact binomial p-value of `k` successes in `n` trials at p = 1/2:
/// twice the smaller tail, at most 1.
pub fn binomial_two_sided(k: u64, n: u64) -> f64 {
    if n == 0 {
        return 1.0;
    }
    let small = k.min(n - k);
    // P(X <= small), summed in log space so that large n does not overflow.
    let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
    let mut ln_choose = 0.0f64; // ln C(n, 0)
    let mut tail = 0.0f64;
    for i in 0..=small {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        tail += (ln_choose + ln_half_n).exp();
    }
    (2.0 * tail).min(1.0)
}

/// Holm's step-down adjustment of p-values (same order as given): each is multiplied by
/// the number of hypotheses not yet passed, and kept at least as large as the one before
/// it in ascending order; at most 1.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut out = vec![0.0; m];
    let mut running = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        let adjusted = ((m - rank) as f64 * p[i]).min(1.0);
        running = running.max(adjusted);
        out[i] = running;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(x: f64, want: f64, tol: f64) -> bool {
        (x - want).abs() <= tol
    }

    #[test]
    fn wilson_intervals_match_the_published_examples() {
        // Newcombe (1998), intervals for a single proportion, the score method.
        for (k, n, lo, hi) in [
            (81, 263, 0.2553, 0.3662),
            (15, 148, 0.0624, 0.1605),
            (0, 20, 0.0, 0.1611),
            (1, 29, 0.0061, 0.1718),
        ] {
            let w = wilson(k, n, Z95);
            assert!(
                close(w.lo, lo, 5e-5) && close(w.hi, hi, 5e-5),
                "{k}/{n}: {w:?}, want {lo}..{hi}"
            );
        }
        assert_eq!(wilson(0, 0, Z95).hi, 1.0, "no samples: nothing is known");
    }

    #[test]
    fn the_exact_mcnemar_p_value_is_twice_the_smaller_binomial_tail() {
        // 5 flipped one way and 1 the other: 2 × (C(6,0) + C(6,1)) / 2^6 = 14/64.
        let t = Paired {
            both: 10,
            first_only: 5,
            second_only: 1,
            neither: 4,
        };
        assert!(close(t.mcnemar_p(), 14.0 / 64.0, 1e-12));
        // Even flips: p = 1; none: p = 1.
        assert_eq!(binomial_two_sided(3, 6), 1.0);
        assert_eq!(binomial_two_sided(0, 0), 1.0);
        // 0 of 10: 2 / 1024.
        assert!(close(binomial_two_sided(0, 10), 2.0 / 1024.0, 1e-15));
        // Large numbers stay finite: 4,000 against 6,000 is far from even.
        let p = binomial_two_sided(4000, 10_000);
        assert!(p > 0.0 && p < 1e-80, "{p}");
    }

    #[test]
    fn holm_multiplies_by_the_hypotheses_left_and_keeps_the_order() {
        let adj = holm(&[0.01, 0.04, 0.03, 0.5]);
        // Ascending: 0.01×4 = 0.04, 0.03×3 = 0.09, 0.04×2 = 0.08 → 0.09, 0.5×1 = 0.5.
        let want = [0.04, 0.09, 0.09, 0.5];
        for (a, w) in adj.iter().zip(want) {
            assert!(close(*a, w, 1e-12), "{adj:?}");
        }
        assert_eq!(holm(&[0.6, 0.7]), vec![1.0, 1.0]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn the_paired_difference_holds_its_estimate_stays_in_range_and_narrows_with_more_samples() {
        let t = Paired {
            both: 40,
            first_only: 3,
            second_only: 9,
            neither: 8,
        };
        let d = t.difference(Z95);
        assert!(close(d.estimate, 6.0 / 60.0, 1e-12));
        assert!(d.lo < d.estimate && d.estimate < d.hi, "{d:?}");
        assert!(d.lo >= -1.0 && d.hi <= 1.0);
        // Swapping the two evaluations mirrors the interval.
        let swapped = Paired {
            first_only: 9,
            second_only: 3,
            ..t
        }
        .difference(Z95);
        assert!(close(swapped.lo, -d.hi, 1e-12) && close(swapped.hi, -d.lo, 1e-12));
        // Ten times the samples in the same proportions: a narrower interval.
        let big = Paired {
            both: 400,
            first_only: 30,
            second_only: 90,
            neither: 80,
        }
        .difference(Z95);
        assert!(big.hi - big.lo < (d.hi - d.lo) / 2.0, "{big:?} vs {d:?}");
        // All passing in both: no difference, and an interval around 0 only as wide as
        // the samples allow.
        let same = Paired {
            both: 100,
            ..Paired::default()
        }
        .difference(Z95);
        assert_eq!(same.estimate, 0.0);
        assert!(same.lo < 0.0 && same.hi > 0.0 && same.hi < 0.05, "{same:?}");
    }

    #[test]
    fn a_paired_difference_is_narrower_than_the_same_rates_taken_apart_when_pairs_agree() {
        // Strongly agreeing pairs (most samples pass or fail in both): the correlation
        // narrows the interval against phi = 0.
        let agreeing = Paired {
            both: 70,
            first_only: 2,
            second_only: 8,
            neither: 20,
        };
        let d = agreeing.difference(Z95);
        let first = wilson(72, 100, Z95);
        let second = wilson(78, 100, Z95);
        let apart_lo = d.estimate
            - ((second.estimate - second.lo).powi(2) + (first.hi - first.estimate).powi(2)).sqrt();
        assert!(d.lo > apart_lo, "{d:?} against {apart_lo}");
    }
}
