//! Teams: forming one, inviting (with the pending invitations shown to both sides),
//! answering an invitation, renaming and leaving. A refused form is shown again on the
//! team's page with the reason beside it, never as an error page of its own.

use super::*;

/// Which of the team page's forms a refusal belongs to (its message is shown there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Create,
    Invite,
    Rename,
    Leave,
}

/// A refused form: where, why, and what was typed (shown again in the field).
struct Refused {
    which: Which,
    message: String,
    typed: String,
}

#[derive(Deserialize)]
pub(crate) struct TeamQuery {
    /// An invitation just sent (its id): confirmed at the top of the page.
    sent: Option<String>,
    /// What was just done: `renamed`, `left`, `created`.
    done: Option<String>,
}

/// Whether a team has any submission (then its members cannot leave it).
async fn has_submissions(web: &Web, team: &store::Team) -> Result<bool, Response> {
    for p in web.store.phases(&team.challenge).await.map_err(internal)? {
        if !web
            .store
            .submissions(team.id, p.id)
            .await
            .map_err(internal)?
            .is_empty()
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A user's name for a list (a deleted or unknown one as its id's start).
async fn user_name(web: &Web, id: uuid::Uuid) -> String {
    match web.store.user(store::UserId(id)).await {
        Ok(u) => u.name,
        Err(_) => format!("user {}", &id.to_string()[..8]),
    }
}

fn refusal_here(r: Option<&Refused>, which: Which) -> Markup {
    html! {
        @if let Some(r) = r.filter(|r| r.which == which) {
            p.error role="alert" id={"refused-" (format!("{which:?}").to_lowercase())} { (r.message) }
        }
    }
}

fn typed(r: Option<&Refused>, which: Which) -> &str {
    r.filter(|r| r.which == which)
        .map_or("", |r| r.typed.as_str())
}

/// The team page: with `refused`, the form that was refused shows why.
async fn team_body(
    web: &Web,
    ctx: &Ctx,
    id: &str,
    q: &TeamQuery,
    refused: Option<&Refused>,
) -> Result<(String, Markup), Response> {
    let (user, token) = ctx.need_user(&format!("/challenges/{}/team", seg(id)))?;
    let c = challenge_view(web, ctx, id).await?;
    let team = web.store.team_of(user.id, &c.id).await.map_err(internal)?;
    let base = format!("/challenges/{}", seg(&c.id));
    let invitations: Vec<InvitationView> = api::get(web, "/api/v1/invitations", Some(token))
        .await
        .json()
        .map_err(err)?;
    let mut for_me = Vec::new();
    for i in invitations.iter().filter(|i| word(&i.state) == "pending") {
        if let Ok(t) = web.store.team(store::TeamId(i.team)).await
            && t.challenge == c.id
        {
            let by = user_name(web, i.invited_by).await;
            for_me.push((i, t, by));
        }
    }
    let (view, sent, submitted) = match &team {
        Some(t) => {
            let v: TeamView = api::get(web, &format!("/api/v1/teams/{}", t.id.0), Some(token))
                .await
                .json()
                .map_err(err)?;
            let list: Vec<InvitationView> = api::get(
                web,
                &format!("/api/v1/teams/{}/invitations", t.id.0),
                Some(token),
            )
            .await
            .json()
            .map_err(err)?;
            let mut sent = Vec::new();
            for i in &list {
                sent.push((i.clone(), user_name(web, i.user).await));
            }
            (Some(v), sent, has_submissions(web, t).await?)
        }
        None => (None, Vec::new(), false),
    };
    let just_sent = q
        .sent
        .as_deref()
        .and_then(|s| sent.iter().find(|(i, _)| i.id.to_string() == s));
    let title = match &view {
        Some(t) => format!("Team {}", t.name),
        None => "Form a team".to_owned(),
    };
    let body = html! {
        p.crumbs { a href=(base) { (c.title) } }
        @if let Some((_, name)) = just_sent {
            p.notice role="status" { "Invitation sent to " strong { (name) } ". It is pending until they accept or decline it; they see it under “Invitations” at the top of every page." }
        }
        @match q.done.as_deref() {
            Some("renamed") => { p.notice role="status" { "The team was renamed." } }
            Some("left") => { p.notice role="status" { "You left the team. You may form another or accept an invitation." } }
            Some("created") => { p.notice role="status" { "Your team is formed. Invite your team-mates below, then submit." } }
            _ => {}
        }
        @match &view {
            Some(t) => {
                h1 { "Team " (t.name) }
                @if t.hidden { p.muted { "This team is hidden from the leaderboard." } }
                @if t.disqualified { p.error { "This team is disqualified" @if let Some(r) = &t.reason { ": " (r) } "." } }
                h2 { "Members" }
                ul { @for m in &t.members { li { (m.name) } } }
                h2 #invite-heading { "Invite someone" }
                p { "They join when they accept; until then the invitation is listed below. Someone who has already submitted with another team of this challenge cannot join." }
                (refusal_here(refused, Which::Invite))
                form.inline method="post" action={(base) "/team/invite"} aria-labelledby="invite-heading" {
                    (csrf(ctx))
                    label for="invitee" { "User name" }
                    input #invitee type="text" name="user" required maxlength="100" value=(typed(refused, Which::Invite))
                        aria-invalid=[refused.filter(|r| r.which == Which::Invite).map(|_| "true")]
                        aria-describedby=[refused.filter(|r| r.which == Which::Invite).map(|_| "refused-invite")];
                    button type="submit" { "Invite" }
                }
                h2 { "Invitations you sent" }
                @if sent.is_empty() { p.muted { "None pending." } }
                @else {
                    ul {
                        @for (i, name) in &sent {
                            li { strong { (name) } " — pending since " (time(i.created_at)) }
                        }
                    }
                }
                h2 #rename-heading { "Rename the team" }
                p.muted { "The same rules as a new team's name: one line, at most 100 characters, and not one that reads like another team's of this challenge." }
                (refusal_here(refused, Which::Rename))
                form.inline method="post" action={(base) "/team/rename"} aria-labelledby="rename-heading" {
                    (csrf(ctx))
                    label for="new-name" { "New name" }
                    input #new-name type="text" name="name" required maxlength="100"
                        value=(if refused.is_some_and(|r| r.which == Which::Rename) { typed(refused, Which::Rename) } else { t.name.as_str() });
                    button type="submit" { "Rename" }
                }
                h2 { "Leave the team" }
                (refusal_here(refused, Which::Leave))
                @if submitted {
                    p { "The team has submitted entries, so its members stay in it: the entries are theirs. Ask the organisers if you must leave." }
                } @else {
                    p { @if t.members.len() == 1 { "You are its only member: leaving deletes the team, and its name is free again." }
                        @else { "The others stay in the team." } }
                    form.inline method="post" action={(base) "/team/leave"} {
                        (csrf(ctx))
                        button.danger type="submit" { "Leave team " (t.name) }
                    }
                }
            }
            None => {
                h1 { "Form a team" }
                p { "A team submits entries; you can be in one team per challenge. To join an existing team, ask one of its members to invite you: the invitation appears below and under “Invitations” at the top of every page." }
                (refusal_here(refused, Which::Create))
                form.inline method="post" action={(base) "/team"} {
                    (csrf(ctx))
                    label for="team-name" { "Team name" }
                    input #team-name type="text" name="name" required maxlength="100" value=(typed(refused, Which::Create));
                    button type="submit" { "Create the team" }
                }
            }
        }
        @if !for_me.is_empty() {
            h2 { "Invitations for you" }
            (invitation_list(ctx, for_me.iter().map(|(i, t, by)| (*i, t, None, by.as_str()))))
        }
    };
    Ok((title, body))
}

/// Pending invitations with their answers (the challenge named when `challenge` is).
fn invitation_list<'a>(
    ctx: &Ctx,
    list: impl Iterator<
        Item = (
            &'a InvitationView,
            &'a store::Team,
            Option<&'a str>,
            &'a str,
        ),
    >,
) -> Markup {
    html! {
        ul.invitations {
            @for (i, t, challenge, by) in list {
                li {
                    "Team " strong { (t.name) }
                    @if let Some(c) = challenge { " of " a href={"/challenges/" (seg(&t.challenge))} { (c) } }
                    " (invited by " (by) ", " (time(i.created_at)) ") "
                    form.inline method="post" action={"/invitations/" (i.id) "/accept"} { (csrf(ctx)) button type="submit" { "Accept" } }
                    form.inline method="post" action={"/invitations/" (i.id) "/decline"} { (csrf(ctx)) button type="submit" { "Decline" } }
                }
            }
        }
    }
}

pub(crate) async fn team_page(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Query(q): Query<TeamQuery>,
) -> PageResult {
    let (title, body) = team_body(&web, &ctx, &id, &q, None).await?;
    Ok(page(&ctx, &title, body))
}

/// The team page again, with the refused form's reason beside it. The API's status
/// is kept (a 4xx), but for "no such user": the form's input, not the page, is wrong.
async fn refused(
    web: &Web,
    ctx: &Ctx,
    id: &str,
    which: Which,
    typed: &str,
    r: api::Refusal,
) -> PageResult {
    if r.status.is_server_error() || r.status == StatusCode::UNAUTHORIZED {
        return Err(err(r));
    }
    let message = match (which, r.code.as_str()) {
        (Which::Invite, "not_found") => format!(
            "Nobody is called “{typed}” here. Check the spelling: it is the name they signed in with."
        ),
        (Which::Invite, "exists") => {
            format!("“{typed}” already has a pending invitation from your team.")
        }
        _ => r.message.clone(),
    };
    let status = if r.status == StatusCode::NOT_FOUND {
        StatusCode::UNPROCESSABLE_ENTITY
    } else {
        r.status
    };
    let q = TeamQuery {
        sent: None,
        done: None,
    };
    let refused = Refused {
        which,
        message,
        typed: typed.to_owned(),
    };
    let (title, body) = team_body(web, ctx, id, &q, Some(&refused)).await?;
    let mut resp = page(ctx, &title, body);
    *resp.status_mut() = status;
    Ok(resp)
}

#[derive(Deserialize)]
pub(crate) struct NameForm {
    csrf: String,
    name: String,
}

pub(crate) async fn create_team(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(f): Form<NameForm>,
) -> PageResult {
    let (_, token) = ctx.need_user(&format!("/challenges/{}/team", seg(&id)))?;
    ctx.check_csrf(&f.csrf).map_err(err)?;
    let name = f.name.trim();
    let a = api::post_json(
        &web,
        "/api/v1/teams",
        Some(token),
        &serde_json::json!({"name": name, "challenge": id}),
    )
    .await;
    match a.json::<TeamView>() {
        Ok(_) => Ok(redirect(&format!(
            "/challenges/{}/team?done=created",
            seg(&id)
        ))),
        Err(r) => refused(&web, &ctx, &id, Which::Create, name, r).await,
    }
}

/// The caller's team of a challenge, or the page saying to form one.
async fn my_team(web: &Web, user: &store::User, id: &str) -> Result<store::Team, Response> {
    web.store
        .team_of(user.id, id)
        .await
        .map_err(internal)?
        .ok_or_else(|| {
            err(PageError::new(
                StatusCode::CONFLICT,
                "No team",
                "You are in no team of this challenge: form one first.",
            ))
        })
}

#[derive(Deserialize)]
pub(crate) struct InviteForm {
    csrf: String,
    user: String,
}

pub(crate) async fn invite(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(f): Form<InviteForm>,
) -> PageResult {
    let (user, token) = ctx.need_user(&format!("/challenges/{}/team", seg(&id)))?;
    ctx.check_csrf(&f.csrf).map_err(err)?;
    let team = my_team(&web, user, &id).await?;
    let invitee = f.user.trim();
    let a = api::post_json(
        &web,
        &format!("/api/v1/teams/{}/invitations", team.id.0),
        Some(token),
        &serde_json::json!({ "user": invitee }),
    )
    .await;
    match a.json::<InvitationView>() {
        Ok(i) => Ok(redirect(&format!(
            "/challenges/{}/team?sent={}",
            seg(&id),
            i.id
        ))),
        Err(r) => refused(&web, &ctx, &id, Which::Invite, invitee, r).await,
    }
}

pub(crate) async fn rename_team(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(f): Form<NameForm>,
) -> PageResult {
    let (user, token) = ctx.need_user(&format!("/challenges/{}/team", seg(&id)))?;
    ctx.check_csrf(&f.csrf).map_err(err)?;
    let team = my_team(&web, user, &id).await?;
    let name = f.name.trim();
    let a = api::send_json(
        &web,
        Method::PATCH,
        &format!("/api/v1/teams/{}", team.id.0),
        Some(token),
        &serde_json::json!({ "name": name }),
    )
    .await;
    match a.json::<TeamView>() {
        Ok(_) => Ok(redirect(&format!(
            "/challenges/{}/team?done=renamed",
            seg(&id)
        ))),
        Err(r) => refused(&web, &ctx, &id, Which::Rename, name, r).await,
    }
}

pub(crate) async fn leave_team(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Form(f): Form<CsrfOnly>,
) -> PageResult {
    let (user, token) = ctx.need_user(&format!("/challenges/{}/team", seg(&id)))?;
    ctx.check_csrf(&f.csrf).map_err(err)?;
    let team = my_team(&web, user, &id).await?;
    let a = api::post_json(
        &web,
        &format!("/api/v1/teams/{}/leave", team.id.0),
        Some(token),
        &serde_json::json!({}),
    )
    .await;
    if a.status.is_success() {
        Ok(redirect(&format!(
            "/challenges/{}/team?done=left",
            seg(&id)
        )))
    } else {
        refused(&web, &ctx, &id, Which::Leave, "", a.refusal()).await
    }
}

/// Every pending invitation of the signed-in user, over all challenges (the
/// navigation's "Invitations" link).
pub(crate) async fn invitations_page(State(web): State<Web>, ctx: Ctx) -> PageResult {
    let (_, token) = ctx.need_user("/invitations")?;
    let list: Vec<InvitationView> = api::get(&web, "/api/v1/invitations", Some(token))
        .await
        .json()
        .map_err(err)?;
    let mut rows = Vec::new();
    for i in list.iter().filter(|i| word(&i.state) == "pending") {
        let Ok(t) = web.store.team(store::TeamId(i.team)).await else {
            continue;
        };
        let title = web
            .store
            .challenge(&t.challenge)
            .await
            .map(|c| c.title)
            .unwrap_or_else(|_| t.challenge.clone());
        let by = user_name(&web, i.invited_by).await;
        rows.push((i, t, title, by));
    }
    let body = html! {
        h1 { "Invitations" }
        @if rows.is_empty() { p { "No invitation is waiting for you." } }
        @else {
            p { "Accepting one puts you in that team for its challenge (you can be in one team per challenge)." }
            (invitation_list(&ctx, rows.iter().map(|(i, t, title, by)| (*i, t, Some(title.as_str()), by.as_str()))))
        }
    };
    Ok(page(&ctx, "Invitations", body))
}

pub(crate) async fn answer_invitation(
    State(web): State<Web>,
    ctx: Ctx,
    Path((id, answer)): Path<(String, String)>,
    Form(f): Form<CsrfOnly>,
) -> PageResult {
    let (_, token) = ctx.need_user("/invitations")?;
    ctx.check_csrf(&f.csrf).map_err(err)?;
    if answer != "accept" && answer != "decline" {
        return Err(err(PageError::not_found("No such answer.")));
    }
    let a = api::post_json(
        &web,
        &format!("/api/v1/invitations/{}/{answer}", seg(&id)),
        Some(token),
        &serde_json::json!({}),
    )
    .await;
    if !a.status.is_success() {
        return Err(err(a.refusal()));
    }
    let to = match serde_json::from_slice::<TeamView>(&a.body) {
        Ok(t) => format!("/challenges/{}/team", seg(&t.challenge)),
        Err(_) => "/invitations".to_owned(),
    };
    Ok(redirect(&to))
}
