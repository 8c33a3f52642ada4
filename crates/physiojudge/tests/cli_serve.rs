//! `physiojudge admin` and `physiojudge serve`: the first organiser's token, made with
//! no server running, is good on the server the real binary then serves
//! (docs/service.md, "HTTP API").

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;

use testkit::{physiojudge, physiojudge_command, text};

/// One HTTP/1.1 GET: the status line and the body.
fn get(addr: &str, path: &str, token: &str) -> (String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let status = answer.lines().next().unwrap_or_default().to_owned();
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// Kills the server when the test ends, however it ends.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn admin_makes_the_first_organiser_and_serve_accepts_its_token() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let state = state.to_str().unwrap();
    let o = physiojudge!(&[
        "admin",
        "--state",
        state,
        "user",
        "add",
        "boss",
        "--organiser"
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8(o.stdout).unwrap();
    let token = stdout.trim();
    assert!(
        token.starts_with("pj_") && token.len() == 67 && stdout.lines().count() == 1,
        "{stdout:?}"
    );
    // A name once.
    let o = physiojudge!(&["admin", "--state", state, "user", "add", "boss"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("already exists"), "{}", text(&o));

    let child = physiojudge_command!()
        // No workers: this test is about accounts and the API (workers take sandbox
        // slots from 0, which other tests use).
        .args([
            "serve",
            "--state",
            state,
            "--listen",
            "127.0.0.1:0",
            "--workers",
            "0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut child = Child(child);
    let mut first = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // "physiojudge serving http://ADDR/api/v1 (state …)"
    let addr = first
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_owned();
    let (status, body) = get(&addr, "/healthz", "");
    assert!(status.contains(" 200 "), "{status}: {body}");
    let (status, body) = get(&addr, "/api/v1/users/me", token);
    assert!(status.contains(" 200 "), "{status}: {body}");
    assert!(body.contains(r#""name":"boss""#) && body.contains(r#""role":"organiser""#));
    let (status, _) = get(&addr, "/api/v1/users/me", "pj_wrong");
    assert!(status.contains(" 401 "), "{status}");
}
