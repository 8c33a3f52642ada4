//! Challenges, phases, quotas and leaderboards; their pages' texts, announcements and
//! starter kits in `about`.

pub(crate) mod about;

use std::collections::BTreeMap;
use std::path::PathBuf;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use utoipa::IntoParams;

use store::{Definition, Phase, Quota};

use crate::api::{App, check_limits, check_name, judge_challenge, resolve_phase, team_of};
use crate::auth::{Caller, MaybeCaller, Organiser, maybe_organiser};
use crate::error::ApiError;
use crate::json::{Body, Json, Query};
use crate::views::{
    BoardName, ChallengeChange, ChallengeView, DefinitionKind, ErrorBody, LeaderboardRowView,
    LeaderboardView, NewChallenge, NewPhase, PhaseView, PublishedView, QuotaInput, QuotaView,
    RankingView,
};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// This module's routes: each handler's `#[utoipa::path]` is its route and its OpenAPI
/// entry at once, so the two cannot drift.
pub(super) fn router() -> OpenApiRouter<App> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(get_one, update))
        .routes(routes!(create_phase))
        .routes(routes!(update_phase))
        .routes(routes!(quota))
        .routes(routes!(leaderboard))
        .routes(routes!(about::get_about, about::put_about))
        .routes(routes!(about::list_announcements, about::post_announcement))
        .routes(routes!(about::delete_announcement))
        .routes(routes!(about::starter))
}

pub(crate) fn ranking(c: &judge::Challenge) -> Vec<RankingView> {
    c.scorer
        .ranking()
        .iter()
        .map(|r| RankingView {
            key: r.key.to_owned(),
            name: r.name.to_owned(),
            unit: r.unit.map(str::to_owned),
            better: match r.better {
                judge::challenge::Better::Higher => crate::views::BetterName::Higher,
                judge::challenge::Better::Lower => crate::views::BetterName::Lower,
            },
            min: r.min,
            max: r.max,
        })
        .collect()
}

pub(crate) async fn challenge_view(
    app: &App,
    c: &store::Challenge,
    caller: Option<&store::User>,
) -> Result<ChallengeView, ApiError> {
    let organiser = caller.is_some_and(crate::auth::is_organiser);
    let j = judge_challenge(c)?;
    let now = app.store.now();
    let phases = app.store.phases(&c.id).await?;
    // A team sees its own close of each phase it has an extension of.
    let team = match caller {
        Some(u) => app.store.team_of(u.id, &c.id).await?,
        None => None,
    };
    let mut views = Vec::with_capacity(phases.len());
    for p in &phases {
        let extension = match &team {
            Some(t) => app.store.extension(p.id, t.id).await?,
            None => None,
        };
        views.push(PhaseView::for_team(p, extension.as_ref(), now));
    }
    Ok(ChallengeView {
        id: c.id.clone(),
        title: c.title.clone(),
        definition_kind: match c.definition {
            Definition::Builtin(_) => DefinitionKind::Builtin,
            Definition::Toml(_) => DefinitionKind::Toml,
        },
        definition_sha256: c.definition_sha256.clone(),
        manifest_sha256: c.manifest.sha256(),
        files: c.manifest.files.len(),
        data_path: organiser.then(|| c.data_path.clone()),
        score_precision: j.score_precision,
        ranking: ranking(&j),
        created_at: c.created_at,
        phases: views,
        judging_paused: c.paused.is_some(),
        paused_at: c.paused.as_ref().map(|p| p.at),
        pause_reason: c.paused.as_ref().map(|p| p.why.clone()),
    })
}

fn check_id(id: &str) -> Result<(), ApiError> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(ApiError::invalid(
            "a challenge id is 1 to 64 of a-z, 0-9, '-' and '_'",
        ))
    }
}

/// Every challenge, with its phases.
#[utoipa::path(get, path = "/api/v1/challenges", operation_id = "list_challenges", tag = "challenges",
    security((), ("bearer" = [])),
    responses((status = 200, body = Vec<ChallengeView>), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody)))]
pub(crate) async fn list(
    State(app): State<App>,
    MaybeCaller(user): MaybeCaller,
) -> Result<Json<Vec<ChallengeView>>, ApiError> {
    let mut out = Vec::new();
    for c in app.store.challenges().await? {
        out.push(challenge_view(&app, &c, user.as_ref()).await?);
    }
    Ok(Json(out))
}

/// An organiser registers a challenge: a built-in definition (under any id: a second
/// run of a built-in challenge) or TOML text (whose `id` must be the challenge's), and
/// a data folder on the server, pinned now by its manifest.
#[utoipa::path(post, path = "/api/v1/challenges", operation_id = "create_challenge", tag = "challenges",
    request_body = NewChallenge, security(("bearer" = [])),
    responses(
        (status = 201, body = ChallengeView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "the id is taken"),
        (status = 422, body = ErrorBody,
            description = "the definition or the data folder is unusable"),
    ))]
pub(crate) async fn create(
    State(app): State<App>,
    Organiser(by): Organiser,
    Body(new): Body<NewChallenge>,
) -> Result<(StatusCode, Json<ChallengeView>), ApiError> {
    check_id(&new.id)?;
    let builtin = judge::challenge::BUILT_IN
        .iter()
        .any(|(id, _)| *id == new.definition.trim());
    let (definition, parsed) = if builtin {
        let id = new.definition.trim().to_owned();
        let parsed =
            judge::Challenge::built_in(&id).map_err(|e| ApiError::invalid(e.to_string()))?;
        (Definition::Builtin(id), parsed)
    } else {
        let parsed = judge::Challenge::parse(&new.definition, "definition")
            .map_err(|e| ApiError::invalid(e.to_string()))?;
        (Definition::Toml(new.definition.clone()), parsed)
    };
    // A built-in definition may be hosted under any id (a second run of a challenge,
    // for a course); a TOML text names its challenge, which must be this one.
    if !builtin && parsed.id != new.id {
        return Err(ApiError::invalid(format!(
            "the definition is for challenge {:?}, not {:?}",
            parsed.id, new.id
        )));
    }
    let data = PathBuf::from(&new.data);
    if !data.is_absolute() {
        return Err(ApiError::invalid(
            "data: give an absolute path on the server",
        ));
    }
    if !data.is_dir() {
        return Err(ApiError::invalid(format!(
            "data: {} is not a folder on the server",
            data.display()
        )));
    }
    let title = match new.title.as_deref().map(str::trim) {
        Some(t) if !t.is_empty() => {
            check_name("title", t)?;
            t.to_owned()
        }
        _ => parsed.title.clone(),
    };
    let c = match app
        .store
        .create_challenge(&new.id, &title, definition, &data)
        .await
    {
        Ok(c) => c,
        // The data folder could not be read: the organiser's input, not our fault.
        Err(e @ store::Error::Io { .. }) => {
            return Err(ApiError::invalid(format!("data: {e}")));
        }
        Err(e) => return Err(e.into()),
    };
    Ok((
        StatusCode::CREATED,
        Json(challenge_view(&app, &c, Some(&by)).await?),
    ))
}

/// One challenge, with its phases.
#[utoipa::path(get, path = "/api/v1/challenges/{id}", operation_id = "get_challenge", tag = "challenges",
    security((), ("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id")),
    responses((status = 200, body = ChallengeView), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub(crate) async fn get_one(
    State(app): State<App>,
    MaybeCaller(user): MaybeCaller,
    Path(id): Path<String>,
) -> Result<Json<ChallengeView>, ApiError> {
    let c = app.store.challenge(&id).await?;
    Ok(Json(challenge_view(&app, &c, user.as_ref()).await?))
}

/// An organiser adds a phase.
#[utoipa::path(post, path = "/api/v1/challenges/{id}/phases", tag = "challenges",
    request_body = NewPhase, security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id")),
    responses(
        (status = 201, body = PhaseView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "the name is taken"),
        (status = 422, body = ErrorBody, description = "closes before it opens, …"),
    ))]
pub(crate) async fn create_phase(
    State(app): State<App>,
    Organiser(_by): Organiser,
    Path(id): Path<String>,
    Body(new): Body<NewPhase>,
) -> Result<(StatusCode, Json<PhaseView>), ApiError> {
    app.store.challenge(&id).await?;
    let phase = app.store.create_phase(&id, &phase_of(new)?).await?;
    Ok((
        StatusCode::CREATED,
        Json(PhaseView::new(&phase, app.store.now())),
    ))
}

/// A phase as the API is given it, checked, as the store keeps it.
fn phase_of(new: NewPhase) -> Result<store::NewPhase, ApiError> {
    check_name("name", &new.name)?;
    let quota = match new.quota {
        None => Quota::default(),
        Some(QuotaInput::Total(n)) => Quota {
            total: Some(n),
            ..Quota::default()
        },
        Some(QuotaInput::Limits(l)) => Quota {
            total: l.total,
            per_day: l.per_day,
            max_concurrent: l.max_concurrent,
        },
    };
    check_limits(&quota)?;
    Ok(store::NewPhase {
        name: new.name,
        opens: new.opens,
        closes: new.closes,
        selection_closes: new.selection_closes,
        quota,
        scored_split: new.scored_split.into(),
        show_exam: new.show_exam,
        rule: new.rule.into(),
    })
}

/// An organiser changes a phase: every field as when adding one (the name may change
/// too). Its submissions, per-team rules and published boards stay with it; its
/// leaderboards follow the new split, rule and visibility at once.
#[utoipa::path(put, path = "/api/v1/challenges/{id}/phases/{phase}", tag = "challenges",
    request_body = NewPhase, security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id"),
        ("phase" = String, Path, description = "the phase's name now")),
    responses(
        (status = 200, body = PhaseView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "the new name is taken"),
        (status = 422, body = ErrorBody, description = "closes before it opens, …"),
    ))]
pub(crate) async fn update_phase(
    State(app): State<App>,
    Organiser(_by): Organiser,
    Path((id, phase)): Path<(String, String)>,
    Body(new): Body<NewPhase>,
) -> Result<Json<PhaseView>, ApiError> {
    app.store.challenge(&id).await?;
    let p = app.store.update_phase(&id, &phase, &phase_of(new)?).await?;
    Ok(Json(PhaseView::new(&p, app.store.now())))
}

/// An organiser changes a challenge's title (the fields left out stay as they are;
/// its definition and data folder are fixed when it is created).
#[utoipa::path(patch, path = "/api/v1/challenges/{id}", operation_id = "update_challenge",
    tag = "challenges", request_body = ChallengeChange, security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id")),
    responses(
        (status = 200, body = ChallengeView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody),
    ))]
pub(crate) async fn update(
    State(app): State<App>,
    Organiser(by): Organiser,
    Path(id): Path<String>,
    Body(change): Body<ChallengeChange>,
) -> Result<Json<ChallengeView>, ApiError> {
    let mut c = app.store.challenge(&id).await?;
    if let Some(t) = change.title.as_deref().map(str::trim) {
        check_name("title", t)?;
        c = app.store.set_challenge_title(&id, t).await?;
    }
    Ok(Json(challenge_view(&app, &c, Some(&by)).await?))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct PhaseQuery {
    /// The phase's name (default: the open one).
    pub phase: Option<String>,
}

/// What remains of the caller's team's quota in a phase (its own limits where an
/// organiser overrode them), and when the phase closes for it (its extension's close,
/// if it has one).
#[utoipa::path(get, path = "/api/v1/challenges/{id}/quota", tag = "challenges",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id"), PhaseQuery),
    responses(
        (status = 200, body = QuotaView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "the caller is in no team of it"),
        (status = 404, body = ErrorBody),
    ))]
pub(crate) async fn quota(
    State(app): State<App>,
    Caller(user): Caller,
    Path(id): Path<String>,
    Query(q): Query<PhaseQuery>,
) -> Result<Json<QuotaView>, ApiError> {
    let phase = resolve_phase(&app, &id, q.phase.as_deref()).await?;
    let team = team_of(&app, &user, &id).await?;
    let status = app.store.quota(phase.id, team.id).await?;
    let extension = app.store.extension(phase.id, team.id).await?;
    let mut view = QuotaView::from_status(Some(&phase.name), &status);
    view.closes = Some(phase.closes_for(extension.as_ref()));
    view.extended = extension.is_some();
    Ok(Json(view))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct LeaderboardQuery {
    /// The phase's name (default: the open one, else the latest).
    pub phase: Option<String>,
    /// Which leaderboard: `live` (default), `final` or `published`.
    pub board: Option<BoardName>,
    /// With `board=published`: the version (default: the latest).
    pub version: Option<u32>,
    /// The same as `board=final` (kept for older clients).
    #[serde(rename = "final", default)]
    pub final_entries: bool,
}

/// A phase's leaderboard: `live` is each team's best (or latest) scored submission,
/// ranked by the first ranking number; `final` each team's selected (else best) one;
/// `published` the fixed snapshot the organiser published (404 until then). The board
/// ranks by the phase's scored split (`split`). An exam's figures are shown at the
/// challenge's precision (exactly as stored for organisers); a quiz's exactly.
/// In a phase that hides exam scores (`show_exam = false`) only organisers see the
/// live and final rows; everyone sees the published ones.
#[utoipa::path(get, path = "/api/v1/challenges/{id}/leaderboard", tag = "challenges",
    security((), ("bearer" = [])),
    params(("id" = String, Path, description = "the challenge's id"), LeaderboardQuery),
    responses(
        (status = 200, body = LeaderboardView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "no such challenge or phase, or \
            nothing published yet"),
    ))]
pub(crate) async fn leaderboard(
    State(app): State<App>,
    MaybeCaller(user): MaybeCaller,
    Path(id): Path<String>,
    Query(q): Query<LeaderboardQuery>,
    headers: axum::http::HeaderMap,
) -> Result<axum::response::Response, ApiError> {
    let board = match (q.board, q.final_entries) {
        (Some(b), _) => b,
        (None, true) => BoardName::Final,
        (None, false) => BoardName::Live,
    };
    let organiser = maybe_organiser(&user);
    let key = crate::boards::BoardKey {
        challenge: id.clone(),
        phase: q.phase.clone(),
        board,
        version: q.version,
        organiser,
    };
    let generation = app.store.board_generation();
    let body = app
        .boards
        .serve(&key, generation, || async {
            let phase = resolve_phase(&app, &id, q.phase.as_deref()).await?;
            let view = leaderboard_view(&app, &id, &phase, board, q.version, organiser).await?;
            // A large board takes milliseconds to write: off the threads that answer
            // the requests served from the cache meanwhile.
            tokio::task::spawn_blocking(move || {
                let json = crate::json::to_vec(&view).map_err(|e| ApiError::internal(&e))?;
                crate::boards::Board::new(json).map_err(|e| ApiError::internal(&e))
            })
            .await
            .map_err(|e| ApiError::internal(&e))?
        })
        .await?;
    let gzip = headers
        .get(axum::http::header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(accepts_gzip);
    Ok(json_bytes(body, gzip))
}

/// Whether an `Accept-Encoding` value takes gzip (not refused with `q=0`).
fn accepts_gzip(value: &str) -> bool {
    value.split(',').any(|part| {
        let mut it = part.split(';').map(str::trim);
        let coding = it.next().unwrap_or("");
        let refused = it.any(|p| {
            p.strip_prefix("q=")
                .and_then(|q| q.parse::<f32>().ok())
                .is_some_and(|q| q == 0.0)
        });
        (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !refused
    })
}

fn json_bytes(board: crate::boards::Board, gzip: bool) -> axum::response::Response {
    use axum::http::{HeaderValue, header};
    use axum::response::IntoResponse;
    let json = HeaderValue::from_static("application/json");
    let vary = HeaderValue::from_static("accept-encoding");
    if gzip {
        (
            [
                (header::CONTENT_TYPE, json),
                (header::CONTENT_ENCODING, HeaderValue::from_static("gzip")),
                (header::VARY, vary),
            ],
            board.gzip,
        )
            .into_response()
    } else {
        (
            [(header::CONTENT_TYPE, json), (header::VARY, vary)],
            board.json,
        )
            .into_response()
    }
}

/// The leaderboard as the caller may see it.
pub(crate) async fn leaderboard_view(
    app: &App,
    id: &str,
    phase: &Phase,
    board: BoardName,
    version: Option<u32>,
    organiser: bool,
) -> Result<LeaderboardView, ApiError> {
    let c = app.store.challenge(id).await?;
    let j = judge_challenge(&c)?;
    let (data, published) = match board {
        BoardName::Live => (app.store.leaderboard(phase.id).await?, None),
        BoardName::Final => (app.store.final_leaderboard(phase.id).await?, None),
        BoardName::Published => {
            let p = app
                .store
                .publication(phase.id, version)
                .await?
                .ok_or_else(|| ApiError::not_found("published leaderboard"))?;
            let v = PublishedView {
                version: p.version,
                published_at: p.published_at,
            };
            (p.board, Some(v))
        }
    };
    let mut view = LeaderboardView {
        phase: phase.name.clone(),
        board,
        published,
        rule: data.rule.into(),
        final_entries: data.final_entries,
        split: data.split.into(),
        ranking: ranking(&j),
        hidden_until: None,
        withheld: None,
        rows: Vec::new(),
    };
    // The board ranks by the figures of its split (the phase's scored split; a
    // publication keeps the split it was made with). What the caller may see of them is
    // the one rule every view drawn from them follows (`crate::sight`): a phase that
    // hides exam scores shows teams no exam figure but its published final entries'
    // (docs/service.md, "Publishing"); an exam's figures are otherwise shown at the
    // challenge's precision to anyone but organisers (at full precision a leaderboard
    // is the same label-recovery channel as a result: docs/judge.md, "Why so little").
    let now = app.store.now();
    let sight = crate::sight::board(phase, data.split, board, organiser, j.score_precision, now);
    if let judge::visibility::Sight::Withheld { until_close } = sight {
        if until_close {
            view.hidden_until = Some(phase.closes);
        }
        view.withheld = Some(
            "this phase shows exam scores to teams only on its published leaderboard \
             (?board=published)"
                .to_owned(),
        );
        return Ok(view);
    }
    let mut rows = Vec::with_capacity(data.rows.len());
    for row in &data.rows {
        let scores: BTreeMap<String, Option<f64>> = row
            .figures
            .iter()
            .map(|f| (f.key.clone(), sight.show(f.value)))
            .collect();
        rows.push(LeaderboardRowView {
            rank: row.rank,
            team: row.team_name.clone(),
            team_id: row.team.0,
            submission: row.submission.0,
            score: sight.show(row.figures.first().and_then(|f| f.value)),
            scores,
            run_time_s: row.run_time_s,
            submitted_at: row.received_at,
            method: row.method_name.clone(),
            baseline: row.baseline,
            language: row.language.as_deref().map(|l| {
                serde_json::from_value::<judge::result::Language>(l.into())
                    .map_or_else(|_| l.to_owned(), |l| l.label().to_owned())
            }),
        });
    }
    // Ranks by the figure as shown: equal shown figures share a rank and are listed by
    // submission time; ranking by the exact figure behind them would tell the digits
    // that rounding hides.
    let higher = data
        .rows
        .first()
        .and_then(|r| r.figures.first())
        .is_none_or(|f| f.better == store::Better::Higher);
    let figures: Vec<Option<f64>> = rows.iter().map(|r| r.score).collect();
    let received: Vec<_> = rows.iter().map(|r| r.submitted_at).collect();
    let mut slots: Vec<Option<LeaderboardRowView>> = rows.into_iter().map(Some).collect();
    for (i, rank) in judge::visibility::shown_ranks(&figures, &received, higher) {
        if let Some(mut r) = slots[i].take() {
            r.rank = rank;
            view.rows.push(r);
        }
    }
    Ok(view)
}

#[cfg(test)]
mod tests {
    use super::accepts_gzip;

    #[test]
    fn accept_encoding() {
        assert!(accepts_gzip("gzip"));
        assert!(accepts_gzip("br, gzip;q=0.8, deflate"));
        assert!(accepts_gzip("GZIP"));
        assert!(accepts_gzip("*"));
        assert!(!accepts_gzip("gzip;q=0"));
        assert!(!accepts_gzip("identity"));
        assert!(!accepts_gzip(""));
        assert!(!accepts_gzip("x-gzip2"));
    }
}
