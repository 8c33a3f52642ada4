//! The connection loop: accepts TCP connections and serves HTTP/1.1 on each with
//! hyper, in place of `axum::serve`, which offers no header-read timeout.
//!
//! - **A header-read timeout** ([`Connections::header_timeout`]): a connection that
//!   has not sent a whole request head by then is closed. hyper starts this clock
//!   whenever it waits for a head, so it also closes a kept-alive connection that sits
//!   idle between requests. Without it, a client that sends half a request holds a
//!   connection (and a file descriptor) for ever.
//! - **An idle timeout** ([`Connections::idle_timeout`]): a connection on which no byte
//!   moved either way for that long is closed (a stalled upload, a client that stopped
//!   reading). An event stream is not idle: it sends a keep-alive comment every 15 s.
//! - **The caller's address** ([`crate::ClientAddr`]) in every request's extensions:
//!   the peer's, or the one a trusted proxy's header gives.
//! - Failing to accept (out of file descriptors) is logged and retried after a pause,
//!   rather than ending the server or spinning.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{HeaderMap, HeaderName, Request};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

use crate::ClientAddr;

/// How connections are kept.
#[derive(Debug, Clone)]
pub struct Connections {
    /// The longest a client may take to send a request's head (its line and
    /// headers), and the longest a kept-alive connection waits for its next request.
    pub header_timeout: Duration,
    /// The longest a connection may go without a byte either way.
    pub idle_timeout: Duration,
    /// Behind a reverse proxy: the header it puts the client's address in
    /// (`X-Forwarded-For`: its last address is taken, the one the proxy added;
    /// `X-Real-IP`: the address). Only set it when every request comes through that
    /// proxy: anyone who can reach the server directly can write the header.
    pub trusted_proxy_header: Option<HeaderName>,
}

impl Default for Connections {
    fn default() -> Connections {
        Connections {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            trusted_proxy_header: None,
        }
    }
}

/// The caller's address: from the trusted header if there is one and it holds an
/// address, else the peer's.
fn client_addr(headers: &HeaderMap, peer: IpAddr, trusted: Option<&HeaderName>) -> IpAddr {
    trusted
        .and_then(|h| headers.get(h))
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.rsplit(',').next())
        .and_then(|v| v.trim().parse::<IpAddr>().ok())
        .unwrap_or(peer)
}

/// Serves `router` on `listener` until `stop` completes, then lets the requests in
/// progress finish (new connections are no longer accepted).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    connections: Connections,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let connections = Arc::new(connections);
    let (closing, _) = tokio::sync::watch::channel(false);
    let closing = Arc::new(closing);
    let mut stop = std::pin::pin!(stop);
    loop {
        let (tcp, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) if is_per_connection(&e) => continue,
                Err(e) => {
                    // Out of file descriptors (EMFILE) or memory: the connections
                    // open now must end before another can start.
                    tracing::warn!("accepting a connection: {e}; pausing 100 ms");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let _ = tcp.set_nodelay(true);
        tokio::spawn(connection(
            tcp,
            peer,
            router.clone(),
            connections.clone(),
            closing.subscribe(),
        ));
    }
    drop(listener);
    closing.send_replace(true);
    // Each connection holds a receiver until it ends.
    while closing.receiver_count() > 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// Errors of one connection being accepted that say nothing of the listener.
fn is_per_connection(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

async fn connection(
    tcp: TcpStream,
    peer: SocketAddr,
    router: Router,
    connections: Arc<Connections>,
    mut closing: tokio::sync::watch::Receiver<bool>,
) {
    let started = Instant::now();
    let last = Arc::new(AtomicU64::new(0));
    let io = TokioIo::new(Activity {
        inner: tcp,
        started,
        last: last.clone(),
    });
    let trusted = connections.trusted_proxy_header.clone();
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let mut req = req.map(axum::body::Body::new);
        let addr = client_addr(req.headers(), peer.ip(), trusted.as_ref());
        req.extensions_mut().insert(ClientAddr(addr));
        let router = router.clone();
        async move { Ok::<_, Infallible>(router.oneshot(req).await.unwrap_or_else(|e| match e {})) }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(connections.header_timeout);
    let conn = builder.serve_connection(io, service);
    let mut conn = std::pin::pin!(conn);
    let idle = connections.idle_timeout;
    let mut tick =
        tokio::time::interval((idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(5)));
    let mut shutting = *closing.borrow();
    if shutting {
        conn.as_mut().graceful_shutdown();
    }
    loop {
        tokio::select! {
            r = conn.as_mut() => {
                if let Err(e) = r {
                    tracing::debug!("connection from {peer}: {e}");
                }
                break;
            }
            changed = closing.changed(), if !shutting => {
                shutting = true;
                if changed.is_ok() {
                    conn.as_mut().graceful_shutdown();
                }
            }
            _ = tick.tick() => {
                let moved = Duration::from_millis(last.load(Ordering::Relaxed));
                if started.elapsed().saturating_sub(moved) > idle {
                    tracing::debug!("connection from {peer}: idle for {idle:?}, closed");
                    break;
                }
            }
        }
    }
}

/// A connection that notes when a byte last moved on it (milliseconds since it
/// started).
struct Activity {
    inner: TcpStream,
    started: Instant,
    last: Arc<AtomicU64>,
}

impl Activity {
    fn moved(&self) {
        let ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last.store(ms, Ordering::Relaxed);
    }
}

impl AsyncRead for Activity {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.moved();
        }
        r
    }
}

impl AsyncWrite for Activity {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.moved();
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.moved();
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_is_the_peers_unless_a_trusted_header_gives_one() {
        let peer = IpAddr::from([10, 0, 0, 1]);
        let mut h = HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            "203.0.113.9, 198.51.100.7".parse().unwrap(),
        );
        assert_eq!(client_addr(&h, peer, None), peer, "not trusted: ignored");
        let xff = HeaderName::from_static("x-forwarded-for");
        assert_eq!(
            client_addr(&h, peer, Some(&xff)),
            IpAddr::from([198, 51, 100, 7]),
            "the address the proxy added: the last"
        );
        h.insert("x-forwarded-for", "not an address".parse().unwrap());
        assert_eq!(client_addr(&h, peer, Some(&xff)), peer);
        assert_eq!(client_addr(&HeaderMap::new(), peer, Some(&xff)), peer);
    }
}
