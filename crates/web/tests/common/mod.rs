//! What the web tests share: a site over a fresh store with its accounts and forms
//! (`site`), the platform with real workers (`served`), chromedriver with a headless
//! Chromium session, and small helpers that wait for the page rather than for the
//! clock. Each test binary uses its own part of it.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

pub mod served;
pub mod site;

/// `both!(case, …)`: each `async fn case(Backend)` as two tests, `case::sqlite` and
/// `case::postgres` (`store::both_backends!`).
#[macro_export]
macro_rules! both {
    ($($name:ident),+ $(,)?) => {
        store::both_backends!($($name),+);
    };
}

pub struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// chromedriver on a free port and a headless Chromium session on it.
pub async fn browser() -> Option<(Driver, Client)> {
    let driver = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    let Some(driver) = driver else {
        if std::env::var_os("PHYSIOJUDGE_SKIP_BROWSER").is_some() {
            eprintln!("skipped: no chromedriver (PHYSIOJUDGE_SKIP_BROWSER is set)");
            return None;
        }
        panic!(
            "the browser tests need chromium and chromedriver \
             (apt-get install chromium chromium-driver; scripts/test.sh does it)"
        );
    };
    let port = free_port();
    let child = Command::new(driver)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting chromedriver");
    let child = Driver(child);
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": "/usr/bin/chromium",
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                     "--window-size=1280,900"]
        }),
    );
    let url = format!("http://127.0.0.1:{port}");
    for _ in 0..100 {
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        match ClientBuilder::new(connector)
            .capabilities(caps.clone())
            .connect(&url)
            .await
        {
            Ok(c) => return Some((child, c)),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    panic!("chromedriver did not start on {url}");
}

pub async fn text_of(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// Waits (a guard against a hang, not a timing assertion) until `css`'s text holds
/// `want`.
pub async fn wait_text(c: &Client, css: &str, want: &str) -> String {
    let mut last = String::new();
    for _ in 0..300 {
        if let Ok(e) = c.find(Locator::Css(css)).await
            && let Ok(t) = e.text().await
        {
            if t.contains(want) {
                return t;
            }
            last = t;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{css} never showed {want:?}; last {last:?}");
}

pub async fn fill(c: &Client, css: &str, value: &str) {
    let e = c.find(Locator::Css(css)).await.unwrap();
    e.clear().await.unwrap();
    e.send_keys(value).await.unwrap();
}

pub async fn click(c: &Client, css: &str) {
    c.find(Locator::Css(css))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// The page fits `width` CSS pixels without scrolling sideways.
pub async fn fits(c: &Client, width: u32) {
    let r = c
        .execute(
            "return [window.innerWidth, document.documentElement.scrollWidth]",
            vec![],
        )
        .await
        .unwrap();
    let (inner, scroll) = (r[0].as_u64().unwrap(), r[1].as_u64().unwrap());
    assert_eq!(
        inner,
        u64::from(width),
        "the viewport is not {width} px wide"
    );
    assert!(
        scroll <= u64::from(width),
        "{scroll} px wide at {width} px: {}",
        c.current_url().await.unwrap()
    );
}

/// Signs `name` in through the login form of the site at `base`, as a person would.
pub async fn sign_in(c: &Client, base: &str, name: &str, password: &str) {
    c.goto(&format!("{base}/login")).await.unwrap();
    fill(c, "#name", name).await;
    fill(c, "#password", password).await;
    click(c, "form.stack button[type=submit]").await;
    wait_text(c, "header.site", name).await;
}

/// Signs out with the header's button.
pub async fn sign_out(c: &Client) {
    click(c, "header.site form button").await;
    wait_text(c, "header.site", "Sign in").await;
}
