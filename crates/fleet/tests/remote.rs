//! The remote worker's HTTP client against a plain TCP listener: it must speak TLS to
//! an `https://` server (a fleet's server is reached over the network, behind a TLS
//! proxy), and a server that answers nothing it can read is a typed, retryable error.

use std::io::Read;
use std::net::TcpListener;
use std::time::Duration;

use dispatch::DispatchError;
use fleet::{RemoteConfig, RemoteDispatch};

fn announcement() -> store::Announcement {
    store::Announcement {
        build: store::Build {
            judge_version: "test".into(),
            runtime_lock: "test".into(),
        },
        slots: Some(1),
        host: None,
        instance: None,
    }
}

/// The first bytes a client sends to `listener`, read on a thread (none if no client
/// comes within 10 s).
fn first_bytes(listener: TcpListener) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        listener.set_nonblocking(true).unwrap();
        let until = std::time::Instant::now() + Duration::from_secs(10);
        let mut s = loop {
            match listener.accept() {
                Ok((s, _)) => break s,
                Err(_) if std::time::Instant::now() < until => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(_) => return Vec::new(),
            }
        };
        s.set_nonblocking(false).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 16];
        let n = s.read(&mut buf).unwrap_or(0);
        buf[..n].to_vec()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_server_is_spoken_to_in_tls() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = first_bytes(listener);
    let state = tempfile::tempdir().unwrap();
    let config = RemoteConfig::new(&format!("https://127.0.0.1:{port}"), "t", state.path());
    let e = RemoteDispatch::connect(config, &announcement(), None)
        .await
        .unwrap_err();
    // A TLS handshake record (0x16) of TLS 1.x (0x03 …): not plain HTTP.
    let head = seen.join().unwrap();
    assert!(head.starts_with(&[0x16, 0x03]), "{head:?}");
    assert!(matches!(e, DispatchError::Unreachable(_)), "{e:?}");
    assert!(e.is_transient());
}

/// A server on a loopback port that answers every request with `answer`.
fn answering(answer: &'static [u8]) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::Write;
        for s in listener.incoming() {
            let Ok(mut s) = s else { break };
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = s.write_all(answer);
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_token_is_final_not_retried() {
    let port = answering(
        b"HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: 66\r\n\r\n{\"error\":{\"code\":\"bad_token\",\"message\":\"this token is not known\"}}",
    );
    let state = tempfile::tempdir().unwrap();
    let config = RemoteConfig::new(&format!("http://127.0.0.1:{port}"), "t", state.path());
    let e = RemoteDispatch::connect(config, &announcement(), None)
        .await
        .unwrap_err();
    assert!(matches!(e, DispatchError::Rejected(_)), "{e:?}");
    assert!(!e.is_transient());
    assert!(e.to_string().contains("this token is not known"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_is_not_the_platform_is_a_retryable_error() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::Write;
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = [0u8; 4096];
        let _ = s.read(&mut buf);
        let _ = s.write_all(
            b"HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/html\r\ncontent-length: 9\r\n\r\n<h1>no</h1",
        );
    });
    let state = tempfile::tempdir().unwrap();
    let config = RemoteConfig::new(&format!("http://127.0.0.1:{port}"), "t", state.path());
    let e = RemoteDispatch::connect(config, &announcement(), None)
        .await
        .unwrap_err();
    assert!(matches!(e, DispatchError::Unreachable(_)), "{e:?}");
    assert!(e.to_string().contains("502"), "{e}");
}
