//! What the server counts in itself (request latency and statuses, for `/metrics`),
//! the Prometheus text it writes, and the limit on failed logins.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::{Method, StatusCode};

use crate::error::ApiError;

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

/// Failed logins per user name in a sliding minute: past the limit, `POST /tokens` for
/// that name is 429 until the minute since the first failure is over. Keyed by the name
/// tried, so that guessing one account's password is slow whatever the addresses.
pub(crate) struct LoginLimiter {
    per_minute: u32,
    tries: Mutex<HashMap<String, (Instant, u32)>>,
}

const WINDOW: Duration = Duration::from_secs(60);
/// Names remembered at once before the expired ones are dropped.
const REMEMBERED: usize = 10_000;

impl LoginLimiter {
    pub(crate) fn new(per_minute: u32) -> LoginLimiter {
        LoginLimiter {
            per_minute,
            tries: Mutex::new(HashMap::new()),
        }
    }

    /// Refuses a login for `name` while its failures fill the window.
    pub(crate) fn check(&self, name: &str) -> Result<(), ApiError> {
        let tries = self.tries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&(start, n)) = tries.get(name) {
            let age = start.elapsed();
            if age < WINDOW && n >= self.per_minute {
                let wait = (WINDOW - age).as_secs().max(1);
                let mut e = ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "rate_limited",
                    format!("too many failed logins for this name: try again in {wait} s"),
                );
                e.retry_after = Some(wait);
                return Err(e);
            }
        }
        Ok(())
    }

    pub(crate) fn failed(&self, name: &str) {
        let mut tries = self.tries.lock().unwrap_or_else(|p| p.into_inner());
        if tries.len() >= REMEMBERED {
            tries.retain(|_, (start, _)| start.elapsed() < WINDOW);
        }
        let e = tries.entry(name.to_owned()).or_insert((Instant::now(), 0));
        if e.0.elapsed() >= WINDOW {
            *e = (Instant::now(), 0);
        }
        e.1 += 1;
    }
}
