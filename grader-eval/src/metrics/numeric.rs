//! The numerical tools under the metrics: the quantiles of the standard normal and Student-t
//! distributions (by bisection on their CDFs, the t's through the regularized incomplete beta
//! function), for the confidence intervals; and double-double arithmetic, for pass@k's
//! products of ratios.

/// The standard normal quantile, by bisection on `Φ(x) = erfc(−x/√2) / 2`.
pub(super) fn normal_quantile(p: f64) -> f64 {
    let cdf = |x: f64| 0.5 * libm::erfc(-x / std::f64::consts::SQRT_2);
    bisect(cdf, p, -40.0, 40.0)
}

/// The Student-t quantile with `df` degrees of freedom for `p` in `(0, 1)`.
pub(super) fn student_t_quantile(p: f64, df: f64) -> f64 {
    if p == 0.5 {
        return 0.0;
    }
    if p < 0.5 {
        return -student_t_quantile(1.0 - p, df);
    }
    // For t ≥ 0: F(t) = 1 − I_x(df/2, 1/2) / 2 with x = df / (df + t²).
    let cdf = |t: f64| 1.0 - 0.5 * regularized_incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    let mut high = 1.0;
    while cdf(high) < p && high < 1e300 {
        high *= 2.0;
    }
    bisect(cdf, p, 0.0, high)
}

/// Bisects a increasing function `cdf` for `cdf(x) = p` on `[low, high]` until the interval
/// cannot shrink.
fn bisect(cdf: impl Fn(f64) -> f64, p: f64, mut low: f64, mut high: f64) -> f64 {
    for _ in 0..2000 {
        let mid = low + (high - low) / 2.0;
        if mid <= low || mid >= high {
            break;
        }
        if cdf(mid) < p {
            low = mid;
        } else {
            high = mid;
        }
    }
    low + (high - low) / 2.0
}

/// `I_x(a, b)`, by its continued fraction (evaluated with the modified Lentz method) on the
/// side of the symmetry `I_x(a, b) = 1 − I_{1−x}(b, a)` where it converges quickly.
fn regularized_incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let log_front =
        libm::lgamma(a + b) - libm::lgamma(a) - libm::lgamma(b) + a * x.ln() + b * (-x).ln_1p();
    let front = log_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction `1 / (1 + d₁ / (1 + d₂ / (1 + …)))` of the incomplete beta function,
/// with `d₂ₘ₊₁ = −(a + m)(a + b + m)x / ((a + 2m)(a + 2m + 1))` and
/// `d₂ₘ = m(b − m)x / ((a + 2m − 1)(a + 2m))`.
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let nonzero = |v: f64| if v.abs() < TINY { TINY } else { v };
    // Lentz: f = C·D products; start with the term before d₁.
    let mut c = 1.0;
    let mut d = 1.0 / nonzero(1.0 - (a + b) * x / (a + 1.0));
    let mut f = d;
    for m in 1..=10_000 {
        let m = f64::from(m);
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 / nonzero(1.0 + even * d);
        c = nonzero(1.0 + even / c);
        f *= c * d;
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 / nonzero(1.0 + odd * d);
        c = nonzero(1.0 + odd / c);
        let step = c * d;
        f *= step;
        if (step - 1.0).abs() < 1e-16 {
            break;
        }
    }
    f
}

/// An unevaluated sum `hi + lo` carrying about 106 bits.
#[derive(Clone, Copy)]
pub(super) struct DoubleDouble {
    hi: f64,
    lo: f64,
}

impl DoubleDouble {
    pub(super) const ONE: DoubleDouble = DoubleDouble { hi: 1.0, lo: 0.0 };

    fn two_sum(a: f64, b: f64) -> DoubleDouble {
        let s = a + b;
        let bb = s - a;
        DoubleDouble {
            hi: s,
            lo: (a - (s - bb)) + (b - bb),
        }
    }

    fn normalize(hi: f64, lo: f64) -> DoubleDouble {
        let s = hi + lo;
        DoubleDouble {
            hi: s,
            lo: lo - (s - hi),
        }
    }

    pub(super) fn mul(self, other: DoubleDouble) -> DoubleDouble {
        let p = self.hi * other.hi;
        let error = self.hi.mul_add(other.hi, -p);
        let lo = error + (self.hi * other.lo + self.lo * other.hi);
        DoubleDouble::normalize(p, lo)
    }

    /// `a / b` for exact doubles `a` and `b`.
    pub(super) fn div(a: f64, b: f64) -> DoubleDouble {
        let q = a / b;
        // The remainder a − q·b is exact with a fused multiply-add.
        let remainder = (-q).mul_add(b, a);
        DoubleDouble::normalize(q, remainder / b)
    }

    pub(super) fn sub(self, other: DoubleDouble) -> DoubleDouble {
        let s = DoubleDouble::two_sum(self.hi, -other.hi);
        DoubleDouble::normalize(s.hi, s.lo + (self.lo - other.lo))
    }

    pub(super) fn to_f64(self) -> f64 {
        self.hi + self.lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_known_values() {
        assert!((normal_quantile(0.025) + 1.959_963_984_540_054).abs() < 1e-14);
        // t(0.975, 1) = 12.706204736174698; t(0.975, 10) = 2.228138851986274.
        assert!((student_t_quantile(0.975, 1.0) - 12.706_204_736_174_698).abs() < 1e-11);
        assert!((student_t_quantile(0.975, 10.0) - 2.228_138_851_986_274).abs() < 1e-12);
    }
}
