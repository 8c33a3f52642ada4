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

/// `serve` raises its soft limit on open files to the hard limit at start, and logs it:
/// started (as systemd would) with a low soft limit, the running process's limits show
/// the soft limit equal to the hard one. `prlimit` (util-linux) sets the soft limit
/// and then becomes `serve` (exec), so its pid is the server's.
#[test]
fn serve_raises_its_open_files_limit() {
    use nix::sys::resource::{Resource, getrlimit};
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    // Below the hard limit, so that raising it shows; 256 unless the hard one is lower.
    let low = 256.min(hard / 2);
    assert!(low >= 32, "hard limit {hard} too low for this test");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let tmp = env!("CARGO_TARGET_TMPDIR");
    let child = std::process::Command::new("prlimit")
        .arg(format!("--nofile={low}:"))
        .arg(env!("CARGO_BIN_EXE_physiojudge"))
        .args(["serve", "--state"])
        .arg(&state)
        .args(["--listen", "127.0.0.1:0", "--workers", "0"])
        .env(
            "XDG_DATA_HOME",
            std::path::Path::new(tmp).join("xdg-data-home"),
        )
        .env(
            "PHYSIOJUDGE_RUNTIME_DIR",
            std::path::Path::new(tmp).join("runtime"),
        )
        .env("PHYSIOJUDGE_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Child(child);
    let mut first = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("http://"), "serve did not start: {first:?}");
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", child.0.id())).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap_or_else(|| panic!("no open files line in {limits}"));
    let numbers: Vec<u64> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(numbers, [hard, hard], "{line}");

    let _ = child.0.kill();
    let _ = child.0.wait();
    let mut log = String::new();
    child
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    assert!(
        log.contains(&format!("soft limit raised from {low} to {hard}")),
        "{log}"
    );
}
