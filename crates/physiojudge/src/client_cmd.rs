//! `physiojudge submit` and `physiojudge status`: a participant's side of the platform
//! from a terminal (docs/service.md, "From a terminal"). They speak the HTTP API only,
//! as any client would: upload an entry, then follow its submission through the
//! server-sent events of `/api/v1/submissions/{id}/events` to its final state.
//!
//! Exit status of a followed submission: 0 scored, 1 failed or withdrawn (the entry's
//! or the team's doing) and any refusal by the server, 3 `error` left for the
//! organisers (the platform's fault, never the entry's).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use chrono::{DateTime, SecondsFormat, Utc};
use clap::Args;
use serde::de::DeserializeOwned;
use server::views::{
    CreatedSubmission, ErrorBody, ProgressEvent, StateEvent, StateName, SubmissionView,
};

use crate::evaluate_cmd::Bars;
use crate::output::Exit;

#[derive(Args)]
pub struct ServerArgs {
    /// The platform's address, e.g. http://127.0.0.1:8080.
    #[arg(long)]
    pub server: String,
    /// An API token (`pj_…`), as `POST /api/v1/users` or `/api/v1/tokens` gave it.
    #[arg(long)]
    pub token: String,
}

#[derive(Args)]
pub struct SubmitArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    /// The challenge's id.
    #[arg(long)]
    pub challenge: String,
    /// The phase's name (default: the open one).
    #[arg(long)]
    pub phase: Option<String>,
    /// A method name shown on the leaderboard.
    #[arg(long)]
    pub method: Option<String>,
    /// Print the submission's id and return at once, without following it.
    #[arg(long)]
    pub no_wait: bool,
    /// The entry: an archive (.zip, .tar.gz, .tgz, .tar), sent as it is, or a folder,
    /// packed as .tar.gz into a temporary file first.
    pub entry: PathBuf,
}

#[derive(Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    /// Show the submission as it is now, without following it to its end.
    #[arg(long)]
    pub no_follow: bool,
    /// The submission's id (as `submit` printed it).
    pub submission: String,
}

/// A state after which nothing changes (`error` is retried, so it is not one).
fn is_final(state: StateName) -> bool {
    matches!(
        state,
        StateName::Scored | StateName::Failed | StateName::Withdrawn
    )
}

/// A word of the API (a state, an outcome) as the API spells it.
fn word(v: &impl serde::Serialize) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "?".to_owned(),
    }
}

/// A time as the API sends it (RFC 3339, UTC).
fn time(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// A figure as the server sent it (the scorer's digits, not re-rounded), `-` for none.
fn figure(v: Option<f64>) -> String {
    v.and_then(serde_json::Number::from_f64)
        .map_or_else(|| "-".to_owned(), |n| n.to_string())
}

/// How long a submission must stay in `error` before `status` takes it as left for the
/// organisers: the platform queues a retry within a reconciler pass (seconds).
const ERROR_SETTLES: Duration = Duration::from_secs(20);

struct Client {
    base: String,
    token: String,
    http: reqwest::Client,
}

/// Percent-encoding of a query value (RFC 3986 unreserved characters stay).
fn query_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A path segment from the user (an id): anything but unreserved characters escaped,
/// so that it cannot name another endpoint.
fn segment(s: &str) -> String {
    query_value(s)
}

impl Client {
    fn new(a: &ServerArgs) -> Result<Client> {
        let base = a.server.trim_end_matches('/').to_owned();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(crate::output::UsageError(format!(
                "--server {}: give the address with its scheme, e.g. http://127.0.0.1:8080",
                a.server
            ))
            .into());
        }
        if base.starts_with("https://") {
            bail!("--server {base}: this build speaks plain HTTP only (use a local proxy)");
        }
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .context("making the HTTP client")?;
        Ok(Client {
            base,
            token: a.token.clone(),
            http,
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A successful answer read as `T` (the server's own view types), or the server's
    /// error, said clearly.
    async fn read<T: DeserializeOwned>(&self, what: &str, r: reqwest::RequestBuilder) -> Result<T> {
        let r = r
            .bearer_auth(&self.token)
            .send()
            .await
            .with_context(|| format!("{what}: no answer from {}", self.base))?;
        let status = r.status();
        let text = r
            .text()
            .await
            .with_context(|| format!("{what}: reading the answer"))?;
        if status.is_success() {
            return parse(what, &text);
        }
        bail!("{what}: {}", refusal(status.as_u16(), &text))
    }

    async fn submission(&self, id: &str) -> Result<SubmissionView> {
        self.read(
            "reading the submission",
            self.http
                .get(self.url(&format!("/api/v1/submissions/{}", segment(id)))),
        )
        .await
    }
}

/// A successful answer's body as `T`; one this client cannot read (another server
/// build) is said as such.
fn parse<T: DeserializeOwned>(what: &str, text: &str) -> Result<T> {
    serde_json::from_str(text).with_context(|| {
        format!("{what}: the server's answer is not what this client reads (another build?)")
    })
}

/// The server's `{"error": {"code", "message", …}}` as one line, with the figures some
/// refusals carry (when the quota frees a slot, when the phase opens or closed).
fn refusal(status: u16, text: &str) -> String {
    let Ok(ErrorBody { error: e }) = serde_json::from_str::<ErrorBody>(text) else {
        let text: String = text.chars().take(200).collect();
        return format!("the server answered {status}: {}", text.trim());
    };
    let mut line = format!("the server refused ({status} {}): {}", e.code, e.message);
    for (label, value) in [
        ("next slot", e.next_slot_at.as_ref().map(time)),
        ("opens", e.opens.as_ref().map(time)),
        ("closes", e.closes.as_ref().map(time)),
        ("state", e.state.as_ref().map(word)),
    ] {
        if let Some(v) = value {
            line.push_str(&format!("; {label}: {v}"));
        }
    }
    line
}

/// A folder packed as `.tar.gz` into a temporary file, streaming (never whole in
/// memory). Links are kept as links (the judge's unpack rules decide about them).
pub(crate) fn pack(dir: &Path) -> Result<tempfile::NamedTempFile> {
    let file = tempfile::Builder::new()
        .prefix("physiojudge-entry-")
        .suffix(".tar.gz")
        .tempfile()
        .context("a temporary file for the packed entry")?;
    let writer = std::io::BufWriter::new(file.as_file().try_clone()?);
    let gz = flate2::write::GzEncoder::new(writer, flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    tar.follow_symlinks(false);
    tar.mode(tar::HeaderMode::Deterministic);
    tar.append_dir_all(".", dir)
        .with_context(|| format!("packing {}", dir.display()))?;
    let gz = tar.into_inner().context("finishing the archive")?;
    let mut writer = gz.finish().context("finishing the archive")?;
    writer.flush().context("writing the archive")?;
    Ok(file)
}

pub fn submit(a: SubmitArgs, out: &mut dyn Write) -> Result<()> {
    let client = Client::new(&a.server)?;
    let meta =
        std::fs::metadata(&a.entry).with_context(|| format!("the entry {}", a.entry.display()))?;
    let packed;
    let archive = if meta.is_dir() {
        packed = pack(&a.entry)?;
        packed.path().to_path_buf()
    } else {
        a.entry.clone()
    };
    let size = std::fs::metadata(&archive)
        .with_context(|| format!("{}", archive.display()))?
        .len();
    let mut query = Vec::new();
    if let Some(p) = &a.phase {
        query.push(format!("phase={}", query_value(p)));
    }
    if let Some(m) = &a.method {
        query.push(format!("method={}", query_value(m)));
    }
    let path = format!(
        "/api/v1/challenges/{}/submissions{}{}",
        segment(&a.challenge),
        if query.is_empty() { "" } else { "?" },
        query.join("&")
    );
    let rt = runtime()?;
    rt.block_on(async {
        eprintln!(
            "uploading {} ({size} bytes) to {}",
            a.entry.display(),
            client.base
        );
        let created = upload(&client, &path, &archive, size).await?;
        let id = created.id.to_string();
        writeln!(out, "{id}")?;
        out.flush()?;
        eprintln!(
            "submission {id}: {} in phase {}, entry sha256 {}",
            word(&created.state),
            created.phase,
            created.entry_sha256,
        );
        if a.no_wait {
            return Ok(());
        }
        follow(&client, &id, out).await
    })
}

/// How many times an upload is sent, at most, while no answer (or a proxy's or
/// server's fault) comes back: 1 + 2 + 4 + 8 + 16 s of waiting between them.
const UPLOAD_TRIES: u32 = 6;

/// Uploads the archive, with an `Idempotency-Key` made for this upload and sent again
/// with every retry: an upload whose answer was lost (the connection dropped, a proxy's
/// 502 or timeout) is sent again, and the server answers a retry of one it recorded
/// with that submission, charged once (docs/service.md, "Uploads").
async fn upload(
    client: &Client,
    path: &str,
    archive: &Path,
    size: u64,
) -> Result<CreatedSubmission> {
    let key = uuid::Uuid::now_v7().to_string();
    let what = "uploading the entry";
    let mut wait = Duration::from_secs(1);
    let mut tries = 0;
    loop {
        tries += 1;
        let file = tokio::fs::File::open(archive)
            .await
            .with_context(|| format!("opening {}", archive.display()))?;
        let sent = client
            .http
            .post(client.url(path))
            .bearer_auth(&client.token)
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
            .header(reqwest::header::CONTENT_LENGTH, size)
            .header("idempotency-key", &key)
            .body(reqwest::Body::from(file))
            .send()
            .await;
        let fault = match sent {
            Err(e) => format!("no answer from {} ({e})", client.base),
            Ok(r) => {
                let status = r.status();
                let text = r.text().await;
                match text {
                    Err(e) => format!("the answer broke off ({e})"),
                    Ok(text) => {
                        if status.is_success() {
                            return parse(what, &text);
                        }
                        let transient = status.is_server_error()
                            || status == reqwest::StatusCode::REQUEST_TIMEOUT
                            || status == reqwest::StatusCode::TOO_MANY_REQUESTS;
                        let said = refusal(status.as_u16(), &text);
                        if !transient {
                            bail!("{what}: {said}");
                        }
                        said
                    }
                }
            }
        };
        if tries >= UPLOAD_TRIES {
            bail!("{what}: {fault}; gave up after {tries} tries");
        }
        eprintln!(
            "{what}: {fault}; sending it again in {}s (the same Idempotency-Key: \
             it is recorded once)",
            wait.as_secs()
        );
        tokio::time::sleep(wait).await;
        wait *= 2;
    }
}

pub fn status(a: StatusArgs, out: &mut dyn Write) -> Result<()> {
    let client = Client::new(&a.server)?;
    let rt = runtime()?;
    rt.block_on(async {
        if a.no_follow {
            let s = client.submission(&a.submission).await?;
            summary(&s, out)?;
            return exit_for(&s);
        }
        follow(&client, &a.submission, out).await
    })
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// One event of a server-sent event stream.
struct SseEvent {
    event: String,
    id: Option<String>,
    data: String,
}

/// Takes the complete events off the front of `buf`.
fn parse_events(buf: &mut String) -> Vec<SseEvent> {
    let mut events = Vec::new();
    loop {
        // Lines end with \n, \r\n or \r; an empty line ends an event.
        let normalised = buf.replace("\r\n", "\n").replace('\r', "\n");
        let Some(end) = normalised.find("\n\n") else {
            *buf = normalised;
            return events;
        };
        let block = normalised[..end].to_owned();
        *buf = normalised[end + 2..].to_owned();
        let mut e = SseEvent {
            event: "message".to_owned(),
            id: None,
            data: String::new(),
        };
        let mut any = false;
        for line in block.lines() {
            if line.starts_with(':') {
                continue; // a comment (keep-alive)
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line, ""),
            };
            match field {
                "event" => e.event = value.to_owned(),
                "id" => e.id = Some(value.to_owned()),
                "data" => {
                    if !e.data.is_empty() {
                        e.data.push('\n');
                    }
                    e.data.push_str(value);
                }
                _ => continue,
            }
            any = true;
        }
        if any {
            events.push(e);
        }
    }
}

/// Follows a submission to its final state: state changes as lines, stage progress as a
/// bar (or lines), then the summary on `out`. Reconnects (with `Last-Event-ID`) when the
/// stream breaks, as when the server restarts.
async fn follow(client: &Client, id: &str, out: &mut dyn Write) -> Result<()> {
    use futures_util::StreamExt;
    let mut bars = Bars::new();
    let mut s = client.submission(id).await?;
    bars.line(&format!(
        "submission {} of team {} in {} / {}: {}{}",
        s.id,
        s.team_name,
        s.challenge,
        s.phase,
        word(&s.state),
        position(&s),
    ));
    let mut last_seq: Option<String> = None;
    let mut state = s.state;
    let mut error_since = (state == StateName::Error).then(Instant::now);
    let mut stage: Option<String> = None;
    while !is_final(state) {
        if error_since.is_some_and(|t| t.elapsed() >= ERROR_SETTLES) {
            s = client.submission(id).await?;
            state = s.state;
            if state == StateName::Error {
                break;
            }
            error_since = None;
            continue;
        }
        let mut req = client
            .http
            .get(client.url(&format!("/api/v1/submissions/{}/events", segment(id))));
        if let Some(seq) = &last_seq {
            req = req.header("Last-Event-ID", seq.as_str());
        }
        let r = match req.bearer_auth(&client.token).send().await {
            Ok(r) => r,
            Err(e) => {
                bars.line(&format!("  (the event stream broke: {e}; trying again)"));
                tokio::time::sleep(Duration::from_secs(2)).await;
                continue;
            }
        };
        if !r.status().is_success() {
            let status = r.status().as_u16();
            let text = r.text().await.unwrap_or_default();
            bail!("following the submission: {}", refusal(status, &text));
        }
        let mut stream = r.bytes_stream();
        let mut buf = String::new();
        loop {
            // The server sends a keep-alive every 15 s; an `error` is looked at again
            // after a while without news.
            let next = tokio::time::timeout(Duration::from_secs(5), stream.next()).await;
            let chunk = match next {
                Err(_) => {
                    if error_since.is_some_and(|t| t.elapsed() >= ERROR_SETTLES) {
                        break;
                    }
                    continue;
                }
                Ok(Some(Ok(chunk))) => chunk,
                Ok(Some(Err(_)) | None) => break,
            };
            buf.push_str(&String::from_utf8_lossy(&chunk));
            for e in parse_events(&mut buf) {
                match e.event.as_str() {
                    "state" => {
                        let Ok(data) = serde_json::from_str::<StateEvent>(&e.data) else {
                            continue;
                        };
                        if e.id.is_some() {
                            last_seq = e.id.clone();
                        }
                        let change = data.change;
                        bars.line(&format!(
                            "{} → {} ({})",
                            change.from.as_ref().map_or_else(|| "new".to_owned(), word),
                            word(&change.to),
                            change.reason
                        ));
                        error_since = (change.to == StateName::Error).then(Instant::now);
                        stage = None;
                        state = change.to;
                    }
                    "progress" => {
                        let Ok(data) = serde_json::from_str::<ProgressEvent>(&e.data) else {
                            continue;
                        };
                        let (now, done, total) = (data.stage, data.done, data.total);
                        if now.is_empty() {
                            continue;
                        }
                        if stage.as_deref() != Some(now.as_str()) {
                            bars.stage(&now, total);
                            stage = Some(now.clone());
                        }
                        if total > 0 {
                            bars.record(&now, done, total, None);
                        }
                    }
                    _ => {}
                }
            }
            if is_final(state) {
                break;
            }
        }
        if !is_final(state) && error_since.is_none() {
            // The stream ended without a final state (the server stopped): look again.
            tokio::time::sleep(Duration::from_secs(1)).await;
            match client.submission(id).await {
                Ok(now) => state = now.state,
                Err(e) => bars.line(&format!("  ({e:#}; trying again)")),
            }
        }
    }
    bars.line("");
    let s = client.submission(id).await?;
    summary(&s, out)?;
    exit_for(&s)
}

fn position(s: &SubmissionView) -> String {
    match s.queue_position {
        Some(n) => format!(" (queue position {n})"),
        None => String::new(),
    }
}

/// The exit status a submission's state calls for.
fn exit_for(s: &SubmissionView) -> Result<()> {
    let id = s.id;
    let reason = s.reason.as_deref().unwrap_or("");
    match s.state {
        StateName::Scored | StateName::Queued | StateName::Running => Ok(()),
        StateName::Failed => Err(Exit::new(1, format!("submission {id} failed: {reason}")).into()),
        StateName::Withdrawn => Err(Exit::new(1, format!("submission {id} was withdrawn")).into()),
        StateName::Error => {
            Err(Exit::new(3, format!("submission {id} is in error: {reason}")).into())
        }
    }
}

/// The submission as a team sees it: state, stages, scores, warnings, how to reproduce.
fn summary(s: &SubmissionView, out: &mut dyn Write) -> Result<()> {
    writeln!(out, "submission {}", s.id)?;
    writeln!(
        out,
        "team       {} · challenge {} · phase {}",
        s.team_name, s.challenge, s.phase
    )?;
    writeln!(
        out,
        "state      {}{} (attempts: {})",
        word(&s.state),
        position(s),
        s.attempts
    )?;
    if let Some(r) = &s.reason {
        writeln!(out, "reason     {r}")?;
    }
    if !s.stages.is_empty() {
        writeln!(out)?;
        writeln!(out, "{:<6} {:>8}  outcome", "stage", "time")?;
        for st in &s.stages {
            let mut text = word(&st.outcome);
            if let Some(r) = &st.reason {
                text.push_str(&format!(": {r}"));
            }
            if let Some(c) = &st.counts {
                text.push_str(&format!(
                    " — {} records: {} ok, {} failed, {} timed out, {} without usable output",
                    c.records, c.ok, c.failures, c.timeouts, c.defaulted
                ));
            }
            writeln!(out, "{:<6} {:>7.1}s  {text}", st.stage, st.seconds)?;
        }
    }
    writeln!(out)?;
    if let Some(q) = &s.quiz {
        writeln!(out, "quiz score {}", q.score)?;
    }
    for (key, v) in &s.scores {
        writeln!(out, "exam {key:<13} {}", figure(*v))?;
    }
    if let Some(until) = &s.scores_hidden_until {
        writeln!(out, "exam scores hidden until {}", time(until))?;
    }
    if !s.warnings.is_empty() {
        let w = &s.warnings;
        writeln!(out, "warnings   {}", w.len())?;
        for x in w.iter().take(20) {
            let text = x.as_str().map_or_else(|| x.to_string(), str::to_owned);
            writeln!(out, "  {text}")?;
        }
        if w.len() > 20 {
            writeln!(out, "  … and {} more", w.len() - 20)?;
        }
    }
    if !s.reproduce.command.is_empty() {
        writeln!(out, "reproduce  {}", s.reproduce.command)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_parsed_across_chunks_and_line_ends() {
        let mut buf = String::from("event: state\nid: 1\ndata: {\"to\":\"queued\"}\n\n: ke");
        let e = parse_events(&mut buf);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].event, "state");
        assert_eq!(e[0].id.as_deref(), Some("1"));
        assert_eq!(e[0].data, "{\"to\":\"queued\"}");
        assert_eq!(buf, ": ke");
        buf.push_str("ep-alive\n\nevent: progress\r\ndata: {}\r\n\r\n");
        let e = parse_events(&mut buf);
        assert_eq!(e.len(), 1, "a comment alone is no event");
        assert_eq!(e[0].event, "progress");
        assert!(buf.is_empty());
    }

    #[test]
    fn refusals_are_one_clear_line() {
        let json = r#"{"error": {"code": "quota_spent",
            "message": "the team's quota is spent", "next_slot_at": "2026-03-03T00:00:00Z"}}"#;
        assert_eq!(
            refusal(409, json),
            "the server refused (409 quota_spent): the team's quota is spent; \
             next slot: 2026-03-03T00:00:00Z"
        );
        assert_eq!(
            refusal(502, "Bad Gateway\n"),
            "the server answered 502: Bad Gateway"
        );
    }

    #[test]
    fn ids_cannot_leave_their_segment() {
        assert_eq!(segment("../users/me"), "..%2Fusers%2Fme");
        assert_eq!(query_value("a b&c=d"), "a%20b%26c%3Dd");
    }
}
