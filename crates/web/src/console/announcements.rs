//! The organiser's page for what a challenge's page says: its overview, data and rules
//! texts, and its announcements (post, preview on the challenge page, take down), at
//! `/organiser/challenges/{id}/announcements`. Every change is the API's own request
//! with the organiser's token; a refused form is shown again with the reason beside it
//! and the text as typed.

use axum::Form;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use maud::html;
use serde::Deserialize;

use server::views::{AboutView, AnnouncementView, ChallengeView};

use super::{Call, Kept, PageResult, Sent, act, console_page, form_head};
use crate::Web;
use crate::api::{self, seg};
use crate::html::{PageError, csrf, time};
use crate::markdown;
use crate::session::Ctx;

fn err(e: impl Into<PageError>) -> Response {
    e.into().into_response()
}

#[derive(Deserialize)]
pub(crate) struct Done {
    done: Option<String>,
}

fn base(id: &str) -> String {
    format!("/organiser/challenges/{}/announcements", seg(id))
}

async fn body(
    web: &Web,
    ctx: &Ctx,
    id: &str,
    done: Option<&str>,
    kept: Kept<'_>,
) -> Result<Response, Response> {
    let (_, token) = ctx.need_organiser()?;
    let c: ChallengeView = api::get(web, &format!("/api/v1/challenges/{}", seg(id)), Some(token))
        .await
        .json()
        .map_err(err)?;
    let about: AboutView = api::get(
        web,
        &format!("/api/v1/challenges/{}/about", seg(&c.id)),
        Some(token),
    )
    .await
    .json()
    .map_err(err)?;
    let news: Vec<AnnouncementView> = api::get(
        web,
        &format!("/api/v1/challenges/{}/announcements", seg(&c.id)),
        Some(token),
    )
    .await
    .json()
    .map_err(err)?;
    let here = base(&c.id);
    // The texts as stored, or as typed when the form was refused.
    let text = |field: &str, stored: &str| kept.value("texts", field, stored);
    let data_url = about.data_url.clone().unwrap_or_default();
    let title = format!("{} — overview and announcements", c.title);
    let page_body = html! {
        p.crumbs { a href="/organiser" { "Organiser console" } " › " a href={"/challenges/" (seg(&c.id))} { (c.title) } }
        h1 { "Overview and announcements" }
        p { "What the " a href={"/challenges/" (seg(&c.id))} { "challenge's page" } " says to newcomers. Texts are Markdown; "
            "links work, raw HTML is cleaned (no scripts, styles, forms, frames or images), and headings start below the page's own." }
        @match done {
            Some("texts") => { p.notice role="status" { "Saved: the challenge's page shows the new texts." } }
            Some("posted") => { p.notice role="status" { "Posted: it is first on the challenge's page and in its feed." } }
            Some("deleted") => { p.notice role="status" { "Taken down." } }
            _ => {}
        }
        section aria-labelledby="texts" {
            h2 #texts { "Overview, data and rules" }
            (kept.refusal("texts"))
            @if let Some(t) = about.updated_at { p.muted { "Last saved " (time(t)) "." } }
            form.stack method="post" action={(here) "/texts"} {
                (form_head(ctx, "texts"))
                label for="overview" { "Overview (what the challenge is about, who runs it)" }
                textarea #overview name="overview" rows="8" maxlength="20000" { (text("overview", &about.overview)) }
                label for="data_url" { "Data download address (http or https; empty: none)" }
                input #data_url type="url" name="data_url" maxlength="2000" value=(text("data_url", &data_url)) placeholder="https://…";
                label for="data_instructions" { "How to get the data (shown with the address, or instead of it)" }
                textarea #data_instructions name="data_instructions" rows="5" maxlength="20000" { (text("data_instructions", &about.data_instructions)) }
                label for="rules" { "Rules (the platform's own are listed after them)" }
                textarea #rules name="rules" rows="8" maxlength="20000" { (text("rules", &about.rules)) }
                button type="submit" { "Save the texts" }
            }
        }
        section aria-labelledby="post" {
            h2 #post { "Post an announcement" }
            (kept.refusal("post"))
            form.stack method="post" action={(here) "/new"} {
                (form_head(ctx, "post"))
                label for="a-title" { "Title (one line)" }
                input #a-title type="text" name="title" required maxlength="200" value=(kept.value("post", "title", ""));
                label for="a-body" { "Text (Markdown)" }
                textarea #a-body name="body" rows="6" maxlength="20000" { (kept.value("post", "body", "")) }
                button type="submit" { "Post" }
            }
        }
        section aria-labelledby="posted" {
            h2 #posted { "Posted" }
            @if news.is_empty() { p { "Nothing yet." } }
            @for a in &news {
                article.announcement {
                    h3 { (a.title) }
                    p.muted { "Posted " (time(a.posted_at)) }
                    div.prose { (maud::PreEscaped(markdown::to_html(&a.body))) }
                    form.inline method="post" action={(here) "/" (a.id) "/delete"} {
                        (csrf(ctx))
                        button.danger type="submit" { "Take down “" (a.title) "”" }
                    }
                }
            }
        }
    };
    Ok(console_page(ctx, kept, &title, page_body))
}

pub(crate) async fn announcements_page(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    axum::extract::Query(d): axum::extract::Query<Done>,
) -> PageResult {
    body(&web, &ctx, &id, d.done.as_deref(), Kept::default()).await
}

/// Saves the overview, data and rules texts (`PUT …/about`).
pub(crate) async fn save_texts(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(sent): Form<Sent>,
) -> PageResult {
    let (web, ctx, id) = (&web, &ctx, id.as_str());
    act(
        web,
        ctx,
        sent,
        |s| {
            let body = serde_json::json!({
                "overview": s.get("overview"),
                "data_url": s.get("data_url"),
                "data_instructions": s.get("data_instructions"),
                "rules": s.get("rules"),
            });
            Ok(Call::put(
                format!("/api/v1/challenges/{}/about", seg(id)),
                body,
            ))
        },
        |_: serde::de::IgnoredAny| format!("{}?done=texts", base(id)),
        |s| async move { body(web, ctx, id, None, Kept(Some(&s))).await },
    )
    .await
}

/// Posts an announcement.
pub(crate) async fn post_announcement(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(sent): Form<Sent>,
) -> PageResult {
    let (web, ctx, id) = (&web, &ctx, id.as_str());
    act(
        web,
        ctx,
        sent,
        |s| {
            let body = serde_json::json!({ "title": s.get("title"), "body": s.get("body") });
            let path = format!("/api/v1/challenges/{}/announcements", seg(id));
            Ok(Call::post(path, body))
        },
        |_: serde::de::IgnoredAny| format!("{}?done=posted", base(id)),
        |s| async move { body(web, ctx, id, None, Kept(Some(&s))).await },
    )
    .await
}

/// Takes an announcement down.
pub(crate) async fn delete_announcement(
    State(web): State<Web>,
    ctx: Ctx,
    Path((id, announcement)): Path<(String, String)>,
    Form(sent): Form<Sent>,
) -> PageResult {
    let (web, ctx, id) = (&web, &ctx, id.as_str());
    act(
        web,
        ctx,
        sent,
        |_| {
            let path = format!(
                "/api/v1/challenges/{}/announcements/{}",
                seg(id),
                seg(&announcement)
            );
            Ok(Call::delete(path))
        },
        |_: serde::de::IgnoredAny| format!("{}?done=deleted", base(id)),
        |s| async move { body(web, ctx, id, None, Kept(Some(&s))).await },
    )
    .await
}
