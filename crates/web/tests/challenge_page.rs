//! A challenge's page for a newcomer and the team pages (issue 35): getting started
//! with the starter kit and this challenge's own commands, the organisers' overview
//! and announcements (Markdown cleaned, hostile input tried; an Atom feed that parses),
//! the timeline with its countdown and the team's quota left, and teams that answer
//! with inline errors, pending invitations on both sides, rename and leave. The HTML as
//! served, on SQLite and PostgreSQL; then the same pages in Chromium at 390, 1366 and
//! 360 px (screenshots with `PHYSIOJUDGE_SCREENSHOTS=DIR`).

mod common;

use std::io::Read;
use std::path::PathBuf;

use common::site::{Site, main_of, open_phase};
use serde_json::json;
use store::{Backend, Role};

const HOSTILE_MD: &str = "# Heading\n\nText with <script>alert(1)</script> and \
    [a link](javascript:alert(2)) <img src=x onerror=alert(3)> <iframe src=\"https://evil.example\"></iframe> \
    <a href=\"https://example.org\" onclick=\"alert(4)\">ok</a> <style>body{display:none}</style>\u{1}\u{8}";

/// The site with cinc2017 in a phase named "open" (its state must not read as its
/// name): a quota of one entry, scored on the quiz, closing in 2 days and 3 hours.
async fn site(backend: Backend) -> Site {
    let s = Site::new(backend).await;
    s.challenge("cinc2017", "AF classification").await;
    let now = s.t.now();
    s.t.create_phase(
        "cinc2017",
        &store::NewPhase {
            closes: now + chrono::Duration::days(2) + chrono::Duration::hours(3),
            quota: store::Quota {
                total: Some(1),
                per_day: None,
                max_concurrent: None,
            },
            scored_split: store::Split::Quiz,
            ..open_phase("open", now)
        },
    )
    .await
    .unwrap();
    s
}

impl Site {
    /// A user whose password is its name three times, and a session token of theirs.
    async fn person(&self, name: &str, role: Role) -> (store::User, String) {
        self.user(name, role, Some(&format!("{name}{name}{name}")))
            .await
    }

    /// Posts `fields` to `to` as `token`'s session, with the CSRF token of the page at
    /// `from`: the status, the `Location` and the body.
    async fn post(
        &self,
        token: &str,
        from: &str,
        to: &str,
        fields: &[(&str, &str)],
    ) -> (u16, String, String) {
        let r = self.post_form(Some(token), from, to, fields).await;
        let status = r.status().as_u16();
        let location = r
            .headers()
            .get("location")
            .map(|l| l.to_str().unwrap().to_owned())
            .unwrap_or_default();
        (status, location, r.text().await.unwrap())
    }

    /// A submission of `team` in the challenge's phase, straight into the store.
    async fn submit(&self, team: store::TeamId) {
        let phase = self.t.phases("cinc2017").await.unwrap().remove(0);
        self.t
            .submit(&store::NewSubmission {
                team,
                phase: phase.id,
                entry_sha256: "0".repeat(64),
                entry_path: "entries/x.zip".into(),
                method_name: None,
                method_description: None,
            })
            .await
            .unwrap();
    }
}

/// The repository's example entry of cinc2017, as the kit must carry it.
fn entry_file(path: &str) -> Vec<u8> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../entries/cinc2017");
    std::fs::read(root.join(path)).unwrap()
}

async fn getting_started_kit_and_announcements(b: Backend) {
    let s = site(b).await;
    let (_, org) = s.person("org", Role::Organiser).await;
    let (alice, alice_c) = s.person("alice", Role::Participant).await;

    // A newcomer, not signed in: what to do, with this challenge's own commands.
    let (status, page) = s.page(None, "/challenges/cinc2017").await;
    assert_eq!(status, 200);
    let main = main_of(&page);
    for want in [
        "Getting started",
        r#"href="/challenges/cinc2017/starter.zip""#,
        "cinc2017-starter.zip",
        "cargo install --locked --path crates/physiojudge",
        "sudo physiojudge evaluate --challenge cinc2017 --entry ./cinc2017-starter.zip",
        "--data ./data",
        "The organisers have not published a download",
        "Timeline",
        "Rules",
        "Announcements",
        "None yet.",
        r#"<span class="badge open">accepting entries</span>"#,
        // the next close, with its zone and a countdown by the server's clock
        "closes <strong><time",
        "UTC</time></strong>",
        r#"class="countdown""#,
        "in 2 d 3 h",
        "1 in all",
    ] {
        assert!(main.contains(want), "{want:?} missing: {main}");
    }
    assert!(!main.contains("open: open"), "{main}");
    assert!(!main.contains("no limit"), "{main}");

    // The starter kit, from the page and from the API: the example entry, runnable.
    for path in [
        "/challenges/cinc2017/starter.zip",
        "/api/v1/challenges/cinc2017/starter.zip",
    ] {
        let r = s
            .http
            .get(format!("{}{path}", s.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{path}");
        assert_eq!(r.headers()["content-type"], "application/zip", "{path}");
        assert!(
            r.headers()["content-disposition"]
                .to_str()
                .unwrap()
                .contains("cinc2017-starter.zip"),
            "{path}"
        );
        let bytes = r.bytes().await.unwrap();
        let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).unwrap();
        for (name, exec) in [
            ("next.sh", true),
            ("setup.sh", true),
            ("classify.py", true),
            ("answers.txt", false),
        ] {
            let mut f = z.by_name(&format!("cinc2017-starter/{name}")).unwrap();
            assert_eq!(
                f.unix_mode().unwrap() & 0o111 != 0,
                exec,
                "{path}: {name}'s mode"
            );
            let mut body = Vec::new();
            f.read_to_end(&mut body).unwrap();
            assert_eq!(body, entry_file(name), "{path}: {name}");
        }
    }
    let (status, _) = s
        .api(
            reqwest::Method::GET,
            None,
            "/api/v1/challenges/nosuch/starter.zip",
            json!(null),
        )
        .await;
    assert_eq!(status, 404);

    // The texts: only organisers write them; a bad address is refused with why.
    let about = json!({"overview": HOSTILE_MD, "data_url": "https://example.org/cinc2017.zip",
        "data_instructions": "Unzip it into `./data`.", "rules": "One entry a day.\n\n<script>x</script>"});
    let (status, _) = s
        .api(
            reqwest::Method::PUT,
            Some(&alice_c),
            "/api/v1/challenges/cinc2017/about",
            about.clone(),
        )
        .await;
    assert_eq!(status, 403);
    for bad in [
        "javascript:alert(1)",
        "ftp://example.org/x",
        "https://",
        "data:text/html,x",
    ] {
        let (status, body) = s
            .api(
                reqwest::Method::PUT,
                Some(&org),
                "/api/v1/challenges/cinc2017/about",
                json!({"data_url": bad}),
            )
            .await;
        assert_eq!(status, 422, "{bad}: {body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("data url"),
            "{body}"
        );
    }
    let (status, body) = s
        .api(
            reqwest::Method::PUT,
            Some(&org),
            "/api/v1/challenges/cinc2017/about",
            about,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = s
        .api(
            reqwest::Method::GET,
            None,
            "/api/v1/challenges/cinc2017/about",
            json!(null),
        )
        .await;
    assert_eq!(
        (status, body["data_url"].as_str()),
        (200, Some("https://example.org/cinc2017.zip"))
    );

    // Announcements: one by the API, one by the organiser's form (hostile both).
    let (status, _) = s
        .api(
            reqwest::Method::POST,
            Some(&alice_c),
            "/api/v1/challenges/cinc2017/announcements",
            json!({"title": "x", "body": "y"}),
        )
        .await;
    assert_eq!(status, 403);
    let (status, _) = s
        .api(
            reqwest::Method::POST,
            Some(&org),
            "/api/v1/challenges/cinc2017/announcements",
            json!({"title": "  ", "body": "y"}),
        )
        .await;
    assert_eq!(status, 422);
    let (status, first) = s
        .api(
            reqwest::Method::POST,
            Some(&org),
            "/api/v1/challenges/cinc2017/announcements",
            json!({"title": "Welcome <b>all</b>", "body": HOSTILE_MD}),
        )
        .await;
    assert_eq!(status, 201, "{first}");
    s.t.clock.advance(chrono::Duration::minutes(5));
    let console = "/organiser/challenges/cinc2017/announcements";
    let (status, _, page) = s
        .post(
            &org,
            console,
            &format!("{console}/new"),
            &[("form", "post"), ("title", ""), ("body", "no title")],
        )
        .await;
    assert_eq!(status, 422, "{page}");
    assert!(
        page.contains("refused-post") && page.contains("no title"),
        "{page}"
    );
    let (status, to, _) = s
        .post(
            &org,
            console,
            &format!("{console}/new"),
            &[
                ("title", "Deadline moved"),
                ("body", "The phase now closes **later**."),
            ],
        )
        .await;
    assert_eq!(
        (status, to.as_str()),
        (
            303,
            "/organiser/challenges/cinc2017/announcements?done=posted"
        )
    );
    let (status, _, page) = s
        .post(
            &org,
            console,
            &format!("{console}/texts"),
            &[
                ("form", "texts"),
                ("overview", "x"),
                ("data_url", "javascript:alert(1)"),
            ],
        )
        .await;
    assert_eq!(status, 422);
    assert!(
        page.contains("refused-texts") && page.contains("javascript:alert(1)"),
        "{page}"
    );
    let (status, page) = s.page(Some(&alice_c), console).await;
    assert_eq!(status, 403, "{page}");

    let (_, page) = s.page(Some(&alice_c), "/challenges/cinc2017").await;
    let main = main_of(&page);
    let lower = main.to_ascii_lowercase();
    for bad in [
        "<script",
        "onerror",
        "onclick",
        "javascript:",
        "<iframe",
        "<style",
        "<img",
        "\u{1}",
    ] {
        assert!(!lower.contains(bad), "{bad:?} on the page: {main}");
    }
    assert!(main.contains("<h3>Heading</h3>"), "{main}");
    assert!(
        main.contains(r#"<a href="https://example.org" rel="noopener noreferrer nofollow">ok</a>"#),
        "{main}"
    );
    assert!(main.contains("Welcome &lt;b&gt;all&lt;/b&gt;"), "{main}");
    assert!(
        main.contains(r#"href="https://example.org/cinc2017.zip""#),
        "{main}"
    );
    let newest = main.find("Deadline moved").unwrap();
    let older = main.find("Welcome &lt;b&gt;").unwrap();
    assert!(newest < older, "newest first");
    assert!(
        main.contains("The phase now closes <strong>later</strong>."),
        "{main}"
    );

    // The feed: well-formed Atom, newest first, the same clean HTML as content.
    let r = s
        .http
        .get(format!("{}/challenges/cinc2017/announcements.atom", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/atom+xml")
    );
    let xml = r.text().await.unwrap();
    let feed = atom(&xml);
    assert_eq!(feed.root, "feed");
    assert_eq!(feed.ns.as_deref(), Some("http://www.w3.org/2005/Atom"));
    for need in ["id", "title", "updated"] {
        assert!(
            feed.feed_children.contains(&need.to_owned()),
            "feed lacks {need}: {xml}"
        );
    }
    assert_eq!(feed.entries.len(), 2, "{xml}");
    assert_eq!(feed.entries[0].title, "Deadline moved");
    assert_eq!(feed.entries[1].title, "Welcome <b>all</b>");
    for e in &feed.entries {
        assert!(
            e.id.starts_with("urn:uuid:") && !e.updated.is_empty(),
            "{xml}"
        );
        assert_eq!(e.content_type, "html");
        assert!(
            !e.content.to_ascii_lowercase().contains("<script"),
            "{}",
            e.content
        );
        assert!(!e.content.contains("javascript:"), "{}", e.content);
    }
    assert!(feed.entries[0].content.contains("<strong>later</strong>"));

    // Taken down: off the page.
    let id = first["id"].as_str().unwrap();
    let (status, to, _) = s
        .post(&org, console, &format!("{console}/{id}/delete"), &[])
        .await;
    assert_eq!((status, to.contains("done=deleted")), (303, true));
    let (_, page) = s.page(None, "/challenges/cinc2017").await;
    assert!(!page.contains("Welcome &lt;b&gt;"));

    // The team's quota on the challenge page: what is left, and when spent, that it is.
    let team =
        s.t.create_team("cinc2017", "Alpha", alice.id)
            .await
            .unwrap();
    let (_, page) = s.page(Some(&alice_c), "/challenges/cinc2017").await;
    assert!(page.contains("1 of 1 left in this phase"), "{page}");
    s.submit(team.id).await;
    let (_, page) = s.page(Some(&alice_c), "/challenges/cinc2017").await;
    let main = main_of(&page);
    assert!(main.contains("0 of 1 left in this phase"), "{main}");
    assert!(
        main.contains("Spent: total") && main.contains("no more uploads in this phase"),
        "{main}"
    );
    assert!(!main.contains("no limit"), "{main}");
}

/// An Atom document as the test reads it.
struct Feed {
    root: String,
    ns: Option<String>,
    feed_children: Vec<String>,
    entries: Vec<Entry>,
}

#[derive(Default)]
struct Entry {
    id: String,
    title: String,
    updated: String,
    content: String,
    content_type: String,
}

/// Parses `xml` with a real XML parser: any ill-formed byte fails the test.
fn atom(xml: &str) -> Feed {
    use quick_xml::events::Event;
    let mut r = quick_xml::Reader::from_str(xml);
    let mut path: Vec<String> = Vec::new();
    let mut feed = Feed {
        root: String::new(),
        ns: None,
        feed_children: Vec::new(),
        entries: Vec::new(),
    };
    loop {
        match r.read_event().expect("well-formed XML") {
            Event::Start(e) => {
                let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                if path.is_empty() {
                    feed.root = name.clone();
                    feed.ns = e
                        .try_get_attribute("xmlns")
                        .unwrap()
                        .map(|a| a.unescape_value().unwrap().into_owned());
                } else if path.len() == 1 {
                    feed.feed_children.push(name.clone());
                    if name == "entry" {
                        feed.entries.push(Entry::default());
                    }
                }
                if name == "content" {
                    let t = e.try_get_attribute("type").unwrap().unwrap();
                    feed.entries.last_mut().unwrap().content_type =
                        t.unescape_value().unwrap().into_owned();
                }
                path.push(name);
            }
            Event::End(_) => {
                path.pop();
            }
            Event::Empty(e) if path.len() == 1 => {
                feed.feed_children
                    .push(String::from_utf8(e.name().as_ref().to_vec()).unwrap());
            }
            ev @ (Event::Text(_) | Event::GeneralRef(_)) => {
                // Text comes in runs, and each entity reference as an event of its own.
                let text = match ev {
                    Event::Text(t) => t.decode().expect("UTF-8").into_owned(),
                    Event::GeneralRef(r) => match r.resolve_char_ref().expect("a character") {
                        Some(c) => c.to_string(),
                        None => {
                            let name = r.decode().expect("UTF-8");
                            quick_xml::escape::resolve_predefined_entity(&name)
                                .unwrap_or_else(|| panic!("undefined entity &{name};"))
                                .to_owned()
                        }
                    },
                    _ => unreachable!(),
                };
                if path.len() == 3 && path[1] == "entry" {
                    let e = feed.entries.last_mut().unwrap();
                    match path[2].as_str() {
                        "id" => e.id.push_str(&text),
                        "title" => e.title.push_str(&text),
                        "updated" => e.updated.push_str(&text),
                        "content" => e.content.push_str(&text),
                        _ => {}
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert!(path.is_empty(), "unclosed elements: {path:?}");
    feed
}

async fn teams_work_like_people_expect(b: Backend) {
    let s = site(b).await;
    let (_, alice) = s.person("alice", Role::Participant).await;
    let (_, bob) = s.person("bob", Role::Participant).await;
    let hostile = "<script>alert(1)</script>";
    let (_, _h) = s.person(hostile, Role::Participant).await;
    let team = "/challenges/cinc2017/team";

    let (status, to, _) = s.post(&alice, team, team, &[("name", "Alpha")]).await;
    assert_eq!(
        (status, to.as_str()),
        (303, "/challenges/cinc2017/team?done=created")
    );

    // An unknown name: the team page again, the reason beside the form, the name kept.
    let invite = "/challenges/cinc2017/team/invite";
    let (status, _, page) = s.post(&alice, team, invite, &[("user", "nobody")]).await;
    assert_eq!(status, 422, "{page}");
    assert!(
        page.contains("Team Alpha") && page.contains("refused-invite"),
        "{page}"
    );
    assert!(page.contains("Nobody is called “nobody” here"), "{page}");
    assert!(page.contains(r#"value="nobody""#), "{page}");
    assert!(!page.contains("Not found"), "{page}");

    // A sent invitation is confirmed and pending on both sides.
    let (status, to, _) = s.post(&alice, team, invite, &[("user", "bob")]).await;
    assert_eq!(status, 303);
    assert!(to.starts_with("/challenges/cinc2017/team?sent="), "{to}");
    let (_, page) = s.page(Some(&alice), &to).await;
    assert!(
        page.contains("Invitation sent to <strong>bob</strong>"),
        "{page}"
    );
    assert!(
        page.contains("<strong>bob</strong> — pending since"),
        "{page}"
    );
    let (status, _, page) = s.post(&alice, team, invite, &[("user", "bob")]).await;
    assert_eq!(status, 409);
    assert!(page.contains("already has a pending invitation"), "{page}");
    // A hostile user name is text.
    let (status, to, _) = s.post(&alice, team, invite, &[("user", hostile)]).await;
    assert_eq!(status, 303);
    let (_, page) = s.page(Some(&alice), &to).await;
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt;</strong> — pending"),
        "{page}"
    );
    assert!(!main_of(&page).contains("<script"), "{page}");

    // The invitee sees it in the navigation on every page, and on its own page.
    let (_, page) = s.page(Some(&bob), "/").await;
    assert!(
        page.contains(r#"<a class="pending" href="/invitations">Invitations (1)</a>"#),
        "{page}"
    );
    let (_, page) = s.page(Some(&bob), "/invitations").await;
    assert!(page.contains("Team <strong>Alpha</strong> of"), "{page}");
    let (_, page) = s.page(Some(&bob), team).await;
    assert!(page.contains("Invitations for you"), "{page}");
    let id = page
        .split("/invitations/")
        .nth(1)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let (status, to, _) = s
        .post(
            &bob,
            "/invitations",
            &format!("/invitations/{id}/accept"),
            &[],
        )
        .await;
    assert_eq!((status, to.as_str()), (303, team));
    let (_, page) = s.page(Some(&bob), "/").await;
    assert!(!page.contains("Invitations ("), "{page}");

    // Rename: the name rules of a new team (a name reading like another team's is
    // refused, inline); hostile text stays text.
    let (_, carol) = s.person("carol", Role::Participant).await;
    let (status, _, _) = s.post(&carol, team, team, &[("name", "Beta")]).await;
    assert_eq!(status, 303);
    let rename = "/challenges/cinc2017/team/rename";
    let (status, _, page) = s.post(&bob, team, rename, &[("name", "BETA")]).await;
    assert_eq!(status, 409, "{page}");
    assert!(
        page.contains("refused-rename") && page.contains("&quot;Beta&quot;"),
        "{page}"
    );
    let (status, _, page) = s
        .post(&bob, team, rename, &[("name", "Gam\u{200b}ma")])
        .await;
    assert_eq!(status, 422, "{page}");
    assert!(page.contains("U+200B"), "{page}");
    let (status, to, _) = s
        .post(&bob, team, rename, &[("name", "<b>Gamma</b>")])
        .await;
    assert_eq!(
        (status, to.as_str()),
        (303, "/challenges/cinc2017/team?done=renamed")
    );
    let (_, page) = s.page(Some(&alice), team).await;
    assert!(page.contains("Team &lt;b&gt;Gamma&lt;/b&gt;"), "{page}");

    // Leave: while the team has no submission; then never.
    let leave = "/challenges/cinc2017/team/leave";
    let (status, to, _) = s.post(&bob, team, leave, &[]).await;
    assert_eq!(
        (status, to.as_str()),
        (303, "/challenges/cinc2017/team?done=left")
    );
    let (_, page) = s
        .page(Some(&bob), "/challenges/cinc2017/team?done=left")
        .await;
    assert!(
        page.contains("You left the team") && page.contains("Form a team"),
        "{page}"
    );
    let alice_team = s.t.team_by_ref("cinc2017", "<b>Gamma</b>").await.unwrap();
    s.submit(alice_team.id).await;
    let (_, page) = s.page(Some(&alice), team).await;
    assert!(page.contains("The team has submitted entries"), "{page}");
    assert!(
        !page.contains(r#"action="/challenges/cinc2017/team/leave""#),
        "{page}"
    );
    let (status, _, page) = s.post(&alice, team, leave, &[]).await;
    assert_eq!(status, 409, "{page}");
    assert!(
        page.contains("refused-leave") && page.contains("has submissions"),
        "{page}"
    );

    // The last member of a team without submissions leaves: the team and its name go.
    let (status, _, _) = s.post(&carol, team, leave, &[]).await;
    assert_eq!(status, 303);
    assert!(s.t.team_by_ref("cinc2017", "Beta").await.is_err());
    let (status, _, _) = s.post(&bob, team, team, &[("name", "Beta")]).await;
    assert_eq!(status, 303);

    // The API's own: a stranger can neither rename nor leave, nor list the invitations.
    let (status, _) = s
        .api(
            reqwest::Method::PATCH,
            Some(&carol),
            &format!("/api/v1/teams/{}", alice_team.id),
            json!({"name": "Mine"}),
        )
        .await;
    assert_eq!(status, 404);
    let (status, _) = s
        .api(
            reqwest::Method::GET,
            Some(&carol),
            &format!("/api/v1/teams/{}/invitations", alice_team.id),
            json!(null),
        )
        .await;
    assert_eq!(status, 404);
    let (status, list) = s
        .api(
            reqwest::Method::GET,
            Some(&alice),
            &format!("/api/v1/teams/{}/invitations", alice_team.id),
            json!(null),
        )
        .await;
    assert_eq!(
        (status, list.as_array().map(Vec::len)),
        (200, Some(1)),
        "{list}"
    );
}

/// The changed pages in Chromium: they fit 360 px without sideways scrolling, and are
/// photographed at 390 and 1366 px.
async fn pages_in_a_browser(b: Backend) {
    let Some((_driver, c)) = common::browser().await else {
        return;
    };
    let s = site(b).await;
    let shots = match b {
        Backend::Sqlite => std::env::var_os("PHYSIOJUDGE_SCREENSHOTS").map(PathBuf::from),
        Backend::Postgres => None,
    };
    let (_, org) = s.person("org", Role::Organiser).await;
    let (alice_u, alice) = s.person("alice", Role::Participant).await;
    let (_, bob) = s.person("bob", Role::Participant).await;
    s.api(
        reqwest::Method::PUT,
        Some(&org),
        "/api/v1/challenges/cinc2017/about",
        json!({"overview": "Classify short single-lead ECG recordings as **normal rhythm**, **atrial fibrillation**, other rhythms or too noisy, as in the PhysioNet/CinC Challenge 2017.",
               "data_instructions": "The judge's data stays on the server. Try your entry on the synthetic set `evaluate` makes, or on the [public training set](https://physionet.org/content/challenge-2017/).",
               "rules": "- One team per person.\n- Final entries are chosen before the selection deadline."}),
    )
    .await;
    s.api(
        reqwest::Method::POST,
        Some(&org),
        "/api/v1/challenges/cinc2017/announcements",
        json!({"title": "Welcome", "body": "The quiz split is open. Ask questions by mail to the organisers."}),
    )
    .await;
    s.t.create_team("cinc2017", "Alpha", alice_u.id)
        .await
        .unwrap();
    s.post(
        &alice,
        "/challenges/cinc2017/team",
        "/challenges/cinc2017/team/invite",
        &[("user", "bob")],
    )
    .await;
    c.goto(&s.url("/")).await.unwrap();
    let pages: [(&str, &str, &str); 5] = [
        ("", "/challenges/cinc2017", "challenge"),
        (&alice, "/challenges/cinc2017", "challenge-team"),
        (&alice, "/challenges/cinc2017/team", "team-page"),
        (&bob, "/invitations", "invitations"),
        (
            &org,
            "/organiser/challenges/cinc2017/announcements",
            "console-announcements",
        ),
    ];
    for (cookie, path, name) in pages {
        // Signed in through the form, as a person would (each user's password is its
        // name's, doubled: `Site::person`).
        c.delete_all_cookies().await.unwrap();
        if !cookie.is_empty() {
            let who = match cookie {
                c if c == org => "org",
                c if c == alice => "alice",
                _ => "bob",
            };
            common::sign_in(&c, &s.base, who, &format!("{who}{who}{who}")).await;
        }
        for (w, h) in [(360u32, 800u32), (390, 844), (1366, 900)] {
            c.set_window_size(w, h).await.unwrap();
            c.goto(&s.url(path)).await.unwrap();
            let r = c
                .execute(
                    "return [window.innerWidth, document.documentElement.scrollWidth]",
                    vec![],
                )
                .await
                .unwrap();
            let (inner, scroll) = (r[0].as_u64().unwrap(), r[1].as_u64().unwrap());
            assert_eq!(inner, u64::from(w), "the viewport is not {w} px wide");
            assert!(scroll <= inner, "{path} is {scroll} px wide at {w} px");
            if let Some(dir) = shots.as_ref().filter(|_| w != 360) {
                std::fs::create_dir_all(dir).unwrap();
                let png = c.screenshot().await.unwrap();
                std::fs::write(dir.join(format!("{name}-{w}.png")), png).unwrap();
            }
        }
    }
    // The countdown to the phase's close, kept counting by the script.
    c.goto(&s.url("/challenges/cinc2017")).await.unwrap();
    // The script runs through without an error (one would stop every feature after it).
    let ran = c
        .execute(
            "try { localTimes(document); countdowns(document); return 'ok'; } catch (e) { return String(e); }",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(ran, json!("ok"));
    let t = common::text_of(&c, ".deadline .countdown").await;
    assert!(t.starts_with("in 2 d "), "{t}");
    c.close().await.unwrap();
}

both!(
    getting_started_kit_and_announcements,
    teams_work_like_people_expect,
    pages_in_a_browser
);
