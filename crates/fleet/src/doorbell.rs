//! Job notices over NATS JetStream.
//!
//! One stream per platform (`PHYSIOJUDGE_JOBS` unless the queue address names another),
//! with work-queue retention: a notice goes to one worker and is gone once it is acked.
//! Every worker pulls from the same durable consumer (`workers`), so each notice wakes
//! one idle worker; a worker that dies holding a notice does not ack it, and JetStream
//! hands it to another after the ack wait.

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
    stream: stream::Stream,
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
        let client = async_nats::ConnectOptions::new()
            .name("physiojudge")
            .connection_timeout(Duration::from_secs(10))
            .connect(url.server.as_str())
            .await
            .map_err(|e| nats("connect")(&e))?;
        let js = jetstream::new(client);
        let stream = js
            .get_or_create_stream(stream::Config {
                name: url.stream.clone(),
                subjects: vec![url.subject()],
                retention: stream::RetentionPolicy::WorkQueue,
                max_age: NOTICE_AGE,
                max_messages: 100_000,
                discard: stream::DiscardPolicy::Old,
                ..Default::default()
            })
            .await
            .map_err(|e| nats("stream")(&e))?;
        Ok(Doorbell {
            url: url.clone(),
            js,
            stream,
        })
    }

    pub fn url(&self) -> &QueueUrl {
        &self.url
    }

    /// Publishes `n` notices, each stored by JetStream before this returns.
    pub async fn ring(&self, n: u64) -> Result<(), FleetError> {
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
        let consumer = self
            .stream
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
            .map_err(|e| nats("consumer")(&e))?;
        Ok(Listener { consumer })
    }

    /// Notices stored and not yet taken (a test's and an operator's figure).
    pub async fn waiting(&self) -> Result<u64, FleetError> {
        let mut stream = self.stream.clone();
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
    consumer: consumer::PullConsumer,
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Listener")
    }
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
}

impl Listener {
    /// The next notice, waiting up to `up_to` (at least 100 ms: JetStream's pull
    /// requests need a little time to expire cleanly); `None` if none came.
    pub async fn wait(&self, up_to: Duration) -> Result<Option<Notice>, FleetError> {
        let mut batch = self
            .consumer
            .fetch()
            .max_messages(1)
            .expires(up_to.max(Duration::from_millis(100)))
            .messages()
            .await
            .map_err(|e| nats("fetch")(&e))?;
        match batch.next().await {
            Some(Ok(m)) => Ok(Some(Notice(m))),
            Some(Err(e)) => Err(nats("fetch")(&e)),
            None => Ok(None),
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
