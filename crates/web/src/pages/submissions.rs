//! A team's submissions: the list and one submission's page, with its quiz report
//! (`quiz`) and its logs as downloads.

use super::*;

mod quiz;

// ---- submissions ----

async fn submission_view(web: &Web, token: &str, id: &str) -> Result<SubmissionView, Response> {
    api::get(
        web,
        &format!("/api/v1/submissions/{}", seg(id)),
        Some(token),
    )
    .await
    .json()
    .map_err(err)
}

/// A submission's state in a line; `now` is the server's time (for the elapsed time);
/// `paused_why` the organisers' reason while the challenge's judging is paused.
fn summary(
    s: &SubmissionView,
    now: chrono::DateTime<chrono::Utc>,
    paused_why: Option<&str>,
) -> Markup {
    let state = word(&s.state);
    html! {
        span #summary {
            (state_badge(&state))
            @match state.as_str() {
                "queued" => {
                    @if let Some(p) = s.queue_position { " position " (p) " in the queue" }
                    @if s.judging_paused {
                        " — judging paused"
                        @if let Some(why) = paused_why.filter(|w| !w.is_empty()) { " (" (why) ")" }
                        ": it keeps its place and is judged once the organisers resume judging"
                    }
                }
                "running" => { " since " (time(s.state_changed_at)) " " span.elapsed data-since=(s.state_changed_at.to_rfc3339()) data-now=(now.to_rfc3339()) {} " " span.run-stage {} }
                "failed" => {
                    @if let Some(st) = s.stages.iter().find(|st| word(&st.outcome) == "failed") {
                        " in " strong { (st.stage) } @if let Some(r) = &st.reason { ": " (r) }
                    } @else if let Some(r) = &s.reason { ": " (r) }
                }
                "error" => { " — our fault, not charged to your quota; it is retried" }
                // The figures are beside it (the list's column, the page's "Scores").
                "scored" => {
                    @if let Some(u) = s.scores_hidden_until { " (scores shown " (time(u)) ")" }
                }
                _ => {}
            }
        }
    }
}

#[derive(Deserialize)]
pub(crate) struct ListQuery {
    challenge: Option<String>,
}

/// A challenge's ranking numbers as (key, name), from its scorer's description.
async fn ranking_names(web: &Web, challenge: &str) -> Vec<(String, String)> {
    names_of(definition(web, challenge).await.as_ref())
}

/// The ranking numbers of a challenge's definition as (key, name); none without one.
fn names_of(def: Option<&judge::challenge::Challenge>) -> Vec<(String, String)> {
    def.map(|d| {
        d.scorer
            .ranking()
            .iter()
            .map(|r| (r.key.to_owned(), r.name.to_owned()))
            .collect()
    })
    .unwrap_or_default()
}

/// A ranking number's name by its key (the key itself for one not described).
fn name_of(names: &[(String, String)], key: &str) -> String {
    names
        .iter()
        .find(|(k, _)| k == key)
        .map_or(key.to_owned(), |(_, n)| n.clone())
}

/// A submission's figures in a cell: each ranking number under its name, the quiz
/// score when the quiz passed, or when hidden figures show.
fn figures(v: &SubmissionView, names: &[(String, String)]) -> Markup {
    let name = |k: &str| name_of(names, k);
    let quiz_passed = quiz_stage_passed(v);
    html! {
        @for (k, f) in &v.scores { span.fig { (name(k)) " " strong { (html::num(*f, 6)) } } " " }
        @if let Some(u) = v.scores_hidden_until { span.fig.muted { "exam shown " (time(u)) } " " }
        @if let (Some(q), true) = (&v.quiz, quiz_passed) { span.fig.muted { "quiz " (html::num(Some(q.score), 4)) } }
    }
}

/// Whether the quiz stage ran and passed (a failed quiz has no score to show, whatever
/// number its result carries).
fn quiz_stage_passed(v: &SubmissionView) -> bool {
    match v.stages.iter().find(|st| st.stage == "quiz") {
        Some(st) => word(&st.outcome) == "passed",
        None => word(&v.state) == "scored",
    }
}

pub(crate) async fn my_submissions(
    State(web): State<Web>,
    ctx: Ctx,
    Query(q): Query<ListQuery>,
) -> PageResult {
    let (user, token) = ctx.need_user("/submissions")?;
    let mut rows = Vec::new();
    // The challenges the user has a team in (the filter's choices), and each one's
    // ranking numbers' names (key, name).
    let mut mine: Vec<(String, String)> = Vec::new();
    let mut names: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for c in web.store.challenges().await.map_err(internal)? {
        let Some(team) = web.store.team_of(user.id, &c.id).await.map_err(internal)? else {
            continue;
        };
        mine.push((c.id.clone(), c.title.clone()));
        if q.challenge
            .as_deref()
            .is_some_and(|w| !w.is_empty() && w != c.id)
        {
            continue;
        }
        names.insert(c.id.clone(), ranking_names(&web, &c.id).await);
        for p in web.store.phases(&c.id).await.map_err(internal)? {
            for s in web
                .store
                .submissions(team.id, p.id)
                .await
                .map_err(internal)?
            {
                rows.push((c.title.clone(), p.name.clone(), s));
            }
        }
    }
    rows.sort_by_key(|r| std::cmp::Reverse(r.2.received_at));
    // Each row as the API shows it to this user (state, reason, queue position).
    const SHOWN: usize = 100;
    let mut views = Vec::new();
    for (title, phase, s) in rows.iter().take(SHOWN) {
        let v = submission_view(&web, token, &s.id.0.to_string()).await?;
        views.push((title, phase, s.method_name.as_deref(), v));
    }
    let chosen = q.challenge.as_deref().unwrap_or("");
    let now = web.store.now();
    let body = html! {
        h1 { "My submissions" }
        @if mine.len() > 1 {
            form.inline method="get" action="/submissions" {
                label for="challenge" { "Challenge" }
                select #challenge name="challenge" {
                    option value="" selected[chosen.is_empty()] { "All challenges" }
                    @for (id, title) in &mine { option value=(id) selected[chosen == id.as_str()] { (title) } }
                }
                button type="submit" { "Show" }
            }
        }
        @if views.is_empty() {
            @if mine.is_empty() || chosen.is_empty() { p { "None yet. Pick a challenge on the " a href="/" { "challenges page" } " and submit an entry." } }
            @else { p { "None in this challenge yet." } }
        }
        @else {
            // On a phone each row is a card: every cell on its own line under its
            // column's name (the stylesheet's `table.stack`), so nothing is cut.
            table.stack #submissions {
                thead { tr { th scope="col" { "Received" } th scope="col" { "Challenge" } th scope="col" { "Method" } th scope="col" { "State" } th scope="col" { "Figures" } } }
                tbody {
                    @for (title, phase, method, v) in &views {
                        tr data-submission=(v.id) {
                            td data-label="Received" { a href={"/submissions/" (v.id)} { (time(v.received_at)) } }
                            td data-label="Challenge" { (title) br; span.muted { "phase " (phase) } }
                            td data-label="Method" { @if let Some(m) = method { (m) } @else { span.muted { "—" } } }
                            td.live data-label="State" {
                                (summary(v, now, None))
                                @if v.selected { " " span.badge.final { "final entry" } }
                            }
                            td data-label="Figures" { (figures(v, names.get(&v.challenge).map_or(&[][..], Vec::as_slice))) }
                        }
                    }
                }
            }
            @if rows.len() > SHOWN { p.muted { "The " (SHOWN) " newest of " (rows.len()) " are shown." } }
        }
    };
    Ok(page(&ctx, "My submissions", body))
}

/// The submission's state changes as server-sent events: the API's stream, with the
/// session's token (a browser's `EventSource` cannot send one itself).
pub(crate) async fn events(
    State(web): State<Web>,
    ctx: Ctx,
    from: Option<Extension<server::ClientAddr>>,
    Path(id): Path<String>,
    headers: axum::http::HeaderMap,
) -> PageResult {
    let Some(token) = ctx.token.as_deref() else {
        return Err(err(PageError::from_api(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "",
        )));
    };
    let mut b = axum::extract::Request::builder()
        .uri(format!("/api/v1/submissions/{}/events", seg(&id)))
        .header(header::AUTHORIZATION, format!("Bearer {token}"));
    if let Some(last) = headers.get("last-event-id") {
        b = b.header("last-event-id", last.clone());
    }
    // The API counts streams per address too.
    if let Some(Extension(a)) = from {
        b = b.extension(a);
    }
    let req = b.body(Body::empty()).map_err(internal)?;
    Ok(api::forward(&web, req).await)
}

pub(crate) async fn submission(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
) -> PageResult {
    let (_, token) = ctx.need_user(&format!("/submissions/{}", seg(&id)))?;
    let s = submission_view(&web, token, &id).await?;
    let mut logs = BTreeMap::new();
    for st in s.stages.iter().filter(|st| st.log) {
        let a = api::get(
            &web,
            &format!("/api/v1/submissions/{}/logs/{}", s.id, seg(&st.stage)),
            Some(token),
        )
        .await;
        if a.status.is_success() {
            logs.insert(
                st.stage.clone(),
                text::clean_log(&String::from_utf8_lossy(&a.body)),
            );
        }
    }
    let state = word(&s.state);
    let quiz_records = crate::viewer::quiz_records(&s);
    // The challenge read once: its definition (ranking names, the kind's quiz view, who
    // may view records) and the organisers' reason for a pause, shown beside a queued
    // submission as on the challenge's page.
    let row = web.store.challenge(&s.challenge).await.ok();
    let def = row.as_ref().and_then(super::definition_of);
    let paused_why = row
        .and_then(|c| c.paused)
        .filter(|_| s.judging_paused)
        .map(|p| p.why);
    let viewable = !quiz_records.is_empty() && crate::viewer::may_view_by(&ctx, def.as_ref());
    let now = web.store.now();
    // Only the team may choose its final entry (the API refuses anyone else, an
    // organiser too), and only until the phase's selection closes.
    let selection_closes = web
        .store
        .phases(&s.challenge)
        .await
        .map_err(internal)?
        .into_iter()
        .find(|p| p.name == s.phase)
        .and_then(|p| p.selection_closes);
    let may_select = state == "scored"
        && !s.selected
        && !ctx.is_organiser()
        && selection_closes.is_none_or(|t| now < t);
    let names = names_of(def.as_ref());
    // What the challenge's kind makes of its quiz report; its figures and items alone
    // when the definition cannot be read.
    let quiz_view = s.quiz.as_ref().map(|q| match &def {
        Some(d) => judge::kinds::of(d.scorer).quiz_view(&q.report),
        None => judge::kinds::quiz::QuizView::plain(&q.report, None, &[]),
    });
    let quiz_stage = s.stages.iter().find(|st| st.stage == "quiz");
    let quiz_passed = quiz_stage_passed(&s);
    let log_href = |stage: &str| format!("/submissions/{}/logs/{}", s.id, seg(stage));
    let body = html! {
        p.crumbs { a href={"/challenges/" (seg(&s.challenge))} { (s.challenge) } " · " a href="/submissions" { "My submissions" } }
        h1 { "Submission" @if s.selected { " " span.badge.final { "final entry" } } }
        div #live data-submission=(s.id) { p.lead { (summary(&s, now, paused_why.as_deref())) } }
        dl.facts {
            dt { "Team" } dd { (s.team_name) }
            dt { "Phase" } dd { (s.phase) }
            dt { "Received" } dd { (time(s.received_at)) }
            dt { "Attempts" } dd { (s.attempts) }
            dt { "Entry sha256" } dd { code.hash { (s.reproduce.entry_sha256) } }
            @if s.selected { dt { "Final entry" } dd { "yes, selected" } }
        }
        @if state == "queued" && !ctx.is_organiser() {
            form method="post" action={"/submissions/" (s.id) "/withdraw"} { (csrf(&ctx)) button type="submit" { "Withdraw (not charged)" } }
        }
        @if may_select {
            form method="post" action={"/submissions/" (s.id) "/select"} { (csrf(&ctx)) button type="submit" { "Make this our final entry" } }
        } @else if state == "scored" && !s.selected && !ctx.is_organiser() {
            @if let Some(t) = selection_closes { p.muted { "The choice of final entries closed " (time(t)) "." } }
        }
        @if !s.scores.is_empty() || s.scores_hidden_until.is_some() {
            section aria-labelledby="scores" {
                h2 #scores { "Scores" }
                @if let Some(u) = s.scores_hidden_until { p { "Exam scores of this phase are shown after it closes, " (time(u)) "." } }
                dl.facts { @for (k, v) in &s.scores { dt { (name_of(&names, k)) } dd { (html::num(*v, 6)) } } }
            }
        }
        @if !s.stages.is_empty() {
            section aria-labelledby="stages" {
                h2 #stages { "Stages" }
                div.scroll { table {
                    thead { tr { th scope="col" { "Stage" } th scope="col" { "Verdict" } th scope="col" { "Time" } th scope="col" { "Records" } th scope="col" { "Why" } } }
                    tbody {
                        @for st in &s.stages {
                            tr {
                                th scope="row" { (st.stage) }
                                td { (state_badge(&word(&st.outcome))) }
                                td { (html::duration(st.seconds)) }
                                td { @if let Some(c) = &st.counts { (c.ok) " of " (c.records) " ok"
                                    @if c.failures > 0 { ", " (c.failures) " failed" }
                                    @if c.timeouts > 0 { ", " (c.timeouts) " timed out" }
                                    @if c.defaulted > 0 { ", " (c.defaulted) " defaulted" } } }
                                td { @if let Some(r) = &st.reason { (r) } }
                            }
                        }
                    }
                } }
                p.muted { "The exam shows counts only: its per-record results stay with the organisers." }
            }
        }
        @if let Some(st) = quiz_stage.filter(|_| !quiz_passed) {
            section aria-labelledby="quiz" {
                h2 #quiz { "Quiz" }
                p { "The quiz stage " (word(&st.outcome)) ", so it has no score"
                    @if let Some(r) = &st.reason { ": " (r) } "." }
            }
        } @else if let (Some(q), Some(view)) = (&s.quiz, &quiz_view) {
            section aria-labelledby="quiz" {
                h2 #quiz { "Quiz" }
                p { "Quiz score: " strong { (html::num(Some(q.score), 6)) } }
                (quiz::report(view))
                @if viewable && !quiz_records.is_empty() {
                    p { "Draw a record with your entry's answer against the truth:" }
                    ul.records { @for r in &quiz_records { li { a href={"/submissions/" (s.id) "/records/" (seg(r))} { (r) } } } }
                }
            }
        }
        @if !s.warnings.is_empty() {
            section aria-labelledby="warnings" {
                h2 #warnings { "Warnings" }
                ul { @for w in s.warnings.iter().take(200) { li { (warning_text(w)) } } }
                @if s.warnings.len() > 200 { p.muted { (s.warnings.len() - 200) " more." } }
            }
        }
        @for (stage, (log, cut)) in &logs {
            section aria-label={"Log of " (stage)} {
                h2 { "Log: " (stage) }
                p { a.download href=(log_href(stage)) download { "Download the " (stage) " log" }
                    @if *cut { " — the first " (html::bytes(text::LOG_CAP as u64)) " are shown below; the download has it all." } }
                pre.log { (log) }
            }
        }
        section aria-labelledby="reproduce" {
            h2 #reproduce { "Reproduce it locally" }
            pre { code { (s.reproduce.command) } }
            dl.facts {
                @if let Some(v) = &s.reproduce.judge_version { dt { "Judge" } dd { (v) } }
                @if let Some(v) = &s.reproduce.scorer_version { dt { "Scorer" } dd { (v) } }
                @if let Some(v) = &s.reproduce.runtime_lock { dt { "Runtime lock" } dd { code.hash { (v) } } }
                dt { "Definition sha256" } dd { code.hash { (s.reproduce.definition_sha256) } }
                dt { "Data manifest sha256" } dd { code.hash { (s.reproduce.manifest_sha256) } }
                dt { "Entry sha256" } dd { code.hash { (s.reproduce.entry_sha256) } }
            }
            @if s.reproduce.judge_version.is_none() { p.muted { "The judge's and scorer's versions are named here once it is judged." } }
        }
        @if let Some(o) = &s.organiser {
            section aria-labelledby="org" {
                h2 #org { "Organisers only" }
                p { "Entry on the server: " code { (o.entry_path) } "; results stored: " (o.results) }
                ol { @for h in &o.history { li { (time(h.at)) " " (h.from.map(|f| word(&f)).unwrap_or_default()) " → " (word(&h.to)) " (" (h.reason) ")" } } }
                form method="post" action={"/organiser/requeue/" (s.id)} { (csrf(&ctx)) button type="submit" { "Requeue" } }
            }
        }
    };
    Ok(page(&ctx, "Submission", body))
}

/// A stage's whole log as a download, for the signed-in reader: the API's own answer
/// to the session's token, so its rules hold unchanged (a team gets every stage's log
/// but the exam's; another team gets "not found").
pub(crate) async fn log_download(
    State(web): State<Web>,
    ctx: Ctx,
    Path((id, stage)): Path<(String, String)>,
) -> PageResult {
    let (_, token) = ctx.need_user(&format!("/submissions/{}", seg(&id)))?;
    let a = api::get(
        &web,
        &format!("/api/v1/submissions/{}/logs/{}", seg(&id), seg(&stage)),
        Some(token),
    )
    .await;
    if !a.status.is_success() {
        return Err(err(a.refusal()));
    }
    // The file's name from the address, cut to plain characters (it goes into a header).
    let plain = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .take(64)
            .collect()
    };
    let disposition = format!(
        "attachment; filename=\"submission-{}-{}.log\"",
        plain(&id),
        plain(&stage)
    );
    let mut r = Response::new(Body::from(a.body));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&disposition) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-store"),
    );
    Ok(r)
}

fn warning_text(w: &serde_json::Value) -> String {
    match w {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(o) => o
            .iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k}: {s}"),
                v => format!("{k}: {v}"),
            })
            .collect::<Vec<_>>()
            .join(" · "),
        v => v.to_string(),
    }
}

pub(crate) async fn withdraw(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(f): Form<CsrfOnly>,
) -> PageResult {
    submission_action(&web, &ctx, &id, "withdraw", &f.csrf).await
}

pub(crate) async fn select(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(f): Form<CsrfOnly>,
) -> PageResult {
    submission_action(&web, &ctx, &id, "select", &f.csrf).await
}

async fn submission_action(web: &Web, ctx: &Ctx, id: &str, action: &str, sent: &str) -> PageResult {
    let (_, token) = ctx.need_user(&format!("/submissions/{}", seg(id)))?;
    ctx.check_csrf(sent).map_err(err)?;
    let a = api::post_json(
        web,
        &format!("/api/v1/submissions/{}/{action}", seg(id)),
        Some(token),
        &serde_json::json!({}),
    )
    .await;
    if !a.status.is_success() {
        return Err(err(a.refusal()));
    }
    Ok(redirect(&format!("/submissions/{}", seg(id))))
}
