//! What a read returns per sample (digital `i32` or physical `f64`), the conversion to
//! physical units, and the allocation of outputs (advised to use huge pages).

use super::Calibration;

/// What a read returns per sample: the stored (digital) value as `i32`, or the physical
/// value as `f64`.
pub(super) trait Sample: Copy + Send + Sync + 'static {
    /// All bits zero: `vec![ZERO; n]` asks the allocator for zeroed memory, which fresh
    /// pages already are, so allocating writes nothing.
    const ZERO: Self;
    /// How one signal's digital values convert.
    type Conv: Copy + Send + Sync;
    fn conv_for(calibration: &Calibration) -> Self::Conv;
    /// Converts one value.
    fn conv(c: Self::Conv, digital: i32) -> Self;
    /// Runs `body` with the conversion as a closure, its form chosen once (not per
    /// sample, so that the loops in `body` stay simple enough to vectorise).
    fn with_conv(c: Self::Conv, body: impl WithConv<Self>);
}

/// Code that runs with one signal's conversion ([`Sample::with_conv`]).
pub(super) trait WithConv<T> {
    fn run(self, conv: impl Fn(i32) -> T + Copy);
}

impl Sample for i32 {
    const ZERO: i32 = 0;
    type Conv = ();
    fn conv_for(_: &Calibration) {}
    #[inline(always)]
    fn conv(_: (), digital: i32) -> i32 {
        digital
    }
    #[inline(always)]
    fn with_conv(_: (), body: impl WithConv<i32>) {
        body.run(|d| d);
    }
}

impl Sample for f64 {
    const ZERO: f64 = 0.0;
    type Conv = Physical;
    fn conv_for(c: &Calibration) -> Physical {
        Physical::of(c)
    }
    #[inline(always)]
    fn conv(c: Physical, digital: i32) -> f64 {
        c.apply(digital)
    }
    #[inline(always)]
    fn with_conv(c: Physical, body: impl WithConv<f64>) {
        match c.reciprocal {
            Some(r) => body.run(move |d| c.scale(d, r)),
            None => body.run(move |d| c.divide(d)),
        }
    }
}

/// The conversion of one calibration run to physical units.
#[derive(Debug, Clone, Copy)]
pub(super) struct Physical {
    baseline: f64,
    gain: f64,
    /// `1 / gain` when multiplying by it gives the same bits as dividing by `gain`
    /// ([`exact_reciprocal`]).
    pub(super) reciprocal: Option<f64>,
    /// The invalid value as a double, NaN when there is none. Converting an `i32` to
    /// `f64` is exact and one to one, so comparing the converted sample with it is
    /// comparing the integers, and a comparison with NaN is never true.
    invalid: f64,
}

impl Physical {
    pub(super) fn of(c: &Calibration) -> Physical {
        Physical {
            baseline: c.baseline as f64,
            gain: c.gain,
            reciprocal: exact_reciprocal(c.gain),
            invalid: c.invalid.map_or(f64::NAN, f64::from),
        }
    }

    /// `(digital - baseline) / gain`, NaN for the invalid value.
    #[inline(always)]
    fn apply(self, d: i32) -> f64 {
        match self.reciprocal {
            Some(r) => self.scale(d, r),
            None => self.divide(d),
        }
    }

    /// [`apply`](Self::apply) by division, not multiplication by 1/gain: bit-identical
    /// to wfdb-python and the WFDB library.
    #[inline(always)]
    pub(super) fn divide(self, d: i32) -> f64 {
        self.nan_if_invalid(d, (d as f64 - self.baseline) / self.gain)
    }

    /// [`apply`](Self::apply) when `r` is the exact reciprocal of a power-of-two gain:
    /// the same bits as [`divide`](Self::divide), several times faster.
    #[inline(always)]
    pub(super) fn scale(self, d: i32, r: f64) -> f64 {
        self.nan_if_invalid(d, (d as f64 - self.baseline) * r)
    }

    /// `p`, or NaN where `d` is the invalid value. A select, not a branch, so that loops
    /// over it stay vectorisable; compared as doubles, which vectorises to one compare
    /// on the converted samples instead of widening an integer mask.
    #[inline(always)]
    fn nan_if_invalid(self, d: i32, p: f64) -> f64 {
        if f64::from(d) == self.invalid {
            f64::NAN
        } else {
            p
        }
    }
}

/// `1 / gain` if `gain` is ±2^k (a normal number whose significand is 1; gains of 1, as
/// in WAV-backed records, are the common case). Then `1 / gain` = ±2^-k is exact (it is
/// at least 2^-1023, a subnormal but representable), so for every `x`, `x / gain` and
/// `x * (1 / gain)` have the same exact value and IEEE 754 rounds it to the same double
/// (overflow, underflow and the sign of zero included). Any other gain is divided by.
pub(super) fn exact_reciprocal(gain: f64) -> Option<f64> {
    let bits = gain.to_bits();
    let exponent = (bits >> 52) & 0x7FF;
    let significand = bits & ((1 << 52) - 1);
    (significand == 0 && (1..0x7FF).contains(&exponent)).then(|| 1.0 / gain)
}

/// An empty output with room for `len` samples. Large ones are advised to use
/// transparent huge pages (as numpy does for its arrays), which makes first touching
/// them several times cheaper. The advice applies to pages not yet touched: the largest
/// outputs come from the system untouched; one that glibc serves from memory it already
/// holds (below its mmap threshold, which grows up to 32 MiB) may have been touched
/// before, and the advice then only helps where pages are still fresh.
pub(super) fn output<T: Sample>(len: usize) -> Vec<T> {
    let mut v = Vec::with_capacity(len);
    advise_huge_pages(&mut v);
    v
}

/// Outputs from this size on are advised to use huge pages (numpy's threshold).
const HUGE_PAGE_ADVICE_BYTES: usize = 4 << 20;

/// Asks the kernel to back the 2 MiB-aligned part of `v`'s allocation with transparent
/// huge pages when it is first touched. Only a hint: the contents do not change, and a
/// failure (huge pages disabled, an old kernel) changes nothing.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub(super) fn advise_huge_pages<T>(v: &mut Vec<T>) {
    const HUGE: usize = 2 << 20;
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes < HUGE_PAGE_ADVICE_BYTES {
        return;
    }
    let start = v.as_mut_ptr() as usize;
    let (lo, hi) = (start.next_multiple_of(HUGE), (start + bytes) / HUGE * HUGE);
    if lo < hi {
        // SAFETY: [lo, hi) lies within the allocation `v` owns (the Vec is borrowed
        // mutably, so nothing else uses it meanwhile). MADV_HUGEPAGE only changes how the
        // kernel backs these pages: it never unmaps them or changes what they hold, so no
        // memory Rust can see changes. The advice stays with the address range after `v`
        // is freed and is inherited by whatever is allocated there later, which is as
        // harmless. The result is ignored on purpose (see above).
        unsafe {
            libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) fn advise_huge_pages<T>(_: &mut Vec<T>) {}
