//! A challenge's page: getting started (the task, the data, the starter kit, running
//! `physiojudge evaluate` locally), the organisers' overview and rules, the timeline
//! with the next close counted down, the team's quota left, and the announcements
//! (also as an Atom feed). docs/web.md, "The challenge page".

use server::views::{AboutView, AnnouncementView};

use super::*;
use crate::markdown;

fn task_text(def: &judge::challenge::Challenge) -> Markup {
    use judge::challenge::Interface;
    let interface = match def.interface {
        Interface::Folder => html! {
            p { "The judge runs your entry once per data set: "
                code { "python entry_2021.py DATA OUT" }
                ". It writes one " code { "<record>.json" } " per record in " code { "OUT" }
                " with the AF episodes it found as " code { "{\"predict_endpoints\": [[start, end], …]}" } " (sample indices)." }
        },
        Interface::PerRecord => html! {
            p { "The PhysioNet sandbox: the judge runs " code { "setup.sh" } " once, then "
                code { "next.sh RECORD" } " for each record, each in a fresh sandbox; every run appends "
                code { "RECORD,CLASS" } " to " code { "answers.txt" } " (N, A, O or ~)." }
        },
        Interface::TrainRun => html! {
            p { "Your " code { "team_code.py" } " is called twice: first to train a model on the labelled "
                "training patients, then to run it on each unlabelled patient, writing one CSV of "
                "murmur and outcome classes with their probabilities." }
        },
        Interface::Stream => html! {
            p { "Your algorithm's " code { "run()" } " loop reads EEG in 40 ms packets with "
                code { "get_data()" } " and reports the character it decoded with " code { "report()" }
                ", in simulated real time." }
        },
    };
    let scoring = judge::kinds::of(def.scorer).scoring_text();
    html! {
        (interface)
        h3 { "How scoring works" }
        p { (scoring) }
        p { "Missing or invalid outputs are scored as the challenge's default answer and listed as warnings on your submission's page." }
    }
}

fn short(h: &str) -> &str {
    h.get(..12).unwrap_or(h)
}

/// A phase's own limits, for a reader without a team.
fn quota_text(q: &server::views::QuotaLimits) -> String {
    let mut parts = Vec::new();
    if let Some(t) = q.total {
        parts.push(format!("{t} in all"));
    }
    if let Some(d) = q.per_day {
        parts.push(format!("{d} a day (UTC)"));
    }
    if let Some(c) = q.max_concurrent {
        parts.push(format!("{c} at once"));
    }
    if parts.is_empty() {
        "no limit".into()
    } else {
        parts.join(", ")
    }
}

/// The team's quota in a phase as it stands: what is left of each limit in force (its
/// own where the organisers set one), and when a spent one frees up.
fn team_quota(q: &QuotaView) -> Markup {
    let left = |left: Option<u32>, limit: Option<u32>, what: &str| -> Option<String> {
        match (left, limit) {
            (Some(l), Some(n)) => Some(format!("{l} of {n} left {what}")),
            (Some(l), None) => Some(format!("{l} left {what}")),
            _ => None,
        }
    };
    let mut parts: Vec<String> = [
        left(q.total_left, q.limits.total, "in this phase"),
        left(q.today_left, q.limits.per_day, "today (UTC)"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if let Some(m) = q.max_concurrent {
        parts.push(format!("{} of {m} running or queued", q.running));
    }
    html! {
        @if parts.is_empty() { "no limit" } @else { (parts.join("; ")) }
        @if q.overridden { br; span.muted { "limits set for your team by the organisers" } }
        @if !q.spent.is_empty() {
            br;
            strong.error { "Spent: " (q.spent.iter().map(word).collect::<Vec<_>>().join(", ")) }
            @if let Some(n) = q.next_slot_at { " — next upload accepted " (time(n)) }
            @else if q.spent.iter().any(|s| word(s) == "total") { " — no more uploads in this phase" }
            @else { " — when a running entry finishes" }
        }
    }
}

/// "in 3 d 4 h", "in 12 min": how long until `t`, by the server's clock. The script
/// keeps it counting down (`data-until`) without trusting the reader's clock.
fn countdown(t: chrono::DateTime<chrono::Utc>, now: chrono::DateTime<chrono::Utc>) -> Markup {
    let s = (t - now).num_seconds().max(0);
    let text = match s {
        0 => "now".to_owned(),
        1..60 => format!("in {s} s"),
        60..3600 => format!("in {} min", s / 60),
        3600..86400 => format!("in {} h {} min", s / 3600, (s % 3600) / 60),
        _ => format!("in {} d {} h", s / 86400, (s % 86400) / 3600),
    };
    html! {
        span.countdown data-until=(t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
            data-now=(now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)) { (text) }
    }
}

/// The next deadline a participant must not miss: the open phase that closes first
/// (for the reader's team: its own close when it has an extension), else the next
/// phase to open.
fn next_deadline(c: &ChallengeView, now: chrono::DateTime<chrono::Utc>) -> Option<Markup> {
    let open = c
        .phases
        .iter()
        .filter(|p| p.open)
        .min_by_key(|p| p.team_closes.unwrap_or(p.closes));
    if let Some(p) = open {
        let closes = p.team_closes.unwrap_or(p.closes);
        return Some(html! {
            p.deadline role="status" {
                "Phase " q { (p.name) } " closes"
                @if p.team_closes.is_some() { " for your team (an extension)" }
                " " strong { (time(closes)) } " — " (countdown(closes, now)) "."
            }
        });
    }
    let next = c
        .phases
        .iter()
        .filter(|p| p.opens > now)
        .min_by_key(|p| p.opens)?;
    Some(html! {
        p.deadline role="status" {
            "Phase " q { (next.name) } " opens " strong { (time(next.opens)) } " — " (countdown(next.opens, now)) "."
        }
    })
}

pub(crate) async fn challenge(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
) -> PageResult {
    let c = challenge_view(&web, &ctx, &id).await?;
    let def = definition(&web, &c.id).await;
    let now = web.store.now();
    let team = match &ctx.user {
        Some(u) => web.store.team_of(u.id, &c.id).await.map_err(internal)?,
        None => None,
    };
    let base = format!("/challenges/{}", seg(&c.id));
    let about: AboutView = api::get(&web, &format!("/api/v1{base}/about"), None)
        .await
        .json()
        .map_err(err)?;
    let news: Vec<AnnouncementView> = api::get(&web, &format!("/api/v1{base}/announcements"), None)
        .await
        .json()
        .map_err(err)?;
    // The team's quota in each phase that takes uploads now or later.
    let mut quotas: BTreeMap<String, QuotaView> = BTreeMap::new();
    if let (Some(_), Some(token)) = (&team, ctx.token.as_deref()) {
        for p in c.phases.iter().filter(|p| p.open || p.opens > now) {
            let path = format!("/api/v1{base}/quota?phase={}", seg(&p.name));
            if let Ok(q) = api::get(&web, &path, Some(token)).await.json::<QuotaView>() {
                quotas.insert(p.name.clone(), q);
            }
        }
    }
    let kit = def.as_ref().is_some_and(server::starter::has_kit);
    let body = html! {
        h1 { (c.title) }
        p.muted { "Challenge " code { (c.id) } " · definition " code.hash { (short(&c.definition_sha256)) }
            " · data manifest " code.hash { (short(&c.manifest_sha256)) } }
        nav.actions aria-label="Challenge" {
            a.button href={(base) "/submit"} { "Submit an entry" }
            a.button href={(base) "/leaderboard"} { "Leaderboard" }
            a.button href={(base) "/team"} { @if team.is_some() { "Your team" } @else { "Form a team" } }
            @if kit { a.button href={(base) "/starter.zip"} download { "Starter kit (.zip)" } }
        }
        @if let Some(t) = &team { p { "You are in team " strong { (t.name) } "." } }
        @if c.judging_paused {
            p.notice role="status" {
                strong { "Judging paused." }
                " Submissions are still accepted and keep their place in the queue; they are judged once the organisers resume judging."
                @if let Some(why) = &c.pause_reason { " (" (why) ")" }
            }
        }
        @if let Some(d) = next_deadline(&c, now) { (d) }
        @if !about.overview.is_empty() {
            section.prose aria-labelledby="overview" {
                h2 #overview { "Overview" }
                (maud::PreEscaped(markdown::to_html(&about.overview)))
            }
        }
        (getting_started(&c, def.as_ref(), &about, kit, &base))
        (timeline(&c, now, &quotas, team.is_some()))
        (rules(&c, def.as_ref(), &about))
        (announcements(&news, &base))
        @if let Some(def) = &def {
            section aria-labelledby="task" {
                h2 #task { "The task" }
                (task_text(def))
            }
            section aria-labelledby="layout" {
                h2 #layout { "Entry layout" }
                p { "Upload a " code { ".zip" } ", " code { ".tar.gz" } " or " code { ".tar" } " archive. It must contain:" }
                ul { @for f in &def.required_files { li { code { (f) } } } }
                @if let Some(r) = &def.requirements {
                    p { "Python packages your entry needs go in " code { (r) } "; they are checked against the judge's fixed runtime (numpy, scipy, wfdb, scikit-learn), not installed." }
                }
            }
            section aria-labelledby="limits" {
                h2 #limits { "Limits" }
                dl.limits {
                    dt { "Memory" } dd { (def.limits.memory_mb) " MB" }
                    dt { "Processes" } dd { (def.limits.pids) }
                    dt { "Set-up" } dd { (html::duration(def.limits.setup_time_s as f64)) }
                    @if let Some(t) = def.limits.train_s { dt { "Training" } dd { (html::duration(t as f64)) } }
                    dt { "Per record" } dd { (html::duration(def.limits.record_cpu_s as f64)) " CPU, " (html::duration(def.limits.record_wall_s as f64)) " wall" }
                    dt { "Start-up allowance" } dd { (html::duration(def.limits.startup_s as f64)) }
                    dt { "A stage in all" } dd { "at most " (html::duration(def.limits.stage_cap_s as f64)) }
                    dt { "No network" } dd { "entries run without network access" }
                }
            }
        }
    };
    Ok(page(&ctx, &c.title, body))
}

/// Steps from nothing to a first upload, with this challenge's own commands.
fn getting_started(
    c: &ChallengeView,
    def: Option<&judge::challenge::Challenge>,
    about: &AboutView,
    kit: bool,
    base: &str,
) -> Markup {
    let folder = format!("{}-starter", c.id);
    // `evaluate` knows built-in definitions by their own id (a challenge may be hosted
    // under another); a TOML definition is given as a file.
    let toml = matches!(c.definition_kind, server::views::DefinitionKind::Toml);
    let def_id = def.map_or(c.id.as_str(), |d| d.id.as_str());
    let entry = if kit {
        format!("./{folder}.zip")
    } else {
        "./my-entry".to_owned()
    };
    let mut evaluate = format!("sudo physiojudge evaluate --challenge {def_id} --entry {entry}");
    if toml {
        evaluate.push_str(" --challenge-file ./challenge.toml");
    }
    let with_data = format!("{evaluate} --data ./data");
    html! {
        section aria-labelledby="start" {
            h2 #start { "Getting started" }
            ol.steps {
                li {
                    strong { "Read the task." } " " a href="#task" { "What your entry is given and what it must write" }
                    ", and " a href="#rules" { "the rules" } "."
                }
                li {
                    strong { "Get the data." } " "
                    @if let Some(u) = &about.data_url {
                        "Download it from " a href=(u) rel="noopener noreferrer nofollow" { (u) } "."
                    }
                    @if !about.data_instructions.is_empty() {
                        div.prose { (maud::PreEscaped(markdown::to_html(&about.data_instructions))) }
                    } @else if about.data_url.is_none() {
                        " The organisers have not published a download. The judge's data stays on the server ("
                        (c.files) " files); to try your entry, " code { "evaluate" } " below makes a synthetic data set in the same layout when you give it no "
                        code { "--data" } "."
                    }
                }
                li {
                    strong { "Get the starter kit." } " "
                    @if kit {
                        a href={(base) "/starter.zip"} download { (folder) ".zip" }
                        " is the challenge's example entry: it runs as it is and uploads as it is. Change it into yours."
                    } @else {
                        "This challenge has no example entry: make a folder with the files under " a href="#layout" { "Entry layout" } "."
                    }
                }
                li {
                    strong { "Install physiojudge." } " From a checkout of its source, with Rust 1.95 or newer, then set up the judge's pinned Python runtime once:"
                    pre { code { "cargo install --locked --path crates/physiojudge\nsudo physiojudge runtime setup" } }
                }
                li {
                    strong { "Run it locally, as the site will." } " The same judge, stages and limits; " code { "sudo" } " because entries run in a sandbox:"
                    pre { code { (evaluate) } }
                    p { "On your own copy of the data:" }
                    pre { code { (with_data) } }
                    @if toml { p.muted { "This challenge's definition is the organisers' own file: ask them for " code { "challenge.toml" } "." } }
                }
                li {
                    strong { "Upload it." } " "
                    a href={(base) "/team"} { "Form a team" } " (or accept an invitation), then "
                    a href={(base) "/submit"} { "submit the archive" } "; its page follows it live."
                }
            }
        }
    }
}

/// The phases in order, each with its times (UTC, the script adds the reader's own),
/// what it ranks, and the quota: the team's own, left, when the reader has a team.
fn timeline(
    c: &ChallengeView,
    now: chrono::DateTime<chrono::Utc>,
    quotas: &BTreeMap<String, QuotaView>,
    has_team: bool,
) -> Markup {
    html! {
        section aria-labelledby="phases" {
            h2 #phases { "Timeline" }
            @if c.phases.is_empty() { p { "No phase yet: submissions open with the first." } }
            ol.timeline {
                @for p in &c.phases {
                    li {
                        h3 { "Phase " q { (p.name) } " "
                            @if p.open { span.badge.open { "accepting entries" } }
                            @else if now < p.opens { span.badge { "not open yet" } }
                            @else { span.badge { "closed" } } }
                        dl.limits {
                            dt { "Opens" } dd { (time(p.opens)) @if now < p.opens { " — " (countdown(p.opens, now)) } }
                            dt { "Closes" } dd {
                                (time(p.closes))
                                @if let Some(t) = p.team_closes {
                                    br; strong.extended { "for your team: " (time(t)) } " (an extension)"
                                }
                                @let close = p.team_closes.unwrap_or(p.closes);
                                @if p.open && close > now { " — " (countdown(close, now)) }
                            }
                            @if let Some(s) = p.selection_closes {
                                dt { "Final entry chosen by" } dd { (time(s)) }
                            }
                            dt { "Scored on" } dd { (word(&p.scored_split)) " split"
                                @if !p.show_exam { br; span.muted { "exam scores hidden until it closes" } } }
                            dt { "Leaderboard shows" } dd { "each team's " (word(&p.rule)) " submission" }
                            @if let Some(q) = quotas.get(&p.name) {
                                dt { "Your team's quota" } dd { (team_quota(q)) }
                            } @else {
                                dt { "Quota per team" } dd { (quota_text(&p.quota))
                                    @if !has_team && p.open { br; span.muted { "a team sees what it has left here" } } }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The organisers' rules, then the ones the platform keeps for every challenge.
fn rules(
    c: &ChallengeView,
    def: Option<&judge::challenge::Challenge>,
    about: &AboutView,
) -> Markup {
    html! {
        section aria-labelledby="rules" {
            h2 #rules { "Rules" }
            @if !about.rules.is_empty() {
                div.prose { (maud::PreEscaped(markdown::to_html(&about.rules))) }
                h3 { "Kept by the platform" }
            }
            ul {
                li { "You are in at most one team per challenge; a team's entries count against its quota, failed ones too (entries that end in error, our fault, never do)." }
                li { "Labels of the quiz and exam splits never reach your entry; the quiz returns full diagnostics, the exam only counts of failures and timeouts." }
                li { "Ranked by " @for (i, r) in c.ranking.iter().enumerate() { @if i > 0 { ", then " } (metric(r)) " (" (word(&r.better)) " is better)" } "; "
                    "participants see exam figures to " (c.score_precision) " decimals." }
                @if def.is_some() { li { "Entries run without network access, within the " a href="#limits" { "limits" } " below." } }
                li { "The data is pinned by its manifest (" code.hash { (short(&c.manifest_sha256)) } "): every entry is judged on the same " (c.files) " files." }
            }
        }
    }
}

fn announcements(news: &[AnnouncementView], base: &str) -> Markup {
    html! {
        section aria-labelledby="news" {
            h2 #news { "Announcements" }
            p.muted { "Newest first; also as a feed: " a href={(base) "/announcements.atom"} type="application/atom+xml" { "Atom" } "." }
            @if news.is_empty() { p { "None yet." } }
            @for a in news {
                article.announcement {
                    h3 { (a.title) }
                    p.muted { "Posted " (time(a.posted_at)) }
                    div.prose { (maud::PreEscaped(markdown::to_html(&a.body))) }
                }
            }
        }
    }
}

/// The starter kit, as the API packs it (`/api/v1/challenges/{id}/starter.zip`).
pub(crate) async fn starter(State(web): State<Web>, Path(id): Path<String>) -> PageResult {
    let a = api::get(
        &web,
        &format!("/api/v1/challenges/{}/starter.zip", seg(&id)),
        None,
    )
    .await;
    if !a.status.is_success() {
        return Err(err(a.refusal()));
    }
    let name = format!("{id}-starter.zip");
    Ok((
        [
            (header::CONTENT_TYPE, "application/zip".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{}\"", name.replace('"', "")),
            ),
            (header::CACHE_CONTROL, "public, max-age=3600".to_owned()),
        ],
        a.body,
    )
        .into_response())
}

/// Characters XML 1.0 cannot carry at all (most C0 controls): dropped from a feed.
fn xml_safe(s: &str) -> String {
    s.chars()
        .filter(|&c| {
            matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..='\u{10ffff}')
        })
        .collect()
}

/// The site's own address as the reader reached it, for the feed's absolute ids.
fn site_root(web: &Web, headers: &axum::http::HeaderMap) -> String {
    let host = headers
        .get("x-forwarded-host")
        .or_else(|| headers.get(header::HOST))
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            !h.is_empty()
                && h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b))
        })
        .unwrap_or("localhost");
    let scheme = if web.config.secure_cookies {
        "https"
    } else {
        "http"
    };
    format!("{scheme}://{host}")
}

/// The announcements as an Atom feed (RFC 4287): each entry's content the same clean
/// HTML the page shows.
pub(crate) async fn feed(
    State(web): State<Web>,
    Path(id): Path<String>,
    headers: axum::http::HeaderMap,
) -> PageResult {
    let c: ChallengeView = api::get(&web, &format!("/api/v1/challenges/{}", seg(&id)), None)
        .await
        .json()
        .map_err(err)?;
    let news: Vec<AnnouncementView> = api::get(
        &web,
        &format!("/api/v1/challenges/{}/announcements", seg(&id)),
        None,
    )
    .await
    .json()
    .map_err(err)?;
    let root = site_root(&web, &headers);
    let page_url = format!("{root}/challenges/{}", seg(&c.id));
    let stamp =
        |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let updated = news.first().map_or(c.created_at, |a| a.posted_at);
    let xml = html! {
        (maud::PreEscaped("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"))
        feed xmlns="http://www.w3.org/2005/Atom" {
            id { (page_url) "/announcements.atom" }
            title { (xml_safe(&c.title)) " — announcements" }
            updated { (stamp(updated)) }
            link rel="self" type="application/atom+xml" href={(page_url) "/announcements.atom"} {}
            link rel="alternate" type="text/html" href=(page_url) {}
            author { name { "The organisers of " (xml_safe(&c.title)) } }
            generator { "physiojudge" }
            @for a in &news {
                entry {
                    id { "urn:uuid:" (a.id) }
                    title { (xml_safe(&a.title)) }
                    updated { (stamp(a.posted_at)) }
                    published { (stamp(a.posted_at)) }
                    link rel="alternate" type="text/html" href={(page_url) "#news"} {}
                    summary { (xml_safe(&markdown::plain(&a.body, 280))) }
                    content type="html" { (xml_safe(&markdown::to_html(&a.body))) }
                }
            }
        }
    };
    Ok((
        [
            (header::CONTENT_TYPE, "application/atom+xml; charset=utf-8"),
            // Public and the same for everyone: a feed reader may keep it a minute.
            (header::CACHE_CONTROL, "public, max-age=60"),
        ],
        xml.into_string(),
    )
        .into_response())
}
