//! Job notices over NATS JetStream.
//!
//! One stream per platform (`PHYSIOJUDGE_JOBS` unless the queue address names another),
//! with work-queue retention: a notice goes to one worker and is gone once it is acked.
//! Every worker pulls from the same durable consumer (`workers`), so each notice wakes
//! one idle worker; a worker that dies holding a notice does not ack it, and JetStream
//! hands it to another after the ack wait.
//!
//! Notices heal (docs/service.md, "A fleet"): a worker's pull waits are short and sent
//! again, and one under way is ended as soon as the connection comes back, so a NATS
//! restart (which forgets pending pulls) never leaves a worker deaf until its poll; after
//! a restart, or on a failure that says the stream or consumer is gone (a NATS that
//! came back with an empty store), each side makes again what it owns — the server the
//! stream, a worker the stream and its consumer. Stale notices are coalesced: a notice
//! whose take found nothing purges every notice stored when it was delivered.

use std::str::FromStr;
use std::time::Duration;

use async_nats::jetstream::{self, consumer, stream};
use futures_util::StreamExt;
use tokio::task::JoinHandle;

use crate::FleetError;

/// The stream's name when the queue address names none.
pub const DEFAULT_STREAM: &str = "PHYSIOJUDGE_JOBS";

/// The shared durable consumer every worker pulls from.
const CONSUMER: &str = "workers";

/// A notice older than this is dropped unread: by then every idle worker has polled.
const NOTICE_AGE: Duration = Duration::from_secs(600);

/// A worker that took a notice and neither acked it nor came back within this long is
/// taken to be gone: the notice goes to another worker.
const ACK_WAIT: Duration = Duration::from_secs(30);

/// Rings at once past this many: the rest are a burst that polls pick up.
const MAX_RINGS: u64 = 256;

/// The longest one pull request waits on the NATS server. A restarted server forgets
/// pending pulls; a short one sent again costs one tiny request per worker this often,
/// and bounds how long a lost one can leave a worker deaf (this plus the client's own
/// 5 s margin) should the reconnection go unnoticed.
const PULL_WAIT: Duration = Duration::from_secs(3);

/// A `--queue` address: `nats://host:port` or `nats://host:port/STREAM`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueUrl {
    /// `nats://host:port`, as NATS is dialled.
    pub server: String,
    /// The JetStream stream's name.
    pub stream: String,
}

impl QueueUrl {
    /// The subject notices are published on (the stream's own: two platforms on one
    /// NATS server keep apart).
    pub fn subject(&self) -> String {
        format!("physiojudge.{}.jobs", self.stream)
    }
}

impl FromStr for QueueUrl {
    type Err = FleetError;

    fn from_str(url: &str) -> Result<QueueUrl, FleetError> {
        let bad = |why: &str| FleetError::BadQueueUrl {
            url: url.to_owned(),
            why: why.to_owned(),
        };
        let rest = url
            .strip_prefix("nats://")
            .ok_or_else(|| bad("expected nats://host:port[/STREAM]"))?;
        let (host, stream) = match rest.split_once('/') {
            Some((h, s)) => (h, s.trim_end_matches('/')),
            None => (rest, ""),
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let stream = if stream.is_empty() {
            DEFAULT_STREAM
        } else {
            stream
        };
        // JetStream's names: no dots, spaces, wildcards or separators.
        let plain = stream.len() <= 64
            && stream
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !plain {
            return Err(bad(
                "the stream name is letters, digits, '_' and '-' only, at most 64",
            ));
        }
        Ok(QueueUrl {
            server: format!("nats://{host}"),
            stream: stream.to_owned(),
        })
    }
}

fn nats(what: &'static str) -> impl FnOnce(&dyn std::fmt::Display) -> FleetError {
    move |e| FleetError::Nats {
        what,
        why: e.to_string(),
    }
}

/// A connection to a platform's job notices.
#[derive(Clone)]
pub struct Doorbell {
    url: QueueUrl,
    js: jetstream::Context,
    /// The stream as last made or found (made again when NATS lost it).
    stream: std::sync::Arc<tokio::sync::Mutex<stream::Stream>>,
    /// Counts the client's connections: a change is a reconnection.
    reconnects: tokio::sync::watch::Receiver<u64>,
}

/// The stream, made if it is not there (the server and every worker make it alike).
async fn make_stream(
    js: &jetstream::Context,
    url: &QueueUrl,
) -> Result<stream::Stream, FleetError> {
    js.get_or_create_stream(stream::Config {
        name: url.stream.clone(),
        subjects: vec![url.subject()],
        retention: stream::RetentionPolicy::WorkQueue,
        max_age: NOTICE_AGE,
        max_messages: 100_000,
        discard: stream::DiscardPolicy::Old,
        ..Default::default()
    })
    .await
    .map_err(|e| nats("stream")(&e))
}

/// The workers' shared consumer on `stream`, made if it is not there.
async fn make_consumer(stream: &stream::Stream) -> Result<consumer::PullConsumer, FleetError> {
    stream
        .get_or_create_consumer(
            CONSUMER,
            consumer::pull::Config {
                durable_name: Some(CONSUMER.to_owned()),
                ack_policy: consumer::AckPolicy::Explicit,
                ack_wait: ACK_WAIT,
                ..Default::default()
            },
        )
        .await
        .map_err(|e| nats("consumer")(&e))
}

impl std::fmt::Debug for Doorbell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Doorbell").field("url", &self.url).finish()
    }
}

impl Doorbell {
    /// Dials NATS and makes the stream if it is not there yet (the server and every
    /// worker make it alike, so whichever starts first does).
    pub async fn connect(url: &QueueUrl) -> Result<Doorbell, FleetError> {
        let (tx, reconnects) = tokio::sync::watch::channel(0u64);
        let client = async_nats::ConnectOptions::new()
            .name("physiojudge")
            .connection_timeout(Duration::from_secs(10))
            .event_callback(move |event| {
                let tx = tx.clone();
                async move {
                    // Every (re)connection: pulls pending before it are forgotten.
                    if let async_nats::Event::Connected = event {
                        tx.send_modify(|n| *n += 1);
                    }
                }
            })
            .connect(url.server.as_str())
            .await
            .map_err(|e| nats("connect")(&e))?;
        let js = jetstream::new(client);
        let stream = make_stream(&js, url).await?;
        Ok(Doorbell {
            url: url.clone(),
            js,
            stream: std::sync::Arc::new(tokio::sync::Mutex::new(stream)),
            reconnects,
        })
    }

    pub fn url(&self) -> &QueueUrl {
        &self.url
    }

    /// Publishes `n` notices, each stored by JetStream before this returns. A publish
    /// that fails (no stream listens: NATS came back with an empty store) makes the
    /// stream again and tries once more.
    pub async fn ring(&self, n: u64) -> Result<(), FleetError> {
        if n == 0 {
            return Ok(());
        }
        match self.publish(n).await {
            Ok(()) => Ok(()),
            Err(first) => {
                tracing::info!("ringing: {first}; making the notices' stream again");
                *self.stream.lock().await = make_stream(&self.js, &self.url).await?;
                self.publish(n).await
            }
        }
    }

    async fn publish(&self, n: u64) -> Result<(), FleetError> {
        let subject = self.url.subject();
        let mut acks = Vec::new();
        for _ in 0..n {
            acks.push(
                self.js
                    .publish(subject.clone(), Vec::new().into())
                    .await
                    .map_err(|e| nats("publish")(&e))?,
            );
        }
        for ack in acks {
            ack.await.map_err(|e| nats("publish")(&e))?;
        }
        Ok(())
    }

    /// A worker's end: notices from the shared consumer.
    pub async fn listener(&self) -> Result<Listener, FleetError> {
        let consumer = make_consumer(&*self.stream.lock().await).await?;
        Ok(Listener {
            bell: self.clone(),
            consumer: tokio::sync::Mutex::new(consumer),
            counts: Counts::default(),
        })
    }

    /// Notices stored and not yet taken (a test's and an operator's figure).
    pub async fn waiting(&self) -> Result<u64, FleetError> {
        let mut stream = self.stream.lock().await.clone();
        let info = stream.info().await.map_err(|e| nats("stream info")(&e))?;
        Ok(info.state.messages)
    }

    /// Removes the stream and its notices (a test's own stream, at its end).
    pub async fn delete(self) -> Result<(), FleetError> {
        self.js
            .delete_stream(&self.url.stream)
            .await
            .map_err(|e| nats("delete stream")(&e))?;
        Ok(())
    }
}

/// A worker's end of the doorbell.
pub struct Listener {
    bell: Doorbell,
    /// The consumer as last made or found (made again when NATS lost it).
    consumer: tokio::sync::Mutex<consumer::PullConsumer>,
    counts: Counts,
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Listener")
    }
}

/// What a listener has seen since it was made (an operator's and a test's figures).
#[derive(Debug, Default)]
struct Counts {
    notices: std::sync::atomic::AtomicU64,
    purged: std::sync::atomic::AtomicU64,
    remade: std::sync::atomic::AtomicU64,
}

/// A listener's figures: notices delivered, stale notices purged after an empty take,
/// and how often the stream and consumer were made again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoticeCounts {
    pub delivered: u64,
    pub purged: u64,
    pub remade: u64,
}

/// A notice taken from the stream: ack it with [`Notice::done`] once the take it
/// prompted was made (whatever it returned), so that it goes to no one else.
pub struct Notice(jetstream::Message);

impl Notice {
    pub async fn done(self) {
        if let Err(e) = self.0.ack().await {
            // Not acked: JetStream hands it out again after the ack wait, which costs
            // one empty take somewhere.
            tracing::warn!("acknowledging a job notice: {e}");
        }
    }

    /// The stream's last sequence when this notice was delivered, as far as NATS said:
    /// the notice's own plus those still pending after it (`None` if NATS did not say).
    /// Gaps (purged notices) make it lower, never higher.
    fn last_at_delivery(&self) -> Option<u64> {
        self.0
            .info()
            .ok()
            .map(|i| i.stream_sequence.saturating_add(i.pending))
    }
}

impl Listener {
    /// The next notice, waiting up to `up_to` (at least 100 ms: JetStream's pull
    /// requests need a little time to expire cleanly); `None` if none came. The wait is
    /// made of pulls of at most [`PULL_WAIT`], each ended early when the connection
    /// comes back (the server forgot it); after a reconnection or a failed pull the
    /// stream and consumer are made again if NATS lost them. Errs only when that fails.
    pub async fn wait(&self, up_to: Duration) -> Result<Option<Notice>, FleetError> {
        let until = tokio::time::Instant::now() + up_to.max(Duration::from_millis(100));
        let mut reconnects = self.bell.reconnects.clone();
        reconnects.borrow_and_update();
        loop {
            let left = until.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            let consumer = self.consumer.lock().await.clone();
            let pulled = async {
                let mut batch = consumer
                    .fetch()
                    .max_messages(1)
                    .expires(left.clamp(Duration::from_millis(100), PULL_WAIT))
                    .messages()
                    .await
                    .map_err(|e| nats("fetch")(&e))?;
                match batch.next().await {
                    Some(Ok(m)) => Ok(Some(m)),
                    Some(Err(e)) => Err(nats("fetch")(&e)),
                    None => Ok(None),
                }
            };
            let failed = tokio::select! {
                r = pulled => match r {
                    Ok(Some(m)) => {
                        self.counts.notices.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        return Ok(Some(Notice(m)));
                    }
                    Ok(None) => continue,
                    Err(e) => Some(e),
                },
                changed = reconnects.changed() => {
                    if changed.is_err() {
                        // The client is gone for good: nothing more will come.
                        return Err(nats("fetch")(&"the connection is closed"));
                    }
                    reconnects.borrow_and_update();
                    None
                }
            };
            if let Some(e) = &failed {
                tracing::info!("waiting for a job notice: {e}; making the consumer again");
            }
            match self.remake().await {
                Ok(()) => {}
                // NATS is still down or refuses: the caller polls meanwhile.
                Err(e) if failed.is_some() => return Err(e),
                Err(e) => tracing::warn!("after reconnecting to NATS: {e}"),
            }
        }
    }

    /// The stream and this worker's consumer, made again if NATS lost them (a restart
    /// with an empty store); found as they are otherwise.
    async fn remake(&self) -> Result<(), FleetError> {
        let stream = make_stream(&self.bell.js, &self.bell.url).await?;
        let consumer = make_consumer(&stream).await?;
        *self.bell.stream.lock().await = stream;
        *self.consumer.lock().await = consumer;
        self.counts
            .remade
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// `notice` prompted a take that found nothing: every notice stored when it was
    /// delivered is stale (all were published before the take, which found the queue
    /// with nothing takeable), so they are purged rather than each costing an empty
    /// take. Notices published since are kept: they may be for a job queued after the
    /// take. Only for a worker that takes any challenge's jobs — one that takes some
    /// only cannot speak for the others.
    pub async fn stale(&self, notice: &Notice) {
        let Some(last) = notice.last_at_delivery() else {
            return;
        };
        let stream = self.bell.stream.lock().await.clone();
        // Below `last + 1`: up to and including the last one stored at delivery.
        match stream.purge().sequence(last.saturating_add(1)).await {
            Ok(r) => {
                self.counts
                    .purged
                    .fetch_add(r.purged, std::sync::atomic::Ordering::Relaxed);
            }
            Err(e) => tracing::warn!("purging stale job notices: {e}"),
        }
    }

    /// What this listener has seen so far.
    pub fn counts(&self) -> NoticeCounts {
        let get = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed);
        NoticeCounts {
            delivered: get(&self.counts.notices),
            purged: get(&self.counts.purged),
            remade: get(&self.counts.remade),
        }
    }
}

/// Rings the doorbell once for each time `queue` is woken (a submission queued, queued
/// again, a challenge resumed), until the returned task is aborted. A ring that fails
/// (NATS down) is logged and dropped: workers' polls find the job.
pub fn spawn_ringer(queue: &dispatch::LocalQueue, bell: Doorbell) -> JoinHandle<()> {
    let mut wakes = queue.wakes();
    // Read now, not in the task: a wake-up between this call and the task's first poll
    // is rung too.
    let mut seen = *wakes.borrow_and_update();
    tokio::spawn(async move {
        while wakes.changed().await.is_ok() {
            let now = *wakes.borrow_and_update();
            let n = now.wrapping_sub(seen).min(MAX_RINGS);
            seen = now;
            if let Err(e) = bell.ring(n).await {
                tracing::warn!(
                    "ringing remote workers: {e} (they find the job at their next poll)"
                );
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_addresses() {
        let u: QueueUrl = "nats://127.0.0.1:4222".parse().unwrap();
        assert_eq!(u.server, "nats://127.0.0.1:4222");
        assert_eq!(u.stream, DEFAULT_STREAM);
        assert_eq!(u.subject(), "physiojudge.PHYSIOJUDGE_JOBS.jobs");
        let u: QueueUrl = "nats://nats.example:4222/contest-2027/".parse().unwrap();
        assert_eq!(u.stream, "contest-2027");
        for bad in [
            "http://x:4222",
            "nats://",
            "nats:///s",
            "nats://h/a.b",
            "nats://h/a b",
            "nats://h/a/b",
            "nats://h/*",
        ] {
            let e = bad.parse::<QueueUrl>().unwrap_err();
            assert!(e.to_string().contains(bad), "{bad}: {e}");
        }
    }
}
