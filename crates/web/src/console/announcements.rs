//! The organiser's page for what a challenge's page says: its overview, data and rules
//! texts, and its announcements (post, preview on the challenge page, take down), at
//! `/organiser/challenges/{id}/announcements`. Every change is the API's own request
//! with the organiser's token; a refused form is shown again with the reason beside it
//! and the text as typed.

use axum::Form;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::Deserialize;

use server::views::{AboutView, AnnouncementView, ChallengeView};

use crate::Web;
use crate::api::{self, seg};
use crate::html::{PageError, csrf, page, redirect, time};
use crate::markdown;
use crate::session::Ctx;

type PageResult = Result<Response, Response>;

fn err(e: impl Into<PageError>) -> Response {
    e.into().into_response()
}

/// Which form a refusal belongs to, and what was typed in it.
enum Refused {
    Texts(String, TextsForm),
    Post(String, PostForm),
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
    refused: Option<&Refused>,
) -> Result<(String, Markup), Response> {
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
    let texts = match refused {
        Some(Refused::Texts(_, f)) => f.clone(),
        _ => TextsForm {
            csrf: String::new(),
            overview: about.overview.clone(),
            data_url: about.data_url.clone().unwrap_or_default(),
            data_instructions: about.data_instructions.clone(),
            rules: about.rules.clone(),
        },
    };
    let post = match refused {
        Some(Refused::Post(_, f)) => f.clone(),
        _ => PostForm::default(),
    };
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
            @if let Some(Refused::Texts(m, _)) = refused { p.error role="alert" #refused-texts { (m) } }
            @if let Some(t) = about.updated_at { p.muted { "Last saved " (time(t)) "." } }
            form.stack method="post" action={(here) "/texts"} {
                (csrf(ctx))
                label for="overview" { "Overview (what the challenge is about, who runs it)" }
                textarea #overview name="overview" rows="8" maxlength="20000" { (texts.overview) }
                label for="data_url" { "Data download address (http or https; empty: none)" }
                input #data_url type="url" name="data_url" maxlength="2000" value=(texts.data_url) placeholder="https://…";
                label for="data_instructions" { "How to get the data (shown with the address, or instead of it)" }
                textarea #data_instructions name="data_instructions" rows="5" maxlength="20000" { (texts.data_instructions) }
                label for="rules" { "Rules (the platform's own are listed after them)" }
                textarea #rules name="rules" rows="8" maxlength="20000" { (texts.rules) }
                button type="submit" { "Save the texts" }
            }
        }
        section aria-labelledby="post" {
            h2 #post { "Post an announcement" }
            @if let Some(Refused::Post(m, _)) = refused { p.error role="alert" #refused-post { (m) } }
            form.stack method="post" action={(here) "/new"} {
                (csrf(ctx))
                label for="a-title" { "Title (one line)" }
                input #a-title type="text" name="title" required maxlength="200" value=(post.title);
                label for="a-body" { "Text (Markdown)" }
                textarea #a-body name="body" rows="6" maxlength="20000" { (post.body) }
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
    Ok((title, page_body))
}

pub(crate) async fn announcements_page(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    axum::extract::Query(d): axum::extract::Query<Done>,
) -> PageResult {
    let (title, b) = body(&web, &ctx, &id, d.done.as_deref(), None).await?;
    Ok(page(&ctx, &title, b))
}

/// The page again with a refused form's reason (a 4xx the API gave; 5xx and sign-in
/// trouble are error pages).
async fn again(web: &Web, ctx: &Ctx, id: &str, a: api::Answer, r: Refused) -> PageResult {
    let refusal = a.refusal();
    if refusal.status.is_server_error() || refusal.status == StatusCode::UNAUTHORIZED {
        return Err(err(refusal));
    }
    let (title, b) = body(web, ctx, id, None, Some(&r)).await?;
    let mut resp = page(ctx, &title, b);
    *resp.status_mut() = refusal.status;
    Ok(resp)
}

#[derive(Deserialize, Clone, Default)]
pub(crate) struct TextsForm {
    csrf: String,
    #[serde(default)]
    overview: String,
    #[serde(default)]
    data_url: String,
    #[serde(default)]
    data_instructions: String,
    #[serde(default)]
    rules: String,
}

pub(crate) async fn save_texts(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(f): Form<TextsForm>,
) -> PageResult {
    let (_, token) = ctx.need_organiser()?;
    ctx.check_csrf(&f.csrf).map_err(err)?;
    let a = api::send_json(
        &web,
        Method::PUT,
        &format!("/api/v1/challenges/{}/about", seg(&id)),
        Some(token),
        &serde_json::json!({
            "overview": f.overview,
            "data_url": f.data_url,
            "data_instructions": f.data_instructions,
            "rules": f.rules,
        }),
    )
    .await;
    if a.status.is_success() {
        return Ok(redirect(&format!("{}?done=texts", base(&id))));
    }
    let m = a.refusal().message;
    again(&web, &ctx, &id, a, Refused::Texts(m, f)).await
}

#[derive(Deserialize, Clone, Default)]
pub(crate) struct PostForm {
    csrf: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    body: String,
}

pub(crate) async fn post_announcement(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(f): Form<PostForm>,
) -> PageResult {
    let (_, token) = ctx.need_organiser()?;
    ctx.check_csrf(&f.csrf).map_err(err)?;
    let a = api::post_json(
        &web,
        &format!("/api/v1/challenges/{}/announcements", seg(&id)),
        Some(token),
        &serde_json::json!({ "title": f.title, "body": f.body }),
    )
    .await;
    if a.status.is_success() {
        return Ok(redirect(&format!("{}?done=posted", base(&id))));
    }
    let m = a.refusal().message;
    again(&web, &ctx, &id, a, Refused::Post(m, f)).await
}

#[derive(Deserialize)]
pub(crate) struct CsrfOnly {
    csrf: String,
}

pub(crate) async fn delete_announcement(
    State(web): State<Web>,
    ctx: Ctx,
    Path((id, announcement)): Path<(String, String)>,
    Form(f): Form<CsrfOnly>,
) -> PageResult {
    let (_, token) = ctx.need_organiser()?;
    ctx.check_csrf(&f.csrf).map_err(err)?;
    let a = api::delete(
        &web,
        &format!(
            "/api/v1/challenges/{}/announcements/{}",
            seg(&id),
            seg(&announcement)
        ),
        Some(token),
    )
    .await;
    if !a.status.is_success() {
        return Err(err(a.refusal()));
    }
    Ok(redirect(&format!("{}?done=deleted", base(&id))))
}
