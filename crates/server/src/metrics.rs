//! What the server counts in itself (request latency and statuses, for `/metrics`),
//! the Prometheus text it writes.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

use axum::http::{Method, StatusCode};

/// Upper bounds of the latency histogram's buckets, in seconds: from a cached answer
/// to an upload of hundreds of MiB.
const BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
];

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// Latency and status counts by method and route pattern. The labels are bounded: a
/// route is one of the router's patterns (or `unmatched`), a method one of the
/// standard ones (or `other`), so no request can make a new series.
#[derive(Default)]
pub(crate) struct Metrics {
    latency: Mutex<BTreeMap<(&'static str, String), Histogram>>,
    statuses: Mutex<BTreeMap<(&'static str, String, u16), u64>>,
}

fn method_label(m: &Method) -> &'static str {
    match *m {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::PATCH => "PATCH",
        _ => "other",
    }
}

impl Metrics {
    pub(crate) fn observe(&self, method: &Method, route: &str, status: StatusCode, seconds: f64) {
        let m = method_label(method);
        {
            let mut l = self.latency.lock().unwrap_or_else(|p| p.into_inner());
            let h = l.entry((m, route.to_owned())).or_default();
            for (i, le) in BUCKETS.iter().enumerate() {
                if seconds <= *le {
                    h.counts[i] += 1;
                }
            }
            h.count += 1;
            h.sum += seconds;
        }
        let mut s = self.statuses.lock().unwrap_or_else(|p| p.into_inner());
        *s.entry((m, route.to_owned(), status.as_u16())).or_default() += 1;
    }

    /// The request series, in Prometheus text.
    pub(crate) fn render(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "# HELP physiojudge_http_requests_total API requests answered, by method, route \
             and status.\n# TYPE physiojudge_http_requests_total counter"
        );
        for ((m, route, status), n) in self
            .statuses
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            let _ = writeln!(
                out,
                "physiojudge_http_requests_total{{method=\"{m}\",route=\"{}\",status=\"{status}\"}} {n}",
                label(route)
            );
        }
        let _ = writeln!(
            out,
            "# HELP physiojudge_http_request_duration_seconds Time to answer an API request \
             (to its first byte: an event stream counts until it starts).\n\
             # TYPE physiojudge_http_request_duration_seconds histogram"
        );
        for ((m, route), h) in self
            .latency
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            let labels = format!("method=\"{m}\",route=\"{}\"", label(route));
            for (le, n) in BUCKETS.iter().zip(h.counts) {
                let _ = writeln!(
                    out,
                    "physiojudge_http_request_duration_seconds_bucket{{{labels},le=\"{le}\"}} {n}"
                );
            }
            let _ = writeln!(
                out,
                "physiojudge_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}\n\
                 physiojudge_http_request_duration_seconds_sum{{{labels}}} {}\n\
                 physiojudge_http_request_duration_seconds_count{{{labels}}} {}",
                h.count, h.sum, h.count
            );
        }
    }
}

/// A label value as Prometheus' text format quotes it.
pub(crate) fn label(s: &str) -> String {
    s.replace('\\', r"\\")
        .replace('"', "\\\"")
        .replace('\n', r"\n")
}
