//! Leaderboards: the tables per ranking number and the plot of the best score over time.

use super::*;

// ---- leaderboards ----

#[derive(Deserialize)]
pub(crate) struct BoardQuery {
    phase: Option<String>,
    /// `live` (default), `final` or `published`, as the API's `?board=`.
    board: Option<String>,
    /// With `board=published`: the version (default: the latest).
    version: Option<String>,
    /// The same as `board=final` (older links).
    #[serde(rename = "final", default)]
    final_entries: Option<String>,
}

/// Ranks rows by one ranking number in its direction, equal figures sharing a rank
/// and a missing figure last (the store's rule for the first number).
pub(super) fn rank_by<'a>(
    rows: &'a [LeaderboardRowView],
    key: &str,
    higher: bool,
) -> Vec<(u32, &'a LeaderboardRowView)> {
    let mut v: Vec<&LeaderboardRowView> = rows.iter().collect();
    let fig = |r: &LeaderboardRowView| r.scores.get(key).copied().flatten();
    v.sort_by(|a, b| match (fig(a), fig(b)) {
        (Some(x), Some(y)) => {
            let o = x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal);
            (if higher { o.reverse() } else { o }).then(a.submitted_at.cmp(&b.submitted_at))
        }
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.submitted_at.cmp(&b.submitted_at),
    });
    let mut out = Vec::with_capacity(v.len());
    for (i, r) in v.iter().enumerate() {
        let rank = match out.last() {
            Some(&(rk, prev)) if fig(prev) == fig(r) => rk,
            _ => u32::try_from(i + 1).unwrap_or(u32::MAX),
        };
        out.push((rank, *r));
    }
    out
}

pub(crate) async fn leaderboard(
    State(web): State<Web>,
    ctx: Ctx,
    Path(id): Path<String>,
    Query(q): Query<BoardQuery>,
) -> PageResult {
    let c = challenge_view(&web, &ctx, &id).await?;
    let board = match (q.board.as_deref(), q.final_entries.as_deref()) {
        (Some(b @ ("live" | "final" | "published")), _) => b,
        (_, Some("true")) => "final",
        _ => "live",
    };
    let version: Option<u32> = if board == "published" {
        q.version.as_deref().and_then(|v| v.trim().parse().ok())
    } else {
        None
    };
    let base = format!("/challenges/{}", seg(&c.id));
    // The API's address for this board (and, for the JSON link, as it is).
    let api_path = |phase: Option<&str>, version: Option<u32>| {
        let mut path = format!(
            "/api/v1/challenges/{}/leaderboard?board={board}",
            seg(&c.id)
        );
        if let Some(p) = phase {
            path.push_str(&format!("&phase={}", seg(p)));
        }
        if let Some(v) = version {
            path.push_str(&format!("&version={v}"));
        }
        path
    };
    let path = api_path(q.phase.as_deref(), version);
    let choose = |phase: &str| {
        html! {
            form.inline method="get" action={(base) "/leaderboard"} {
                label for="phase" { "Phase" }
                select #phase name="phase" {
                    @for p in &c.phases { option value=(p.name) selected[p.name == phase] { (p.name) } }
                }
                label for="board" { "Board" }
                select #board name="board" {
                    option value="live" selected[board == "live"] { "live (the phase's rule)" }
                    option value="final" selected[board == "final"] { "final entries" }
                    option value="published" selected[board == "published"] { "published" }
                }
                button type="submit" { "Show" }
            }
        }
    };
    let b: LeaderboardView = if c.phases.is_empty() {
        return Ok(page(
            &ctx,
            "Leaderboard",
            html! {
                p.crumbs { a href={"/challenges/" (seg(&c.id))} { (c.title) } }
                h1 { "Leaderboard" } p { "This challenge has no phase yet." }
            },
        ));
    } else {
        let a = api::get(&web, &path, ctx.token.as_deref()).await;
        match a.json() {
            Ok(b) => b,
            // Nothing published yet for a phase that exists: said in place, with the
            // other boards a click away.
            Err(r)
                if board == "published"
                    && r.code == "not_found"
                    && q.phase
                        .as_deref()
                        .is_none_or(|p| c.phases.iter().any(|x| x.name == p)) =>
            {
                let shown = q.phase.clone().unwrap_or_default();
                return Ok(page(
                    &ctx,
                    "Leaderboard",
                    html! {
                        p.crumbs { a href=(base) { (c.title) } }
                        h1 { "Leaderboard" }
                        (choose(&shown))
                        p.notice #published-none {
                            @if version.is_some() { "There is no published version " (version.unwrap_or_default()) " of this phase." }
                            @else { "Nothing of this phase has been published yet." }
                        }
                    },
                ));
            }
            Err(r) => return Err(err(r)),
        }
    };
    let phase = c.phases.iter().find(|p| p.name == b.phase);
    // Every published version, as links: versions are numbered 1, 2, … and all kept,
    // so the latest's number lists them all.
    let latest = match (&b.published, version) {
        (Some(p), None) => Some(p.version),
        (Some(_), Some(_)) => api::get(&web, &api_path(Some(&b.phase), None), ctx.token.as_deref())
            .await
            .json::<LeaderboardView>()
            .ok()
            .and_then(|l| l.published.map(|p| p.version)),
        (None, _) => None,
    };
    let now = web.store.now();
    // The plots: one per ranking number, every visible scored submission's figure on
    // the phase's scored split, drawn as the best so far. What a plot may show (a
    // figure, rounded or exact, or nothing at all) is what the caller may see of the
    // live board, by the one rule every view follows (`server::sight`): its line, axis,
    // caption and `aria-label` are all drawn from those figures.
    // A published board is a snapshot: plots of live scores are not about it.
    let mut plots = Vec::new();
    if let Some(p) = phase
        && b.published.is_none()
    {
        let stored = web
            .store
            .phase(store::PhaseId(p.id))
            .await
            .map_err(internal)?;
        let split = match b.split {
            server::views::SplitName::Quiz => store::Split::Quiz,
            server::views::SplitName::Exam => store::Split::Exam,
        };
        let sight = server::sight::board(
            &stored,
            split,
            server::views::BoardName::Live,
            ctx.is_organiser(),
            c.score_precision,
            now,
        );
        if !sight.withheld() {
            for (i, r) in b.ranking.iter().enumerate() {
                let points = web
                    .store
                    .score_points_at(store::PhaseId(p.id), u32::try_from(i).unwrap_or(u32::MAX))
                    .await
                    .map_err(internal)?;
                let pts: Vec<_> = points
                    .iter()
                    .filter_map(|pt| Some((pt.received_at, sight.show(Some(pt.value))?)))
                    .collect();
                let label = metric(r);
                let m = plot::Metric {
                    label: &label,
                    higher: word(&r.better) == "higher",
                    min: r.min,
                    max: r.max,
                };
                plots.push((
                    label.clone(),
                    plot::step_plot(&plot::best_so_far(&pts, m.higher), now, &m),
                ));
            }
        }
    }
    // The reader's own team, highlighted in the tables.
    let mine = match &ctx.user {
        Some(u) => web
            .store
            .team_of(u.id, &c.id)
            .await
            .map_err(internal)?
            .map(|t| t.id.0),
        None => None,
    };
    // Entries per team, on the live boards (a published board is a snapshot and keeps
    // what it had; a count of today's entries beside it would not be of it).
    let entries = match phase {
        Some(p) if b.published.is_none() => Some(
            web.store
                .entries_per_team(store::PhaseId(p.id))
                .await
                .map_err(internal)?,
        ),
        _ => None,
    };
    let body = html! {
        p.crumbs { a href=(base) { (c.title) } }
        h1 { "Leaderboard" }
        (choose(&b.phase))
        @if let Some(p) = &b.published {
            p.notice #published-version { "Published leaderboard, version " (p.version) ", published " (time(p.published_at)) ". It never changes; a later publication is a new version." }
            @if let Some(n) = latest {
                nav.versions aria-label="Published versions" {
                    "Versions: "
                    @for v in (1..=n).rev() {
                        @if v == p.version { strong aria-current="page" { (v) } }
                        @else { a href={(base) "/leaderboard?phase=" (seg(&b.phase)) "&board=published&version=" (v)} { (v) } }
                        @if v == n { " (latest)" }
                        " "
                    }
                }
            }
        }
        p.muted {
            @if b.final_entries { "Each team's selected submission (else its best)." }
            @else { "Each team's " (word(&b.rule)) " scored submission." }
            " Equal figures share a rank."
        }
        @if b.withheld.is_some() && b.hidden_until.is_none() {
            p.notice { "This phase shows exam scores on its "
                a href={(base) "/leaderboard?phase=" (seg(&b.phase)) "&board=published"} { "published leaderboard" }
                " only." }
        }
        @if let Some(u) = b.hidden_until {
            p.notice { "This phase ranks by exam scores, which are shown after it closes, " (time(u)) "." }
        }
        @for (i, r) in b.ranking.iter().enumerate() {
            @let higher = word(&r.better) == "higher";
            @let ranked = if i == 0 { b.rows.iter().map(|row| (row.rank, row)).collect::<Vec<_>>() } else { rank_by(&b.rows, &r.key, higher) };
            section aria-label={"Ranked by " (metric(r))} {
                @if b.ranking.len() > 1 { h2 { "Ranked by " (metric(r)) " (" (if higher { "higher" } else { "lower" }) " is better)" } }
                @if ranked.is_empty() && b.hidden_until.is_none() { p { "No scored submission yet." } }
                @else {
                    div.scroll { table.board data-sortable {
                        thead { tr {
                            th scope="col" { "Rank" } th scope="col" { "Team" } th scope="col" { "Language" }
                            // The direction is said in words under the name: an arrow
                            // in a sortable table's header reads as its sort order.
                            @for k in &b.ranking { th scope="col" { (metric(k)) br; span.dir { (if word(&k.better) == "higher" { "higher is better" } else { "lower is better" }) } } }
                            @if entries.is_some() { th scope="col" { "Entries" } }
                            th scope="col" { "Run time" } th scope="col" { "Submitted" }
                        } }
                        tbody {
                            @for (rank, row) in &ranked {
                                @let own = mine == Some(row.team_id);
                                tr.mine[own] aria-current=[own.then_some("true")] {
                                    td.num { (rank) }
                                    td { (row.team)
                                        @if own { " " span.badge.you { "your team" } }
                                        @if row.baseline { " " span.badge.baseline title="a reference entry of the organisers'" { "baseline" } }
                                        @if let Some(m) = &row.method { br; span.muted { (m) } } }
                                    td { (row.language.as_deref().unwrap_or("—")) }
                                    @for k in &b.ranking { td.num { (html::num(row.scores.get(&k.key).copied().flatten(), 6)) } }
                                    @if let Some(e) = &entries { td.num.entries { (e.get(&store::TeamId(row.team_id)).copied().unwrap_or(0)) } }
                                    td.num { (row.run_time_s.map(html::duration).unwrap_or_else(|| "—".into())) }
                                    td { (time(row.submitted_at)) }
                                }
                            }
                        }
                    } }
                }
            }
        }
        @for (i, (label, p)) in plots.iter().enumerate() {
            section aria-labelledby={"progress-h" (i)} {
                h2 id={"progress-h" (i)} { "Best " (label) " over time" }
                (p)
            }
        }
        p { a href=(api_path(Some(&b.phase), b.published.as_ref().map(|p| p.version))) { "This leaderboard as JSON" } }
    };
    Ok(page(&ctx, "Leaderboard", body))
}
