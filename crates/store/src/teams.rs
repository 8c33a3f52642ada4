//! Teams, their members and invitations.

use crate::db::{Row, Tx, args};
use crate::users::{exists, missing, not_found, user_from};
use crate::{
    Error, Invitation, InvitationId, InvitationState, Store, Team, TeamId, User, UserId, time, us,
};

const TEAM_COLUMNS: &str =
    "id, challenge_id, name, hidden, disqualified, reason, baseline, created_at";

pub(crate) fn team_from(r: &Row) -> Result<Team, Error> {
    Ok(Team {
        id: TeamId::parse_stored(&r.get::<String>("id")?)?,
        challenge: r.get("challenge_id")?,
        name: r.get("name")?,
        hidden: r.get("hidden")?,
        disqualified: r.get("disqualified")?,
        reason: r.get("reason")?,
        baseline: r.get("baseline")?,
        created_at: time(r.get("created_at")?)?,
    })
}

const INVITATION_COLUMNS: &str = "id, team_id, user_id, invited_by, state, created_at";

fn invitation_from(r: &Row) -> Result<Invitation, Error> {
    Ok(Invitation {
        id: InvitationId::parse_stored(&r.get::<String>("id")?)?,
        team: TeamId::parse_stored(&r.get::<String>("team_id")?)?,
        user: UserId::parse_stored(&r.get::<String>("user_id")?)?,
        invited_by: UserId::parse_stored(&r.get::<String>("invited_by")?)?,
        state: InvitationState::parse_stored(&r.get::<String>("state")?)?,
        created_at: time(r.get("created_at")?)?,
    })
}

async fn team_in(tx: &mut Tx, id: TeamId) -> Result<Team, Error> {
    let r = tx
        .fetch_optional(
            &format!("SELECT {TEAM_COLUMNS} FROM teams WHERE id = $1"),
            args![id],
        )
        .await?
        .ok_or_else(|| not_found("team", id))?;
    team_from(&r)
}

/// Adds a member; a user already in a team of the challenge is [`Error::AlreadyInTeam`]
/// (the database's unique (challenge, user) says so).
async fn add_member(tx: &mut Tx, team: &Team, user: UserId, at: i64) -> Result<(), Error> {
    tx.execute(
        "INSERT INTO team_members (team_id, challenge_id, user_id, joined_at) \
         VALUES ($1, $2, $3, $4)",
        args![team.id, &team.challenge, user, at],
    )
    .await
    .map_err(|e| {
        if e.is_unique_violation() {
            Error::AlreadyInTeam {
                user: user.to_string(),
                challenge: team.challenge.clone(),
            }
        } else {
            missing(e, "user", user)
        }
    })?;
    Ok(())
}

/// [`Error::NotMember`] unless `user` is a member of `team`.
async fn must_be_member(tx: &mut Tx, team: &Team, user: UserId) -> Result<(), Error> {
    let member = tx
        .fetch_optional(
            "SELECT 1 AS one FROM team_members WHERE team_id = $1 AND user_id = $2",
            args![team.id, user],
        )
        .await?;
    if member.is_none() {
        return Err(Error::NotMember {
            user: user.to_string(),
            team: team.id.to_string(),
        });
    }
    Ok(())
}

impl Store {
    /// A new team of a challenge, with its founder as its first member.
    pub async fn create_team(
        &self,
        challenge: &str,
        name: &str,
        founder: UserId,
    ) -> Result<Team, Error> {
        let name = &crate::users::display_name("team name", name)?;
        let key = crate::users::name_key(name);
        let id = TeamId::new();
        let now = us(self.now());
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let r = tx
                .fetch_one(
                    &format!(
                        "INSERT INTO teams (id, challenge_id, name, name_key, created_at) \
                         VALUES ($1, $2, $3, $4, $5) RETURNING {TEAM_COLUMNS}"
                    ),
                    args![id, challenge, name, &key, now],
                )
                .await
                .map_err(|e| missing(e, "challenge", challenge))?;
            let team = team_from(&r)?;
            add_member(&mut tx, &team, founder, now).await?;
            Ok(team)
        })
        .await;
        match tx.finish(r).await {
            // add_member's own unique violation is already AlreadyInTeam: this one is
            // the name's.
            Err(e) => Err(crate::users::name_taken(
                &self.db,
                e,
                "team name",
                name,
                &key,
                "SELECT name FROM teams WHERE name_key = $1 AND challenge_id = $2",
                Some(challenge),
            )
            .await),
            ok => ok,
        }
    }

    pub async fn team(&self, id: TeamId) -> Result<Team, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async { team_in(&mut tx, id).await }).await;
        tx.finish(r).await
    }

    /// Every team of a challenge, by name.
    pub async fn teams(&self, challenge: &str) -> Result<Vec<Team>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            tx.fetch_all(
                &format!(
                    "SELECT {TEAM_COLUMNS} FROM teams WHERE challenge_id = $1 ORDER BY name, id"
                ),
                args![challenge],
            )
            .await?
            .iter()
            .map(team_from)
            .collect()
        })
        .await;
        tx.finish(r).await
    }

    /// A team of a challenge by its id or its name (names are unique per challenge).
    pub async fn team_by_ref(&self, challenge: &str, team: &str) -> Result<Team, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let id = team.parse::<TeamId>().ok().map(|t| t.to_string());
            tx.fetch_optional(
                &format!(
                    "SELECT {TEAM_COLUMNS} FROM teams WHERE challenge_id = $1 \
                     AND (id = $2 OR name = $3) ORDER BY (id = $2) DESC LIMIT 1"
                ),
                args![challenge, id, team],
            )
            .await?
            .as_ref()
            .map(team_from)
            .transpose()?
            .ok_or_else(|| not_found("team", team))
        })
        .await;
        tx.finish(r).await
    }

    /// The team a user is in for a challenge, if any.
    pub async fn team_of(&self, user: UserId, challenge: &str) -> Result<Option<Team>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            tx.fetch_optional(
                "SELECT t.id, t.challenge_id, t.name, t.hidden, t.disqualified, t.reason, \
                 t.baseline, t.created_at FROM teams t JOIN team_members m ON m.team_id = t.id \
                 WHERE m.user_id = $1 AND m.challenge_id = $2",
                args![user, challenge],
            )
            .await?
            .as_ref()
            .map(team_from)
            .transpose()
        })
        .await;
        tx.finish(r).await
    }

    /// A team's members, by name.
    pub async fn members(&self, team: TeamId) -> Result<Vec<User>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            tx.fetch_all(
                "SELECT u.id, u.name, u.role, u.password_hash IS NOT NULL AS has_password, \
                 u.created_at FROM users u JOIN team_members m ON m.user_id = u.id \
                 WHERE m.team_id = $1 ORDER BY u.name",
                args![team],
            )
            .await?
            .iter()
            .map(user_from)
            .collect()
        })
        .await;
        tx.finish(r).await
    }

    /// A member of `team` invites `user`; the user joins only by accepting.
    pub async fn invite(
        &self,
        team: TeamId,
        user: UserId,
        by: UserId,
    ) -> Result<Invitation, Error> {
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let t = team_in(&mut tx, team).await?;
            must_be_member(&mut tx, &t, by).await?;
            let id = InvitationId::new();
            let r = tx
                .fetch_one(
                    &format!(
                        "INSERT INTO invitations (id, team_id, user_id, invited_by, state, \
                         created_at) VALUES ($1, $2, $3, $4, 'pending', $5) \
                         RETURNING {INVITATION_COLUMNS}"
                    ),
                    args![id, team, user, by, us(self.now())],
                )
                .await
                .map_err(|e| exists(e, "pending invitation for user", &user.to_string()))
                .map_err(|e| missing(e, "user", user))?;
            let inv = invitation_from(&r)?;
            Ok(inv)
        })
        .await;
        tx.finish(r).await
    }

    /// The invitee accepts: joins the team, unless already in a team of the challenge
    /// ([`Error::AlreadyInTeam`]; the invitation stays pending).
    pub async fn accept_invitation(&self, id: InvitationId, user: UserId) -> Result<Team, Error> {
        let now = us(self.now());
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let r = tx
                .fetch_optional(
                    "UPDATE invitations SET state = 'accepted', answered_at = $3 \
                     WHERE id = $1 AND user_id = $2 AND state = 'pending' RETURNING team_id",
                    args![id, user, now],
                )
                .await?
                .ok_or_else(|| Error::InvitationNotPending(id.to_string()))?;
            let team =
                team_in(&mut tx, TeamId::parse_stored(&r.get::<String>("team_id")?)?).await?;
            add_member(&mut tx, &team, user, now).await?;
            Ok(team)
        })
        .await;
        tx.finish(r).await
    }

    /// The invitee declines.
    pub async fn decline_invitation(&self, id: InvitationId, user: UserId) -> Result<(), Error> {
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let n = tx
                .execute(
                    "UPDATE invitations SET state = 'declined', answered_at = $3 \
                     WHERE id = $1 AND user_id = $2 AND state = 'pending'",
                    args![id, user, us(self.now())],
                )
                .await?;
            if n == 0 {
                return Err(Error::InvitationNotPending(id.to_string()));
            }
            Ok(())
        })
        .await;
        tx.finish(r).await
    }

    /// A user's pending invitations, oldest first.
    pub async fn invitations(&self, user: UserId) -> Result<Vec<Invitation>, Error> {
        self.pending_invitations("user_id", args![user]).await
    }

    /// How many invitations wait for a user's answer (the site's navigation shows it on
    /// every page: a count, not the rows).
    pub async fn pending_invitation_count(&self, user: UserId) -> Result<u32, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let r = tx
                .fetch_one(
                    "SELECT COUNT(*) AS n FROM invitations WHERE user_id = $1 \
                     AND state = 'pending'",
                    args![user],
                )
                .await?;
            crate::count(r.get::<i64>("n")?)
        })
        .await;
        tx.finish(r).await
    }

    /// The pending invitations a team has sent, oldest first.
    pub async fn team_invitations(&self, team: TeamId) -> Result<Vec<Invitation>, Error> {
        self.pending_invitations("team_id", args![team]).await
    }

    /// The pending invitations whose `column` (a fixed name, never input) is the id.
    async fn pending_invitations(
        &self,
        column: &'static str,
        id: Vec<crate::db::Val>,
    ) -> Result<Vec<Invitation>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            tx.fetch_all(
                &format!(
                    "SELECT {INVITATION_COLUMNS} FROM invitations WHERE {column} = $1 \
                     AND state = 'pending' ORDER BY created_at, id"
                ),
                id,
            )
            .await?
            .iter()
            .map(invitation_from)
            .collect()
        })
        .await;
        tx.finish(r).await
    }

    /// A member renames the team, under the same rules as a new team's name (unique
    /// in the challenge as people read it: docs/service.md, "Names").
    pub async fn rename_team(&self, team: TeamId, name: &str, by: UserId) -> Result<Team, Error> {
        let name = &crate::users::display_name("team name", name)?;
        let key = crate::users::name_key(name);
        // A team never changes challenge: its scope for a taken name's message.
        let challenge = self.team(team).await?.challenge;
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let t = team_in(&mut tx, team).await?;
            must_be_member(&mut tx, &t, by).await?;
            let r = tx
                .fetch_one(
                    &format!(
                        "UPDATE teams SET name = $2, name_key = $3 WHERE id = $1 \
                         RETURNING {TEAM_COLUMNS}"
                    ),
                    args![team, name, &key],
                )
                .await?;
            team_from(&r)
        })
        .await;
        let r = match tx.finish(r).await {
            Err(e) if e.is_unique_violation() => Err(crate::users::name_taken(
                &self.db,
                e,
                "team name",
                name,
                &key,
                "SELECT name FROM teams WHERE name_key = $1 AND challenge_id = $2",
                Some(&challenge),
            )
            .await),
            other => other,
        };
        if r.is_ok() {
            self.boards_changed();
        }
        r
    }

    /// A member leaves a team that has no submission ([`Error::TeamHasSubmissions`]
    /// otherwise: its entries were made by its members, who stay in it). A team left
    /// empty is deleted with its invitations, so that its name is free again, unless
    /// an organiser's deadline extension or quota names it (those records are kept
    /// whole): then it stays, empty, and an invitee may still join it.
    pub async fn leave_team(&self, team: TeamId, user: UserId) -> Result<(), Error> {
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let t = team_in(&mut tx, team).await?;
            must_be_member(&mut tx, &t, user).await?;
            let submitted = tx
                .fetch_optional(
                    "SELECT 1 AS one FROM submissions WHERE team_id = $1 LIMIT 1",
                    args![team],
                )
                .await?;
            if submitted.is_some() {
                return Err(Error::TeamHasSubmissions {
                    team: t.name.clone(),
                });
            }
            tx.execute(
                "DELETE FROM team_members WHERE team_id = $1 AND user_id = $2",
                args![team, user],
            )
            .await?;
            let left = tx
                .fetch_optional(
                    "SELECT 1 AS one FROM team_members WHERE team_id = $1 LIMIT 1",
                    args![team],
                )
                .await?;
            let ruled = tx
                .fetch_optional(
                    "SELECT 1 AS one FROM deadline_extensions WHERE team_id = $1 \
                     UNION ALL SELECT 1 AS one FROM quota_overrides WHERE team_id = $1",
                    args![team],
                )
                .await?;
            if left.is_none() && ruled.is_none() {
                tx.execute("DELETE FROM invitations WHERE team_id = $1", args![team])
                    .await?;
                tx.execute("DELETE FROM teams WHERE id = $1", args![team])
                    .await?;
            }
            Ok(())
        })
        .await;
        tx.finish(r).await
    }

    /// Hides a team from leaderboards (or shows it again), with a reason.
    pub async fn set_team_hidden(
        &self,
        team: TeamId,
        hidden: bool,
        reason: Option<&str>,
    ) -> Result<(), Error> {
        self.set_team_flag(team, "hidden", hidden, reason).await
    }

    /// Disqualifies a team (or lifts it), with a reason: it leaves the leaderboards.
    pub async fn set_team_disqualified(
        &self,
        team: TeamId,
        disqualified: bool,
        reason: Option<&str>,
    ) -> Result<(), Error> {
        self.set_team_flag(team, "disqualified", disqualified, reason)
            .await
    }

    async fn set_team_flag(
        &self,
        team: TeamId,
        column: &'static str,
        on: bool,
        reason: Option<&str>,
    ) -> Result<(), Error> {
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let n = tx
                .execute(
                    &format!("UPDATE teams SET {column} = $2, reason = $3 WHERE id = $1"),
                    args![team, on, reason],
                )
                .await?;
            if n == 0 {
                return Err(not_found("team", team));
            }
            Ok(())
        })
        .await;
        let r = tx.finish(r).await;
        self.boards_changed();
        r
    }
}
