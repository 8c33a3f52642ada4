//! The sign-up and team forms say which existing name a new one reads as (issue 32,
//! finding 10): `ALPHA` or a full-width `Ａlpha` beside `Alpha` is refused (409) and
//! the page names `Alpha`. The HTML as served, without a browser; on SQLite and
//! PostgreSQL.

mod common;

use common::site::{Site, csrf_of, form_body};
use store::{Backend, Role};

impl Site {
    /// GETs `path` as `token`'s session (none: a visitor), then posts `fields` to it
    /// with the CSRF token of the page and the cookies it set (a visitor's pre-session).
    async fn post_back(
        &self,
        token: Option<&str>,
        path: &str,
        fields: &[(&str, &str)],
    ) -> (u16, String) {
        let r = self.get(token, path).await;
        let mut cookies: Vec<String> = token
            .map(|t| format!("pj_session={t}"))
            .into_iter()
            .collect();
        for c in r.headers().get_all("set-cookie") {
            let c = c.to_str().unwrap();
            cookies.push(c.split(';').next().unwrap().to_owned());
        }
        let page = r.text().await.unwrap();
        let r = self
            .http
            .post(self.url(path))
            .header("cookie", cookies.join("; "))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form_body(&csrf_of(&page), fields))
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    }
}

async fn forms_name_the_existing_name(backend: Backend) {
    let s = Site::new(backend).await;
    s.challenge("cinc2017", "AF classification").await;
    let alpha =
        s.t.create_user("Alpha", Role::Participant, None)
            .await
            .unwrap();
    s.t.create_team("cinc2017", "Alpha", alpha.id)
        .await
        .unwrap();

    for name in ["ALPHA", "\u{FF21}lpha"] {
        let (status, page) = s
            .post_back(
                None,
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
        .post_back(
            None,
            "/signup",
            &[("name", "Alpha"), ("password", "correct horse")],
        )
        .await;
    assert_eq!(status, 409, "{page}");
    assert!(page.contains("That name is taken"), "{page}");
    let (status, page) = s
        .post_back(
            None,
            "/signup",
            &[("name", "Beta"), ("password", "correct horse")],
        )
        .await;
    assert_eq!(status, 303, "{page}");

    let (_, bob) = s.user("bob", Role::Participant, None).await;
    let (status, page) = s
        .post_back(
            Some(&bob),
            "/challenges/cinc2017/team",
            &[("name", "\u{FF21}LPHA")],
        )
        .await;
    assert_eq!(status, 409, "{page}");
    assert!(page.contains("&quot;Alpha&quot;"), "{page}");
    let (status, page) = s
        .post_back(
            Some(&bob),
            "/challenges/cinc2017/team",
            &[("name", "Bravo")],
        )
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
