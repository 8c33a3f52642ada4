//! The sign-up and team forms say which existing name a new one reads as (issue 32,
//! finding 10): `ALPHA` or a full-width `Ａlpha` beside `Alpha` is refused (409) and
//! the page names `Alpha`. The HTML as served, without a browser; on SQLite and
//! PostgreSQL.

use store::testing::TestStore;
use store::{Backend, Definition, Role};

struct Site {
    t: TestStore,
    base: String,
    http: reqwest::Client,
    _state: tempfile::TempDir,
    _data: tempfile::TempDir,
}

async fn site(backend: Backend) -> Site {
    let t = TestStore::new(backend).await;
    let state = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(data.path().join("a")).unwrap();
    std::fs::write(data.path().join("a/A0001.hea"), "A0001 1 300 9000\n").unwrap();
    std::fs::write(data.path().join("REFERENCE.csv"), "A0001,N\n").unwrap();
    let api = server::Server::new(t.store.clone(), server::Config::new(state.path())).unwrap();
    let site = web::Web::new(t.store.clone(), &api, web::Config::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(site.serve(listener));
    t.create_challenge(
        "cinc2017",
        "AF classification",
        Definition::Builtin("cinc2017".into()),
        data.path(),
    )
    .await
    .unwrap();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    Site {
        t,
        base: format!("http://{addr}"),
        http,
        _state: state,
        _data: data,
    }
}

fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn csrf_of(page: &str) -> String {
    let at = page
        .find("name=\"csrf\" value=\"")
        .expect("a form with a CSRF token");
    let rest = &page[at + "name=\"csrf\" value=\"".len()..];
    rest[..rest.find('"').unwrap()].to_owned()
}

impl Site {
    /// GETs `path` with `cookie`, then posts `fields` to it with the CSRF token of the
    /// page and the cookies it set.
    async fn post_form(&self, cookie: &str, path: &str, fields: &[(&str, &str)]) -> (u16, String) {
        let r = self
            .http
            .get(format!("{}{path}", self.base))
            .header("cookie", cookie)
            .send()
            .await
            .unwrap();
        let mut cookies = vec![cookie.to_owned()];
        for c in r.headers().get_all("set-cookie") {
            let c = c.to_str().unwrap();
            cookies.push(c.split(';').next().unwrap().to_owned());
        }
        let page = r.text().await.unwrap();
        let mut body = format!("csrf={}", enc(&csrf_of(&page)));
        for (k, v) in fields {
            body.push_str(&format!("&{k}={}", enc(v)));
        }
        let r = self
            .http
            .post(format!("{}{path}", self.base))
            .header("cookie", cookies.join("; "))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    }
}

async fn forms_name_the_existing_name(backend: Backend) {
    let s = site(backend).await;
    let alpha =
        s.t.create_user("Alpha", Role::Participant, None)
            .await
            .unwrap();
    s.t.create_team("cinc2017", "Alpha", alpha.id)
        .await
        .unwrap();

    for name in ["ALPHA", "\u{FF21}lpha"] {
        let (status, page) = s
            .post_form(
                "",
                "/signup",
                &[("name", name), ("password", "correct horse")],
            )
            .await;
        assert_eq!(status, 409, "{name:?}: {page}");
        assert!(
            page.contains("reads the same as the existing &quot;Alpha&quot;"),
            "{name:?}: {page}"
        );
    }
    let (status, page) = s
        .post_form(
            "",
            "/signup",
            &[("name", "Alpha"), ("password", "correct horse")],
        )
        .await;
    assert_eq!(status, 409, "{page}");
    assert!(page.contains("That name is taken"), "{page}");
    let (status, page) = s
        .post_form(
            "",
            "/signup",
            &[("name", "Beta"), ("password", "correct horse")],
        )
        .await;
    assert_eq!(status, 303, "{page}");

    let bob =
        s.t.create_user("bob", Role::Participant, None)
            .await
            .unwrap();
    let token = s.t.issue_token(bob.id, "test").await.unwrap().token;
    let cookie = format!("pj_session={token}");
    let (status, page) = s
        .post_form(
            &cookie,
            "/challenges/cinc2017/team",
            &[("name", "\u{FF21}LPHA")],
        )
        .await;
    assert_eq!(status, 409, "{page}");
    assert!(page.contains("&quot;Alpha&quot;"), "{page}");
    let (status, page) = s
        .post_form(&cookie, "/challenges/cinc2017/team", &[("name", "Bravo")])
        .await;
    assert_eq!(status, 303, "{page}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite() {
    forms_name_the_existing_name(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres() {
    forms_name_the_existing_name(Backend::Postgres).await;
}
