//! The submit page and the upload it posts.

use super::*;

// ---- submitting ----

struct SubmitView<'a> {
    c: &'a ChallengeView,
    open: Vec<&'a PhaseView>,
    quota: Option<QuotaView>,
    team: Option<store::Team>,
    refusal: Option<Markup>,
    max_bytes: Option<u64>,
}

fn submit_body(ctx: &Ctx, v: &SubmitView) -> Markup {
    let base = format!("/challenges/{}", seg(&v.c.id));
    html! {
        p.crumbs { a href=(base) { (v.c.title) } }
        h1 { "Submit an entry" }
        div #refusal-slot {
            @if let Some(r) = &v.refusal { (r) }
        }
        @if v.team.is_none() {
            p { "You need a team to submit. " a href={(base) "/team"} { "Form or join a team" } "." }
        } @else if v.open.is_empty() {
            p.error role="alert" { "No phase of this challenge is open now; see the phases on the " a href=(base) { "challenge's page" } "." }
        } @else {
            @if let Some(q) = &v.quota {
                section.quota aria-labelledby="quota" {
                    h2 #quota { "Quota left" }
                    ul.plain {
                        @if let Some(c) = q.closes {
                            li { "The phase closes for your team " strong { (time(c)) } @if q.extended { " (an extension the organisers granted your team)" } }
                        }
                        @if q.overridden { li { "Your team's limits were set by the organisers." } }
                        li { "In this phase: " strong { (q.total_left.map_or("no limit".to_string(), |n| n.to_string())) } }
                        li { "Today (UTC): " strong { (q.today_left.map_or("no limit".to_string(), |n| n.to_string())) } }
                        li { "Running or queued now: " (q.running) @if let Some(m) = q.max_concurrent { " of " (m) } }
                        @if !q.spent.is_empty() {
                            li.error { "Spent: " (q.spent.iter().map(word).collect::<Vec<_>>().join(", "))
                                @if let Some(n) = q.next_slot_at { "; next slot " (time(n)) } }
                        }
                    }
                    p.muted { "Failed entries count; entries that end in error (our fault) never do." }
                }
            }
            form #upload.stack method="post" action={(base) "/submit"} enctype="multipart/form-data" {
                (csrf(ctx))
                // New with every page: the form sent twice (a double click, a retry
                // after a lost answer) is one submission (docs/service.md, "Uploads").
                input type="hidden" name="idempotency_key" value=(uuid::Uuid::now_v7());
                label for="phase" { "Phase" }
                select #phase name="phase" {
                    @for p in &v.open { option value=(p.name) { (p.name) " (closes " (p.team_closes.unwrap_or(p.closes).format("%Y-%m-%d %H:%M UTC")) @if p.team_closes.is_some() { " for your team" } ")" } }
                }
                label for="method" { "Method name (optional, shown on the leaderboard)" }
                input #method type="text" name="method" maxlength="100";
                div.drop #drop {
                    label for="entry" { "Entry archive (.zip, .tar.gz or .tar"
                        @if let Some(m) = v.max_bytes { ", at most " (html::bytes(m)) } ")" }
                    input #entry type="file" name="entry" required accept=".zip,.tar,.gz,.tgz,application/zip,application/gzip,application/x-tar";
                    p.hint.js-only { "or drop the file here" }
                }
                progress #progress max="100" value="0" hidden { "0%" }
                p #progress-text aria-live="polite" {}
                button type="submit" { "Upload" }
            }
        }
    }
}

async fn submit_view<'a>(
    web: &Web,
    ctx: &Ctx,
    c: &'a ChallengeView,
    phase: Option<&str>,
) -> Result<SubmitView<'a>, Response> {
    let (user, token) = ctx.need_user(&format!("/challenges/{}/submit", seg(&c.id)))?;
    let team = web.store.team_of(user.id, &c.id).await.map_err(internal)?;
    let open: Vec<&PhaseView> = c.phases.iter().filter(|p| p.open).collect();
    let chosen = phase.or(open.first().map(|p| p.name.as_str()));
    let quota = match (&team, chosen) {
        (Some(_), Some(p)) => api::get(
            web,
            &format!("/api/v1/challenges/{}/quota?phase={}", seg(&c.id), seg(p)),
            Some(token),
        )
        .await
        .json::<QuotaView>()
        .ok(),
        _ => None,
    };
    Ok(SubmitView {
        c,
        open,
        quota,
        team,
        refusal: None,
        max_bytes: None,
    })
}

pub(crate) async fn submit_page(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
) -> PageResult {
    let c = challenge_view(&web, &ctx, &id).await?;
    let v = submit_view(&web, &ctx, &c, None).await?;
    Ok(page(&ctx, "Submit", submit_body(&ctx, &v)))
}

fn refusal_markup(r: &api::Refusal) -> Markup {
    let detail = r.body.as_ref().map(|b| &b.error);
    let (title, advice) = match r.code.as_str() {
        "invalid_entry" => (
            "The archive was refused",
            "Fix the archive and upload it again; nothing was charged to your quota.",
        ),
        "phase_closed" => (
            "The phase is closed",
            "Uploads are accepted only while a phase is open; see the challenge's phases.",
        ),
        "quota_spent" => (
            "Your quota is spent",
            "Wait for the next slot; entries that end in error are never charged.",
        ),
        "too_large" => (
            "The archive is too large",
            "Make the archive smaller (leave data and caches out).",
        ),
        "not_member" => (
            "You are not in a team",
            "Form or join a team of this challenge first.",
        ),
        _ => (
            "The upload was refused",
            "Check the message, then try again.",
        ),
    };
    html! {
        section.refusal role="alert" #refusal data-code=(r.code) {
            h2 { (title) }
            p { (r.message) }
            @if let Some(d) = detail {
                @if let Some(n) = d.next_slot_at { p { "Next slot: " (time(n)) } }
                @if let Some(c) = d.closes {
                    @if d.extended == Some(true) { p { "The phase closed for your team " (time(c)) ", at the end of its extension." } }
                    @else { p { "The phase closed " (time(c)) "." } }
                }
            }
            p { (advice) }
        }
    }
}

/// The most a form part that is not the file may hold (the CSRF token, the phase, the
/// method name), in bytes.
const FIELD_CAP: usize = 4 << 10;
/// The most parts before the file.
const FIELDS: usize = 8;

/// A form part other than the file, read up to [`FIELD_CAP`]: past it, 413 without
/// reading the rest (the route has no body limit, so that the file can stream).
async fn capped_text(field: &mut axum::extract::multipart::Field<'_>) -> Result<String, Response> {
    let mut value = Vec::new();
    loop {
        match field.chunk().await {
            Ok(Some(b)) => {
                if value.len() + b.len() > FIELD_CAP {
                    return Err(err(PageError::new(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        "The form was too large",
                        &format!(
                            "A field of the upload form holds at most {} KiB (the entry \
                             archive is the only large part).",
                            FIELD_CAP >> 10
                        ),
                    )));
                }
                value.extend_from_slice(&b);
            }
            Ok(None) => break,
            Err(e) => {
                return Err(err(PageError::new(
                    StatusCode::BAD_REQUEST,
                    "The form was incomplete",
                    &format!("The upload broke off ({e}). Try again."),
                )));
            }
        }
    }
    String::from_utf8(value).map_err(|_| {
        err(PageError::new(
            StatusCode::BAD_REQUEST,
            "The form was incomplete",
            "A field of the form was not text.",
        ))
    })
}

/// The upload form. The file is streamed into the API's upload as it arrives (never
/// held whole). Before it, the form's other parts are read one by one, each capped
/// ([`FIELD_CAP`], [`FIELDS`] of them), and the CSRF token must be the first: a form
/// that starts otherwise is refused before anything else of it is read.
pub(crate) async fn submit(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    mut form: Multipart,
) -> PageResult {
    let (_, token) = ctx.need_user(&format!("/challenges/{}/submit", seg(&id)))?;
    let token = token.to_owned();
    let bad = |m: &str| {
        err(PageError::new(
            StatusCode::BAD_REQUEST,
            "The form was incomplete",
            m,
        ))
    };
    let mut csrf_ok = false;
    let mut phase: Option<String> = None;
    let mut method: Option<String> = None;
    let mut key: Option<String> = None;
    let mut answer = None;
    let mut fields = 0;
    while let Some(mut field) = form
        .next_field()
        .await
        .map_err(|e| bad(&format!("The upload broke off ({e}). Try again.")))?
    {
        let name = field.name().unwrap_or("").to_owned();
        fields += 1;
        if fields == 1 && name != "csrf" {
            return Err(bad(
                "The form must start with its CSRF token. Reload the page and send it again.",
            ));
        }
        if fields > FIELDS {
            return Err(bad("The form has too many fields."));
        }
        if name == "entry" {
            if !csrf_ok {
                return Err(err(ctx.check_csrf("").err().unwrap_or_else(|| {
                    PageError::new(
                        StatusCode::FORBIDDEN,
                        "Refused",
                        "The form had no CSRF token.",
                    )
                })));
            }
            let mut q = Vec::new();
            if let Some(p) = phase.as_deref().filter(|p| !p.is_empty()) {
                q.push(format!("phase={}", seg(p)));
            }
            if let Some(m) = method.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
                q.push(format!("method={}", seg(m)));
            }
            let path = format!(
                "/api/v1/challenges/{}/submissions{}{}",
                seg(&id),
                if q.is_empty() { "" } else { "?" },
                q.join("&")
            );
            let (tx, rx) =
                tokio::sync::mpsc::channel::<Result<axum::body::Bytes, std::io::Error>>(8);
            let stream = futures_util::stream::unfold(rx, |mut rx| async move {
                rx.recv().await.map(|item| (item, rx))
            });
            let pump = async {
                loop {
                    match field.chunk().await {
                        Ok(Some(b)) => {
                            if tx.send(Ok(b)).await.is_err() {
                                break;
                            }
                        }
                        Ok(None) => break,
                        Err(e) => {
                            let _ = tx.send(Err(std::io::Error::other(e.to_string()))).await;
                            break;
                        }
                    }
                }
                drop(tx);
            };
            let call = api::upload(
                &web,
                &path,
                &token,
                key.as_deref().filter(|k| !k.is_empty()),
                Body::from_stream(stream),
            );
            let ((), a) = tokio::join!(pump, call);
            answer = Some(a);
            break;
        }
        let value = capped_text(&mut field).await?;
        match name.as_str() {
            "csrf" => {
                ctx.check_csrf(&value).map_err(err)?;
                csrf_ok = true;
            }
            "phase" => phase = Some(value),
            "method" => method = Some(value),
            "idempotency_key" => key = Some(value),
            _ => {}
        }
    }
    let Some(a) = answer else {
        return Err(bad("Choose an entry archive to upload."));
    };
    match a.json::<CreatedSubmission>() {
        Ok(s) => Ok(redirect(&format!("/submissions/{}", s.id))),
        Err(r) if r.status.is_client_error() && r.status != StatusCode::NOT_FOUND => {
            let c = challenge_view(&web, &ctx, &id).await?;
            let mut v = submit_view(&web, &ctx, &c, phase.as_deref()).await?;
            v.refusal = Some(refusal_markup(&r));
            let mut resp = page(&ctx, "Submit", submit_body(&ctx, &v));
            *resp.status_mut() = r.status;
            Ok(resp)
        }
        Err(r) => Err(err(r)),
    }
}
