//! The seeded pseudo-random generator: SplitMix64 (Steele, Lea and Flood 2014), the
//! generator `java.util.SplittableRandom` uses and the usual seeder of xoshiro. It is a
//! few integer operations, so its stream is the same on every machine; we own it rather
//! than depend on a crate whose stream could change between versions.
//!
//! Every item (record, patient) gets its own stream, derived from the seed and the
//! item's place in the set ([`Rng::derive`]), so that item *k* is the same whatever the
//! number of items asked for.

use crate::dmath;

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function: a bijective mix of 64 bits.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A SplitMix64 stream.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    #[cfg(test)]
    pub fn new(seed: u64) -> Rng {
        Rng { state: mix(seed) }
    }

    /// The stream of item `path` (a list of small integers: challenge, subject, record...)
    /// under `seed`. Different paths give unrelated streams.
    pub fn derive(seed: u64, path: &[u64]) -> Rng {
        let mut h = mix(seed ^ 0x5EED_5EED_5EED_5EED);
        for &p in path {
            h = mix(h ^ mix(p.wrapping_add(GOLDEN)));
        }
        Rng { state: h }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix(self.state)
    }

    /// Uniform in [0, 1), 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// Uniform integer in [lo, hi] (inclusive; `lo` when `hi < lo`).
    pub fn int(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo + 1;
        // Multiply-shift (Lemire) without the rejection step: the bias is below 2^-32
        // for the small spans used here, and the stream stays one draw per call.
        lo + ((u128::from(self.next_u64()) * u128::from(span)) >> 64) as u64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.uniform() < p
    }

    /// One of `items`, uniformly (`items` must not be empty; the first is returned if it is
    /// not, which cannot happen with the constant lists used here).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        let i = self.int(0, items.len().saturating_sub(1) as u64) as usize;
        items[i.min(items.len().saturating_sub(1))]
    }

    /// An index drawn with the given (non-negative, not all zero) weights.
    pub fn weighted(&mut self, weights: &[f64]) -> usize {
        let total: f64 = weights.iter().sum();
        let mut x = self.uniform() * total;
        for (i, &w) in weights.iter().enumerate() {
            if x < w {
                return i;
            }
            x -= w;
        }
        weights.len().saturating_sub(1)
    }

    /// A standard normal deviate (Marsaglia's polar method, with the deterministic `ln`).
    pub fn normal(&mut self) -> f64 {
        loop {
            let u = 2.0 * self.uniform() - 1.0;
            let v = 2.0 * self.uniform() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                return u * (-2.0 * dmath::ln(s) / s).sqrt();
            }
        }
    }

    /// A cheap, approximately normal deviate (sum of four uniforms, scaled to variance 1),
    /// for sample-by-sample noise where the exact shape of the tails does not matter.
    pub fn noise(&mut self) -> f64 {
        let x = self.next_u64();
        // Four 16-bit uniforms out of one draw.
        let s = (x & 0xFFFF) + ((x >> 16) & 0xFFFF) + ((x >> 32) & 0xFFFF) + (x >> 48);
        // Mean 2·65535, variance 4·(65536²−1)/12.
        (s as f64 - 131_070.0) * (1.0 / 37_837.23)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_values() {
        // SplitMix64 seeded with 0 (the state is the seed, not mixed): the first outputs
        // of the reference implementation.
        let mut r = Rng { state: 0 };
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(r.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn derived_streams_differ_and_repeat() {
        let a: Vec<u64> = (0..4).map(|_| Rng::derive(7, &[1, 2]).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let b = Rng::derive(7, &[1, 3]).next_u64();
        let c = Rng::derive(8, &[1, 2]).next_u64();
        assert_ne!(a[0], b);
        assert_ne!(a[0], c);
    }

    #[test]
    fn distributions_have_the_right_moments() {
        let mut r = Rng::new(1);
        let n = 200_000;
        let (mut m1, mut m2, mut k1, mut k2) = (0.0, 0.0, 0.0, 0.0);
        for _ in 0..n {
            let x = r.normal();
            m1 += x;
            m2 += x * x;
            let y = r.noise();
            k1 += y;
            k2 += y * y;
        }
        let n = n as f64;
        assert!((m1 / n).abs() < 0.01 && (m2 / n - 1.0).abs() < 0.02);
        assert!((k1 / n).abs() < 0.01 && (k2 / n - 1.0).abs() < 0.02);
        for _ in 0..1000 {
            let k = r.int(3, 5);
            assert!((3..=5).contains(&k));
            let u = r.range(-2.0, -1.0);
            assert!((-2.0..-1.0).contains(&u));
        }
        assert_eq!(r.int(4, 4), 4);
        assert_eq!(r.int(4, 2), 4);
    }
}
