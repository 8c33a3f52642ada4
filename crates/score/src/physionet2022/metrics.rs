//! Metrics: AUROC and AUPRC from the official threshold walk, F-measure, accuracy,
//! weighted accuracy and the cost, as the official scorer computes them.

use serde::Serialize;

use super::Task;
use crate::numeric::pairwise_sum;

/// The per-class values of one task, in the task's class order; NaN where undefined.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerClass {
    pub auroc: Vec<f64>,
    pub auprc: Vec<f64>,
    pub f_measure: Vec<f64>,
    pub accuracy: Vec<f64>,
}

/// Every metric of one task, as the official scorer computes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskMetrics {
    pub classes: Vec<&'static str>,
    pub auroc: f64,
    pub auprc: f64,
    pub f_measure: f64,
    pub accuracy: f64,
    pub weighted_accuracy: f64,
    /// Mean cost per patient (for murmur, the 3×2 variant against the outcome labels).
    pub cost: f64,
    pub per_class: PerClass,
    /// Rows = enforced output class, columns = label class, in the task's order.
    pub confusion: Vec<Vec<u64>>,
}

fn ratio(a: f64, b: f64) -> f64 {
    if b != 0.0 { a / b } else { f64::NAN }
}

/// `np.nanmean`, or NaN when no value is finite (the official guard).
pub(super) fn nanmean(v: &[f64]) -> f64 {
    if !v.iter().any(|x| x.is_finite()) {
        return f64::NAN;
    }
    let replaced: Vec<f64> = v
        .iter()
        .map(|&x| if x.is_nan() { 0.0 } else { x })
        .collect();
    let count = v.iter().filter(|x| !x.is_nan()).count();
    pairwise_sum(&replaced) / count as f64
}

/// AUROC and AUPRC of one class from its scores, by the official threshold walk: the
/// distinct scores plus (largest + 1), in descending order; at each threshold every
/// patient scoring at least that much is predicted positive.
pub(super) fn auc(positive: &[bool], scores: &[f64]) -> (f64, f64) {
    let n = scores.len();
    let mut thresholds = scores.to_vec();
    thresholds.sort_by(f64::total_cmp);
    thresholds.dedup_by(|a, b| a == b);
    let Some(&top) = thresholds.last() else {
        return (f64::NAN, f64::NAN);
    };
    thresholds.push(top + 1.0);
    thresholds.reverse();
    let t = thresholds.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));

    let positives = positive.iter().filter(|&&p| p).count() as f64;
    let (mut tp, mut fp, mut fn_, mut tn) =
        (vec![0.0; t], vec![0.0; t], vec![0.0; t], vec![0.0; t]);
    fn_[0] = positives;
    tn[0] = n as f64 - positives;
    let mut i = 0;
    for j in 1..t {
        (tp[j], fp[j], fn_[j], tn[j]) = (tp[j - 1], fp[j - 1], fn_[j - 1], tn[j - 1]);
        while i < n && scores[order[i]] >= thresholds[j] {
            if positive[order[i]] {
                tp[j] += 1.0;
                fn_[j] -= 1.0;
            } else {
                fp[j] += 1.0;
                tn[j] -= 1.0;
            }
            i += 1;
        }
    }
    let tpr: Vec<f64> = (0..t).map(|j| ratio(tp[j], tp[j] + fn_[j])).collect();
    let tnr: Vec<f64> = (0..t).map(|j| ratio(tn[j], fp[j] + tn[j])).collect();
    let ppv: Vec<f64> = (0..t).map(|j| ratio(tp[j], tp[j] + fp[j])).collect();
    let (mut auroc, mut auprc) = (0.0, 0.0);
    for j in 0..t - 1 {
        auroc += 0.5 * (tpr[j + 1] - tpr[j]) * (tnr[j + 1] + tnr[j]);
        auprc += (tpr[j + 1] - tpr[j]) * ppv[j + 1];
    }
    (auroc, auprc)
}

/// The mean cost per patient from referral decisions: `referred` (the algorithm says
/// Present, Unknown or Abnormal) against `abnormal` (the outcome label).
pub(super) fn mean_cost(referred: &[bool], abnormal: &[bool]) -> f64 {
    let (mut tp, mut fp, mut fn_, mut tn) = (0.0, 0.0, 0.0, 0.0);
    for (&r, &a) in referred.iter().zip(abnormal) {
        match (r, a) {
            (true, true) => tp += 1.0,
            (true, false) => fp += 1.0,
            (false, true) => fn_ += 1.0,
            (false, false) => tn += 1.0,
        }
    }
    let n: f64 = tp + fp + fn_ + tn;
    if n <= 0.0 {
        return f64::NAN;
    }
    let x: f64 = (tp + fp) / n;
    // numpy raises a float64 to a power with the C library's pow; black_box keeps the
    // compiler from rewriting the call into multiplications, which could round differently.
    let pow = |e: f64| x.powf(std::hint::black_box(e));
    let expert = (25.0 + 397.0 * x - 1718.0 * pow(2.0) + 11296.0 * pow(4.0)) * n;
    let total = 10.0 * n + expert + 10000.0 * tp + 50000.0 * fn_;
    total / n
}

/// Every metric of a task from enforced labels and outputs (class indices) and the
/// scores (one row per patient). `cost` is computed by the caller, as it mixes tasks.
pub(super) fn task_metrics(
    task: Task,
    labels: &[usize],
    outputs: &[usize],
    scores: &[Vec<f64>],
    cost: f64,
) -> TaskMetrics {
    let c = task.classes.len();
    let mut confusion = vec![vec![0u64; c]; c];
    for (&l, &o) in labels.iter().zip(outputs) {
        confusion[o][l] += 1;
    }
    let column = |k: usize| -> f64 { (0..c).map(|i| confusion[i][k] as f64).sum() };
    let total: f64 = (0..c).map(column).sum();
    let trace: f64 = (0..c).map(|i| confusion[i][i] as f64).sum();

    let mut per_class = PerClass {
        auroc: Vec::with_capacity(c),
        auprc: Vec::with_capacity(c),
        f_measure: Vec::with_capacity(c),
        accuracy: Vec::with_capacity(c),
    };
    for k in 0..c {
        let positive: Vec<bool> = labels.iter().map(|&l| l == k).collect();
        let class_scores: Vec<f64> = scores.iter().map(|s| s[k]).collect();
        let (roc, prc) = auc(&positive, &class_scores);
        per_class.auroc.push(roc);
        per_class.auprc.push(prc);
        let tp = confusion[k][k] as f64;
        let fp = (0..c)
            .filter(|&j| j != k)
            .map(|j| confusion[k][j] as f64)
            .sum::<f64>();
        let fn_ = column(k) - tp;
        let denominator = 2.0 * tp + fp + fn_;
        per_class.f_measure.push(if denominator > 0.0 {
            2.0 * tp / denominator
        } else {
            f64::NAN
        });
        per_class.accuracy.push(ratio(tp, column(k)));
    }
    let weighted_total: f64 = (0..c).map(|k| task.weights[k] * column(k)).sum();
    let weighted_trace: f64 = (0..c)
        .map(|k| task.weights[k] * confusion[k][k] as f64)
        .sum();
    TaskMetrics {
        classes: task.classes.to_vec(),
        auroc: nanmean(&per_class.auroc),
        auprc: nanmean(&per_class.auprc),
        f_measure: nanmean(&per_class.f_measure),
        accuracy: if total > 0.0 { trace / total } else { f64::NAN },
        weighted_accuracy: if weighted_total > 0.0 {
            weighted_trace / weighted_total
        } else {
            f64::NAN
        },
        cost,
        per_class,
        confusion,
    }
}
