//! The leaderboard's plots, drawn on the server as SVG: the best value so far of one
//! ranking number over time. Numbers only go into the markup (no text from users but
//! the metric's name, which `maud` escapes), and presentation attributes rather than
//! `style`, which the Content-Security-Policy forbids.
//!
//! The drawing is small (400 units wide) with 13-unit text, so that on a 390-px phone,
//! where it is drawn about 370 px wide, its labels stay about 12 px tall; on a desktop
//! the stylesheet caps its width.

use chrono::{DateTime, Utc};
use maud::{Markup, html};

const W: f64 = 400.0;
const H: f64 = 240.0;
const LEFT: f64 = 52.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 40.0;
const FONT: &str = "13";

/// What a plot is of: a ranking number as the scorer describes it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Metric<'a> {
    /// What people call it, unit included ("information transfer rate (bits/min)").
    pub label: &'a str,
    pub higher: bool,
    /// The values it can take (an F1's 0 and 1): the axis spans them when both are known.
    pub min: Option<f64>,
    pub max: Option<f64>,
}

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

/// A step of 1, 2, 2.5 or 5 times a power of ten near `span / 4`: four or so ticks.
fn nice_step(span: f64) -> f64 {
    let raw = (span / 4.0).max(f64::MIN_POSITIVE);
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    let k = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 2.5 {
        2.5
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    k * p
}

/// The axis: the metric's own range when it has both ends; else the values' range
/// widened to whole steps and kept inside whichever end the metric has. Returns the
/// axis's ends and its ticks.
pub(crate) fn axis(values: &[f64], m: &Metric) -> (f64, f64, Vec<f64>) {
    let (lo, hi) = values
        .iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    if let (Some(a), Some(b)) = (m.min, m.max)
        && a < b
        && lo >= a
        && hi <= b
    {
        let step = nice_step(b - a);
        return (a, b, ticks(a, b, step));
    }
    let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
    // One value, or all equal: a span around it of a tenth of its size (or 1 at 0).
    let (lo, hi) = if hi - lo < 1e-12 {
        let d = if lo.abs() > 1e-12 {
            lo.abs() * 0.1
        } else {
            0.5
        };
        (lo - d, hi + d)
    } else {
        (lo, hi)
    };
    let step = nice_step(hi - lo);
    let mut a = (lo / step).floor() * step;
    let mut b = (hi / step).ceil() * step;
    if let Some(min) = m.min {
        a = a.max(min);
    }
    if let Some(max) = m.max {
        b = b.min(max);
    }
    if b <= a {
        b = a + step;
    }
    (a, b, ticks(a, b, step))
}

fn ticks(a: f64, b: f64, step: f64) -> Vec<f64> {
    let n = ((b - a) / step).round().clamp(1.0, 12.0) as usize;
    (0..=n).map(|i| a + (b - a) * i as f64 / n as f64).collect()
}

/// Two figures written with as few decimals as tell them apart (4 at least).
fn apart(a: f64, b: f64) -> (String, String) {
    let mut d = 4;
    loop {
        let (x, y) = (crate::html::num(Some(a), d), crate::html::num(Some(b), d));
        if x != y || a == b || d >= 12 {
            return (x, y);
        }
        d += 1;
    }
}

/// What the plot shows, in a sentence (its caption and its `aria-label`).
fn sentence(best: &[(DateTime<Utc>, f64)], m: &Metric, end: DateTime<Utc>) -> String {
    let when = |t: DateTime<Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
    match (best.first(), best.last()) {
        (Some(&(t0, a)), Some(&(_, b))) if best.len() > 1 => {
            let (x, y) = apart(a, b);
            let (verb, better) = if m.higher {
                ("rose", "higher")
            } else {
                ("fell", "lower")
            };
            format!(
                "The best {} so far {verb} from {x} to {y} ({better} is better) in {} \
                 improvement{} between {} and {}.",
                m.label,
                best.len() - 1,
                if best.len() == 2 { "" } else { "s" },
                when(t0),
                when(end)
            )
        }
        (Some(&(t0, a)), _) => format!(
            "The best {} so far is {}, the first score, since {}; no entry has beaten it \
             up to {}.",
            m.label,
            crate::html::num(Some(a), 4),
            when(t0),
            when(end)
        ),
        _ => String::new(),
    }
}

/// A step line of `best` up to `until`, with its axes, on the metric's range.
pub(crate) fn step_plot(best: &[(DateTime<Utc>, f64)], until: DateTime<Utc>, m: &Metric) -> Markup {
    let Some(first) = best.first() else {
        return html! { p { "No scored submissions yet: the plot starts with the first." } };
    };
    let t0 = first.0.timestamp() as f64;
    let t1 = (until.timestamp() as f64).max(t0 + 60.0);
    let values: Vec<f64> = best.iter().map(|b| b.1).collect();
    let (lo, hi, ticks) = axis(&values, m);
    let x = |t: f64| LEFT + (t - t0) / (t1 - t0) * (W - LEFT - RIGHT);
    let y = |v: f64| TOP + (hi - v.clamp(lo, hi)) / (hi - lo) * (H - TOP - BOTTOM);
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
    let start = DateTime::<Utc>::from_timestamp(t0 as i64, 0).unwrap_or(first.0);
    let end = DateTime::<Utc>::from_timestamp(t1 as i64, 0).unwrap_or(until);
    let summary = sentence(best, m, end);
    html! {
        figure.plot {
            svg viewBox={"0 0 " (W) " " (H)} role="img" aria-label=(summary) xmlns="http://www.w3.org/2000/svg" {
                @for v in &ticks {
                    line x1=(LEFT) x2=(W - RIGHT) y1=(format!("{:.1}", y(*v))) y2=(format!("{:.1}", y(*v)))
                        stroke="#d0d4da" stroke-width="1" {}
                    text x=(LEFT - 6.0) y=(format!("{:.1}", y(*v) + 4.5)) text-anchor="end" font-size=(FONT) fill="#333" {
                        (crate::html::num(Some(*v), 4))
                    }
                }
                line x1=(LEFT) x2=(LEFT) y1=(TOP) y2=(H - BOTTOM) stroke="#333" {}
                line x1=(LEFT) x2=(W - RIGHT) y1=(H - BOTTOM) y2=(H - BOTTOM) stroke="#333" {}
                text x=(LEFT) y=(H - BOTTOM + 20.0) font-size=(FONT) fill="#333" { (start.format("%d %b %H:%M")) }
                text x=(W - RIGHT) y=(H - BOTTOM + 20.0) font-size=(FONT) text-anchor="end" fill="#333" { (end.format("%d %b %H:%M UTC")) }
                path d=(d) fill="none" stroke="#1f5fbf" stroke-width="2.5" {}
                @for &(t, v) in best {
                    circle cx=(format!("{:.1}", x(t.timestamp() as f64))) cy=(format!("{:.1}", y(v))) r="4" fill="#1f5fbf" {}
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

    const F1: Metric<'static> = Metric {
        label: "mean F1 of N, A and O",
        higher: true,
        min: Some(0.0),
        max: Some(1.0),
    };

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
        let svg = step_plot(&[(t(0), 0.5), (t(100), 0.7)], t(200), &F1).into_string();
        assert!(svg.contains("<path d=\"M52.0,"), "{svg}");
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn an_f1_is_drawn_on_zero_to_one_even_with_one_point() {
        let (lo, hi, ticks) = axis(&[0.883], &F1);
        assert_eq!((lo, hi), (0.0, 1.0));
        assert_eq!(ticks, vec![0.0, 0.25, 0.5, 0.75, 1.0]);
        let svg = step_plot(&[(t(0), 0.883)], t(600), &F1).into_string();
        assert!(!svg.contains("1.463") && !svg.contains(">1.1"), "{svg}");
        // One score is said as one: never "rose from 0.883 to 0.883".
        assert!(!svg.contains("rose"), "{svg}");
        assert!(svg.contains("is 0.883, the first score"), "{svg}");
    }

    #[test]
    fn an_open_ended_number_gets_whole_steps_inside_its_known_end() {
        let cost = Metric {
            label: "outcome cost",
            higher: false,
            min: Some(0.0),
            max: None,
        };
        let (lo, hi, ticks) = axis(&[12_345.0, 11_020.0], &cost);
        assert_eq!((lo, hi), (11_000.0, 12_500.0));
        assert_eq!(ticks.len(), 4);
        // Near zero the axis stops at the metric's own end, not below it.
        let (lo, _, _) = axis(&[0.2, 3.0], &cost);
        assert_eq!(lo, 0.0);
        let svg = step_plot(&[(t(0), 12_345.0), (t(60), 11_020.0)], t(120), &cost).into_string();
        assert!(
            svg.contains("fell from 12345 to 11020 (lower is better) in 1 improvement"),
            "{svg}"
        );
    }

    #[test]
    fn figures_that_round_alike_are_written_apart() {
        let svg = step_plot(&[(t(0), 0.88301), (t(60), 0.88304)], t(120), &F1).into_string();
        assert!(svg.contains("rose from 0.88301 to 0.88304"), "{svg}");
    }
}
