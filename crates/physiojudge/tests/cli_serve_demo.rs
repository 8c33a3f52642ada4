//! `physiojudge serve --demo`, the platform's main job: on a free port it seeds an
//! organiser, the four challenges on synth data with an open phase each, and the
//! example and trivial entries as two teams (and the MATLAB examples as a third when
//! the Octave runtime is set up); every submission is judged and scored, each
//! challenge's leaderboard ranks the trivial entry last and names each row's language. Needs root (the sandbox);
//! runs under `flock /tmp/physiojudge-sandbox.lock`; sandbox slot 48.

mod common;

use std::time::{Duration, Instant};

use common::platform::{Backend, Site, is_final, work_folders};

#[test]
fn serve_demo_seeds_judges_and_ranks_the_four_challenges() {
    if !testkit::root("serve_demo") {
        return;
    }
    let site = Site::new(Backend::Sqlite, 48);
    let s = site.serve(&["--demo"]);
    // What it prints after the address: the organiser's token, the participants', the
    // submissions, then that it is seeded.
    let mut organiser = None;
    let mut passwords = Vec::new();
    let mut submissions = Vec::new();
    // A third team with the MATLAB examples when the Octave runtime is set up.
    let mut matlab = false;
    let until = Instant::now() + Duration::from_secs(300);
    loop {
        let left = until.saturating_duration_since(Instant::now());
        let line = s
            .stdout
            .recv_timeout(left)
            .unwrap_or_else(|e| panic!("serve --demo did not finish seeding: {e}"));
        if let Some(t) = line.strip_prefix("demo organiser token: ") {
            organiser = Some(t.to_owned());
        } else if let Some(t) = line.strip_prefix("demo organiser password: ") {
            let password = t.split_whitespace().next().unwrap();
            passwords.push(("organiser".to_owned(), password.to_owned()));
        } else if let Some(t) = line.strip_prefix("demo participant ")
            && let Some((name, password)) = t.split_once(" password: ")
        {
            passwords.push((name.to_owned(), password.to_owned()));
        } else if line.starts_with("demo participant carol (team MATLAB examples)") {
            matlab = true;
        } else if let Some(rest) = line.strip_prefix("demo submission ") {
            submissions.push(rest.split_whitespace().next().unwrap().to_owned());
        } else if line.starts_with("demo seeded") {
            break;
        }
    }
    let org = organiser.expect("the organiser's token is printed");
    eprintln!("serve --demo: MATLAB examples seeded: {matlab}");
    let all = if matlab { 10 } else { 8 };
    assert_eq!(submissions.len(), all, "{submissions:?}");
    // Each demo account signs in with the password printed for it, as on the site.
    assert_eq!(passwords.len(), if matlab { 4 } else { 3 }, "{passwords:?}");
    for (name, password) in &passwords {
        let t = s.post(
            &org,
            "/api/v1/tokens",
            serde_json::json!({"name": name, "password": password}),
        );
        assert_eq!(t.status, 201, "{name}: {}", t.text);
        let me = s.get(t.json["token"].as_str(), "/api/v1/users/me").json;
        assert_eq!(me["name"], name.as_str(), "{me}");
    }
    // The site's front page lists the four challenges.
    let front = s.get(None, "/");
    assert_eq!(front.status, 200);
    for title in ["cpsc2021", "cinc2017", "physionet2022", "p300speller"] {
        assert!(front.text.contains(title), "{title} not on the front page");
    }
    for id in &submissions {
        let v = s.wait_for(&org, id, Duration::from_secs(900), is_final);
        assert_eq!(v["state"], "scored", "{v}");
    }
    // It says when its submissions are all judged.
    let until = Instant::now() + Duration::from_secs(120);
    let judged = loop {
        let left = until.saturating_duration_since(Instant::now());
        let line = s
            .stdout
            .recv_timeout(left)
            .unwrap_or_else(|e| panic!("serve --demo did not say it had judged: {e}"));
        if line.starts_with("demo judged: ") {
            break line;
        }
    };
    assert!(
        judged.starts_with(&format!(
            "demo judged: {all} submissions final, {all} scored, in "
        )),
        "{judged}"
    );
    for challenge in ["cpsc2021", "cinc2017", "physionet2022", "p300speller"] {
        let board = s
            .get(None, &format!("/api/v1/challenges/{challenge}/leaderboard"))
            .json;
        let rows = board["rows"].as_array().unwrap();
        let with_matlab = matlab && ["cpsc2021", "cinc2017"].contains(&challenge);
        assert_eq!(rows.len(), if with_matlab { 3 } else { 2 }, "{board}");
        let score = |r: &serde_json::Value| r["score"].as_f64().unwrap();
        let row = |team: &str| {
            rows.iter()
                .find(|r| r["team"] == team)
                .unwrap_or_else(|| panic!("no {team}: {board}"))
        };
        // The trivial answer ranks last; each row names its entry's language.
        let trivial = rows.last().unwrap();
        assert_eq!(trivial["team"], "Trivial", "{board}");
        assert_eq!(trivial["rank"], rows.len(), "{board}");
        assert!(score(row("Examples")) > score(trivial), "{board}");
        assert_eq!(row("Examples")["language"], "Python", "{board}");
        if with_matlab {
            let m = row("MATLAB examples");
            assert_eq!(m["language"], "MATLAB (Octave)", "{board}");
            assert!(score(m) > score(trivial), "{board}");
        }
    }
    // The data it generated lives in its state folder.
    assert!(site.state.path().join("demo-data/cinc2017").is_dir());
    s.stop();
    assert_eq!(work_folders(site.tmp.path()), Vec::<String>::new());
}
