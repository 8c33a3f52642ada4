//! A challenge's submissions in the console (`/organiser/challenges/{id}/submissions`):
//! every one, newest first, filtered by state and team name, with requeue for those in
//! `error`; and `/organiser/results.csv`, every submission with its exact figures.

use axum::Form;
use axum::extract::{Path, Query, State};
use axum::response::IntoResponse;
use maud::html;
use serde::Deserialize;

use server::views::SubmissionRow;

use super::{
    Call, Done, Kept, PageResult, Room, Sent, act, challenge, console_page, done, form_head,
    internal, organiser, room,
};
use crate::Web;
use crate::api::seg;
use crate::html::{PageError, state_badge, time};
use crate::session::Ctx;

const STATES: [&str; 6] = [
    "queued",
    "running",
    "scored",
    "failed",
    "error",
    "withdrawn",
];

/// At most this many rows are drawn (the newest); the CSV has every one.
const SHOWN: usize = 300;

#[derive(Deserialize, Default)]
pub(crate) struct Filters {
    state: Option<String>,
    team: Option<String>,
    #[serde(flatten)]
    done: Done,
}

pub(crate) async fn page_of(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Query(f): Query<Filters>,
) -> PageResult {
    draw(&web, &ctx, &id, f, Kept::default()).await
}

async fn draw(web: &Web, ctx: &Ctx, id: &str, f: Filters, kept: Kept<'_>) -> PageResult {
    let token = organiser(ctx)?;
    let c = challenge(web, token, id).await?;
    let state = f.state.as_deref().filter(|s| STATES.contains(s));
    let team_filter = f.team.as_deref().map(str::trim).filter(|t| !t.is_empty());
    // Filtered here: the store pages by challenge, and a console shows a few hundred.
    let mut rows = Vec::new();
    let mut total = 0;
    let mut after = None;
    loop {
        let page = web
            .store
            .challenge_submissions(&c.id, after, 500)
            .await
            .map_err(internal)?;
        let Some(last) = page.last().map(|s| s.id) else {
            break;
        };
        for s in page {
            if state.is_some_and(|w| w != s.state.as_str()) {
                continue;
            }
            let team = web.store.team(s.team).await.map_err(internal)?;
            if team_filter.is_some_and(|w| !team.name.to_lowercase().contains(&w.to_lowercase())) {
                continue;
            }
            total += 1;
            let phase = c
                .phases
                .iter()
                .find(|p| p.id == s.phase.0)
                .map(|p| p.name.clone())
                .unwrap_or_default();
            rows.push((phase, team.name, s));
        }
        after = Some(last);
    }
    rows.sort_by_key(|r| std::cmp::Reverse(r.2.received_at));
    rows.truncate(SHOWN);
    let base = Room::Submissions.path(&c.id);
    let body = html! {
        form.inline method="get" action=(base) {
            label for="f-state" { "State" }
            select #f-state name="state" {
                option value="" { "all" }
                @for s in STATES { option value=(s) selected[state == Some(s)] { (s) } }
            }
            label for="f-team" { "Team" }
            input #f-team type="search" name="team" value=(team_filter.unwrap_or(""));
            button type="submit" { "Filter" }
        }
        (kept.refusal("requeue"))
        @if rows.is_empty() { p { "No submission matches." } }
        @else {
            div.scroll { table #console-submissions data-sortable {
                thead { tr { th scope="col" { "Received" } th scope="col" { "Phase" } th scope="col" { "Team" } th scope="col" { "State" } th scope="col" { "Attempts" } th scope="col" { "Action" } } }
                tbody { @for (p, t, s) in &rows { tr {
                    td { a href={"/submissions/" (s.id.0)} { (time(s.received_at)) } }
                    td { (p) } td { (t) }
                    td { (state_badge(s.state.as_str())) }
                    td.num { (s.attempt) }
                    td { @if s.state.as_str() == "error" {
                        form.inline method="post" action={"/organiser/challenges/" (seg(&c.id)) "/requeue/" (s.id.0)} {
                            (form_head(ctx, "requeue")) button type="submit" { "Requeue" }
                        }
                    } }
                } } }
            } }
            @if total > rows.len() { p.muted { "The " (rows.len()) " newest of " (total) " are shown; the CSV has them all." } }
        }
        p { a href={"/organiser/results.csv?challenge=" (seg(&c.id))} { "Download every submission of " (c.id) " with its figures (CSV)" } }
    };
    Ok(console_page(
        ctx,
        kept,
        &format!("Submissions of {}", c.title),
        room(&c, Room::Submissions, f.done.notice(), body),
    ))
}

/// The submission page's Requeue button: the same request, then that page again (a
/// refusal is an error page, as the submission page has no form to keep).
pub(crate) async fn requeue_from_submission(
    State(web): State<Web>,
    ctx: Ctx,
    Path(submission): Path<String>,
    Form(sent): Form<Sent>,
) -> PageResult {
    let (web, ctx) = (&web, &ctx);
    let submission = submission.as_str();
    act(
        web,
        ctx,
        sent,
        |_| {
            let path = format!("/api/v1/submissions/{}/requeue", seg(submission));
            Ok(Call::post(path, serde_json::json!({})))
        },
        |s: SubmissionRow| format!("/submissions/{}", s.id),
        |s| async move {
            let f = s.failed().map(|f| (f.status, f.message.clone()));
            let (status, message) = f.unwrap_or((axum::http::StatusCode::CONFLICT, String::new()));
            Err(PageError::new(status, "Not requeued", &message).into_response())
        },
    )
    .await
}

/// Requeues a submission in `error` (a new attempt) through the API.
pub(crate) async fn requeue(
    State(web): State<Web>,
    ctx: Ctx,
    Path((id, submission)): Path<(String, String)>,
    Form(sent): Form<Sent>,
) -> PageResult {
    let (web, ctx) = (&web, &ctx);
    let id = id.as_str();
    let submission = submission.as_str();
    act(
        web,
        ctx,
        sent,
        |_| {
            let path = format!("/api/v1/submissions/{}/requeue", seg(submission));
            Ok(Call::post(path, serde_json::json!({})))
        },
        |_: SubmissionRow| done(&Room::Submissions.path(id), "requeued", ""),
        |s| async move { draw(web, ctx, id, Filters::default(), Kept(Some(&s))).await },
    )
    .await
}

#[derive(Deserialize)]
pub(crate) struct ResultsQuery {
    challenge: String,
}

/// One CSV field: quoted when it holds a separator, a quote or a line break; a leading
/// `=`, `+`, `-` or `@` is prefixed with `'` so that a spreadsheet does not run a team's
/// name as a formula.
fn csv_field(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@']) {
        format!("'{s}")
    } else {
        s.to_owned()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// Every submission of a challenge with its live result's figures, exactly as stored
/// (the organiser's view), as CSV.
pub(crate) async fn results_csv(
    State(web): State<Web>,
    ctx: Ctx,
    Query(q): Query<ResultsQuery>,
) -> PageResult {
    organiser(&ctx)?;
    web.store
        .challenge(&q.challenge)
        .await
        .map_err(|e| match e {
            store::Error::NotFound { .. } => {
                PageError::not_found("There is no such challenge.").into_response()
            }
            e => internal(e),
        })?;
    let phases = web.store.phases(&q.challenge).await.map_err(internal)?;
    let mut keys: Vec<String> = Vec::new();
    let mut rows = Vec::new();
    let mut after = None;
    loop {
        let page = web
            .store
            .challenge_submissions(&q.challenge, after, 500)
            .await
            .map_err(internal)?;
        let Some(last) = page.last().map(|s| s.id) else {
            break;
        };
        for s in page {
            let team = web.store.team(s.team).await.map_err(internal)?;
            let results = web.store.results(s.id).await.map_err(internal)?;
            let live = results
                .iter()
                .find(|r| !r.replaced && r.attempt.number == s.attempt);
            let figures: Vec<(String, Option<f64>)> = live
                .map(|r| r.figures.iter().map(|f| (f.key.clone(), f.value)).collect())
                .unwrap_or_default();
            for (k, _) in &figures {
                if !keys.contains(k) {
                    keys.push(k.clone());
                }
            }
            let phase = phases
                .iter()
                .find(|p| p.id == s.phase)
                .map(|p| p.name.clone())
                .unwrap_or_default();
            let versions = live
                .map(|r| (r.judge_version.clone(), r.scorer_version.clone()))
                .unwrap_or_default();
            rows.push((s, team.name, phase, figures, versions));
        }
        after = Some(last);
    }
    let mut out = String::from(
        "submission,phase,team,state,received_at,attempts,selected,entry_sha256,judge_version,scorer_version",
    );
    for k in &keys {
        out.push(',');
        out.push_str(&csv_field(k));
    }
    out.push('\n');
    for (s, team, phase, figures, (judge, scorer)) in &rows {
        let cells = [
            s.id.0.to_string(),
            phase.clone(),
            team.clone(),
            s.state.as_str().to_owned(),
            s.received_at.to_rfc3339(),
            s.attempt.to_string(),
            s.selected.to_string(),
            s.entry_sha256.clone(),
            judge.clone(),
            scorer.clone(),
        ];
        out.push_str(
            &cells
                .iter()
                .map(|c| csv_field(c))
                .collect::<Vec<_>>()
                .join(","),
        );
        for k in &keys {
            out.push(',');
            if let Some(Some(v)) = figures.iter().find(|(f, _)| f == k).map(|(_, v)| *v) {
                out.push_str(&v.to_string());
            }
        }
        out.push('\n');
    }
    let file = format!(
        "attachment; filename=\"{}-results.csv\"",
        q.challenge.replace(
            |c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_',
            "_"
        )
    );
    Ok((
        [
            (
                axum::http::header::CONTENT_TYPE,
                "text/csv; charset=utf-8".to_owned(),
            ),
            (axum::http::header::CONTENT_DISPOSITION, file),
        ],
        out,
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::csv_field;

    #[test]
    fn csv_fields_are_quoted_and_never_formulas() {
        assert_eq!(csv_field("Alpha"), "Alpha");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(csv_field("-1"), "'-1");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
    }
}
