//! `sin`, `cos`, `exp` and `ln` from additions, multiplications and divisions only.
//!
//! The standard library's transcendental functions call the platform's libm, whose last
//! bit may differ between systems; IEEE 754 basic operations (and `sqrt`, `floor`,
//! `round`) are correctly rounded everywhere, and Rust never fuses a multiply and an add
//! on its own. So these functions give the same bits on every machine with IEEE doubles
//! (not on x87-only 32-bit targets), which is what makes the written files byte-identical
//! across machines. They are accurate to a few ulps over the ranges used here, which is
//! far below the 16-bit quantisation of every output.

use std::f64::consts::{FRAC_PI_2, LN_2};

/// π/2 in two parts (Cody–Waite): the first has its low 20 bits clear, so `k · PIO2_HI`
/// is exact for |k| < 2^20.
const PIO2_HI: f64 = 1.570_796_326_734_125_6;
const PIO2_LO: f64 = 6.077_100_506_506_192e-11;
/// ln 2 in two parts, likewise.
const LN2_HI: f64 = 6.931_471_803_691_238e-1;
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;

/// sin(r) for |r| ≤ π/4 (Taylor series to r^15).
fn sin_kernel(r: f64) -> f64 {
    let r2 = r * r;
    let mut p = -1.0 / 1_307_674_368_000.0;
    p = p * r2 + 1.0 / 6_227_020_800.0;
    p = p * r2 - 1.0 / 39_916_800.0;
    p = p * r2 + 1.0 / 362_880.0;
    p = p * r2 - 1.0 / 5_040.0;
    p = p * r2 + 1.0 / 120.0;
    p = p * r2 - 1.0 / 6.0;
    r + r * r2 * p
}

/// cos(r) for |r| ≤ π/4 (Taylor series to r^16).
fn cos_kernel(r: f64) -> f64 {
    let r2 = r * r;
    let mut p = 1.0 / 20_922_789_888_000.0;
    p = p * r2 - 1.0 / 87_178_291_200.0;
    p = p * r2 + 1.0 / 479_001_600.0;
    p = p * r2 - 1.0 / 3_628_800.0;
    p = p * r2 + 1.0 / 40_320.0;
    p = p * r2 - 1.0 / 720.0;
    p = p * r2 + 1.0 / 24.0;
    p = p * r2 - 0.5;
    1.0 + r2 * p
}

/// Reduces `x` to `r` in [-π/4, π/4] and the quadrant `k mod 4`.
fn reduce(x: f64) -> (f64, i64) {
    let k = (x / FRAC_PI_2).round();
    let r = (x - k * PIO2_HI) - k * PIO2_LO;
    (r, (k as i64).rem_euclid(4))
}

/// sin(x); meant for |x| below about 10^5 (phases are kept wrapped by the callers).
pub fn sin(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let (r, q) = reduce(x);
    match q {
        0 => sin_kernel(r),
        1 => cos_kernel(r),
        2 => -sin_kernel(r),
        _ => -cos_kernel(r),
    }
}

/// cos(x); see [`sin`].
pub fn cos(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let (r, q) = reduce(x);
    match q {
        0 => cos_kernel(r),
        1 => -sin_kernel(r),
        2 => -cos_kernel(r),
        _ => sin_kernel(r),
    }
}

/// 2^k for k in the normal range.
fn pow2(k: i64) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// e^x. Below −708 it returns 0 (no subnormal results); above 709 it returns infinity.
pub fn exp(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < -708.0 {
        return 0.0;
    }
    if x > 709.0 {
        return f64::INFINITY;
    }
    let k = (x / LN_2).round();
    let r = (x - k * LN2_HI) - k * LN2_LO;
    // |r| ≤ 0.35: Taylor series to r^14.
    let mut p = 1.0 / 87_178_291_200.0;
    for d in (1..=13).rev() {
        p = p * r + 1.0 / factorial(d);
    }
    let e = 1.0 + r * p;
    e * pow2(k as i64)
}

fn factorial(n: u32) -> f64 {
    (1..=n).fold(1.0, |acc, i| acc * f64::from(i))
}

/// ln(x): NaN for negative or NaN input, −∞ at 0.
pub fn ln(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x.is_infinite() {
        return x;
    }
    let (mut x, mut e) = (x, 0i64);
    if x < f64::MIN_POSITIVE {
        x *= pow2(54);
        e = -54;
    }
    let bits = x.to_bits();
    e += ((bits >> 52) & 0x7FF) as i64 - 1023;
    // The mantissa in [1, 2), then moved to [√½, √2).
    let mut m = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52));
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    // ln m = 2 atanh(s), s = (m − 1)/(m + 1), |s| ≤ 0.172: series to s^21.
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut p = 1.0 / 21.0;
    for d in (1..=9).rev() {
        p = p * s2 + 1.0 / f64::from(2 * d + 1);
    }
    let lnm = 2.0 * s + 2.0 * s * s2 * p;
    let ef = e as f64;
    ef * LN2_HI + (ef * LN2_LO + lnm)
}

/// Wraps a phase into [0, 2π).
pub fn wrap_phase(x: f64) -> f64 {
    let tau = std::f64::consts::TAU;
    x - tau * (x / tau).floor()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1.0)
    }

    #[test]
    fn agree_with_std_to_a_few_ulps() {
        for i in -20_000..20_000 {
            let x = i as f64 * 0.0137;
            assert!(close(sin(x), x.sin(), 4e-15), "sin({x})");
            assert!(close(cos(x), x.cos(), 4e-15), "cos({x})");
        }
        for i in -7000..7000 {
            let x = i as f64 * 0.1013;
            assert!(
                close(exp(x), x.exp(), 4e-15),
                "exp({x}) {} {}",
                exp(x),
                x.exp()
            );
        }
        for i in 1..20_000 {
            for x in [i as f64 * 1e-4, i as f64 * 0.731, 1.0 / (i as f64 * 7.0)] {
                assert!(close(ln(x), x.ln(), 4e-15), "ln({x})");
            }
        }
        assert!(close(ln(1e-310), 1e-310f64.ln(), 1e-15));
        assert_eq!(ln(1.0), 0.0);
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-800.0), 0.0);
        assert!(ln(-1.0).is_nan() && sin(f64::INFINITY).is_nan());
        assert!((wrap_phase(-0.5) - (std::f64::consts::TAU - 0.5)).abs() < 1e-15);
    }
}
