//! Floating-point summation exactly as numpy does it, so that our means equal the official
//! scorers' `np.mean` / `np.nanmean` to the last bit, not just to the printed digits.

/// numpy's pairwise summation (`pairwise_sum_DOUBLE` in numpy's `loops_utils`): blocks of
/// up to 128 values are summed with eight interleaved accumulators, larger arrays are
/// split in halves (rounded to a multiple of 8) and summed recursively.
pub(crate) fn pairwise_sum(a: &[f64]) -> f64 {
    const BLOCK: usize = 128;
    let n = a.len();
    if n < 8 {
        let mut res = 0.0;
        for &v in a {
            res += v;
        }
        res
    } else if n <= BLOCK {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&a[..8]);
        let mut i = 8;
        while i < n - n % 8 {
            for j in 0..8 {
                r[j] += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &v in &a[i..] {
            res += v;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_sum(&a[..n2]) + pairwise_sum(&a[n2..])
    }
}

/// `np.mean`: NaN for an empty slice.
pub(crate) fn mean(a: &[f64]) -> f64 {
    pairwise_sum(a) / a.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairwise_sum_follows_numpy_blocks() {
        // 0.1 summed 10 times: numpy's blocked sum gives 1.0 exactly where a plain loop
        // gives 0.9999999999999999.
        let tenths = vec![0.1; 10];
        assert_eq!(pairwise_sum(&tenths), 1.0);
        assert_eq!(tenths.iter().fold(0.0, |a, b| a + b), 0.9999999999999999);
        let v: Vec<f64> = (0..1000).map(|i| 1.0 / (i as f64 + 1.0)).collect();
        // np.sum(1/np.arange(1, 1001)) with numpy 2.4.
        assert_eq!(pairwise_sum(&v), 7.485470860550345);
        assert!(mean(&[]).is_nan());
    }
}
