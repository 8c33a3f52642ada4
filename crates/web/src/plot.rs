//! The leaderboard's plot, drawn on the server as SVG: the best score so far over time.
//! Numbers only go into the markup (no text from users), and presentation attributes
//! rather than `style`, which the Content-Security-Policy forbids.

use chrono::{DateTime, Utc};
use maud::{Markup, html};

const W: f64 = 720.0;
const H: f64 = 260.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 40.0;

/// The best value so far at each time a scored submission arrived, higher or lower
/// being better; points that did not improve the best are left out of the line.
pub(crate) fn best_so_far(
    points: &[(DateTime<Utc>, f64)],
    higher: bool,
) -> Vec<(DateTime<Utc>, f64)> {
    let mut out: Vec<(DateTime<Utc>, f64)> = Vec::new();
    for &(t, v) in points {
        if !v.is_finite() {
            continue;
        }
        let better = match out.last() {
            None => true,
            Some(&(_, b)) => (higher && v > b) || (!higher && v < b),
        };
        if better {
            out.push((t, v));
        }
    }
    out
}

/// A step line of `best` up to `until`, with its axes; `label` names the number.
pub(crate) fn step_plot(
    best: &[(DateTime<Utc>, f64)],
    until: DateTime<Utc>,
    label: &str,
) -> Markup {
    let (Some(first), Some(_)) = (best.first(), best.last()) else {
        return html! { p { "No scored submissions yet: the plot starts with the first." } };
    };
    let t0 = first.0.timestamp() as f64;
    let t1 = (until.timestamp() as f64).max(t0 + 60.0);
    let (mut lo, mut hi) = best
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(_, v)| {
            (lo.min(v), hi.max(v))
        });
    if hi - lo < 1e-9 {
        lo -= 0.5;
        hi += 0.5;
    }
    let pad = (hi - lo) * 0.08;
    let (lo, hi) = (lo - pad, hi + pad);
    let x = |t: f64| LEFT + (t - t0) / (t1 - t0) * (W - LEFT - RIGHT);
    let y = |v: f64| TOP + (hi - v) / (hi - lo) * (H - TOP - BOTTOM);
    let mut d = String::new();
    for (i, &(t, v)) in best.iter().enumerate() {
        let (px, py) = (x(t.timestamp() as f64), y(v));
        if i == 0 {
            d.push_str(&format!("M{px:.1},{py:.1}"));
        } else {
            d.push_str(&format!("H{px:.1}V{py:.1}"));
        }
    }
    d.push_str(&format!("H{:.1}", x(t1)));
    let ticks: Vec<f64> = (0..=4)
        .map(|i| lo + (hi - lo) * f64::from(i) / 4.0)
        .collect();
    let start = DateTime::<Utc>::from_timestamp(t0 as i64, 0).unwrap_or(first.0);
    let end = DateTime::<Utc>::from_timestamp(t1 as i64, 0).unwrap_or(until);
    let summary = format!(
        "The best {label} so far rose from {} to {} between {} and {}.",
        crate::html::num(Some(first.1), 4),
        crate::html::num(best.last().map(|b| b.1), 4),
        start.format("%Y-%m-%d %H:%M UTC"),
        end.format("%Y-%m-%d %H:%M UTC")
    );
    html! {
        figure.plot {
            svg viewBox={"0 0 " (W) " " (H)} role="img" aria-label=(summary) xmlns="http://www.w3.org/2000/svg" {
                @for v in &ticks {
                    line x1=(LEFT) x2=(W - RIGHT) y1=(format!("{:.1}", y(*v))) y2=(format!("{:.1}", y(*v)))
                        stroke="#d0d4da" stroke-width="1" {}
                    text x=(LEFT - 6.0) y=(format!("{:.1}", y(*v) + 4.0)) text-anchor="end" font-size="11" fill="#333" {
                        (crate::html::num(Some(*v), 3))
                    }
                }
                line x1=(LEFT) x2=(LEFT) y1=(TOP) y2=(H - BOTTOM) stroke="#333" {}
                line x1=(LEFT) x2=(W - RIGHT) y1=(H - BOTTOM) y2=(H - BOTTOM) stroke="#333" {}
                text x=(LEFT) y=(H - BOTTOM + 18.0) font-size="11" fill="#333" { (start.format("%Y-%m-%d %H:%M")) }
                text x=(W - RIGHT) y=(H - BOTTOM + 18.0) font-size="11" text-anchor="end" fill="#333" { (end.format("%Y-%m-%d %H:%M UTC")) }
                path d=(d) fill="none" stroke="#1f5fbf" stroke-width="2.5" {}
                @for &(t, v) in best {
                    circle cx=(format!("{:.1}", x(t.timestamp() as f64))) cy=(format!("{:.1}", y(v))) r="3.5" fill="#1f5fbf" {}
                }
            }
            figcaption { (summary) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(s, 0).unwrap()
    }

    #[test]
    fn best_so_far_keeps_improvements_only() {
        let p = [
            (t(0), 0.5),
            (t(1), 0.4),
            (t(2), 0.7),
            (t(3), f64::NAN),
            (t(4), 0.7),
        ];
        assert_eq!(best_so_far(&p, true), vec![(t(0), 0.5), (t(2), 0.7)]);
        assert_eq!(best_so_far(&p, false), vec![(t(0), 0.5), (t(1), 0.4)]);
    }

    #[test]
    fn plot_is_a_path_of_numbers() {
        let svg = step_plot(&[(t(0), 0.5), (t(100), 0.7)], t(200), "score").into_string();
        assert!(svg.contains("<path d=\"M64.0,"), "{svg}");
        assert!(!svg.contains("NaN"));
    }
}
