//! What a challenge's page says beyond its definition: the organisers' overview, data
//! and rules texts, and their announcements (docs/web.md, "The challenge page"). Texts
//! are stored as the organiser wrote them (Markdown); rendering and cleaning them is
//! the site's job.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::db::{Row, args};
use crate::users::{missing, not_found};
use crate::{AnnouncementId, Error, Store, UserId, time, us};

/// The longest overview, data instructions, rules or announcement body, in characters:
/// pages of text, not a data set.
pub const MAX_TEXT_CHARS: usize = 20_000;
/// The longest announcement title, in characters.
pub const MAX_TITLE_CHARS: usize = 200;
/// The longest data address.
const MAX_URL_CHARS: usize = 2_000;

/// A challenge's texts for newcomers, as an organiser last wrote them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct About {
    pub overview: String,
    /// Where to download the data (an `http` or `https` address), if anywhere.
    pub data_url: Option<String>,
    /// How to get the data (with or without an address).
    pub data_instructions: String,
    pub rules: String,
    /// When and by whom it was last written (`None` for a challenge never described).
    pub updated_at: Option<DateTime<Utc>>,
    pub updated_by: Option<UserId>,
}

/// What an organiser writes: [`About`] without its history.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NewAbout {
    pub overview: String,
    pub data_url: Option<String>,
    pub data_instructions: String,
    pub rules: String,
}

/// An organiser's announcement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChallengeAnnouncement {
    pub id: AnnouncementId,
    pub challenge: String,
    pub title: String,
    /// Markdown.
    pub body: String,
    pub posted_by: UserId,
    pub posted_at: DateTime<Utc>,
}

fn check_len(field: &'static str, text: &str, max: usize) -> Result<(), Error> {
    let n = text.chars().count();
    if n > max {
        return Err(Error::Invalid {
            field,
            problem: format!("{n} characters; at most {max}"),
        });
    }
    Ok(())
}

/// A data address must be one a browser follows to a download: an `http` or `https`
/// address with a host (a `javascript:` address would run in the reader's page), read
/// as a browser reads it (the WHATWG URL parser). The parser forgives what a reader
/// would not see — tabs and line breaks dropped, spaces around cut, a missing or an
/// extra slash after the scheme mended — so those are refused here: the address shown
/// is the one a browser follows.
fn check_url(text: &str) -> Result<(), Error> {
    check_len("data url", text, MAX_URL_CHARS)?;
    let clean = !text.chars().any(|c| c.is_whitespace() || c.is_control());
    let parsed = url::Url::parse(text).ok();
    let web = parsed
        .as_ref()
        .is_some_and(|u| matches!(u.scheme(), "http" | "https"));
    let host = parsed
        .as_ref()
        .and_then(url::Url::host_str)
        .is_some_and(|h| !h.is_empty());
    // `scheme://` then the host, as written (the parser lower-cases the scheme).
    let written_whole = parsed
        .as_ref()
        .and_then(|u| text.get(u.scheme().len()..))
        .and_then(|rest| rest.strip_prefix("://"))
        .is_some_and(|rest| !rest.starts_with(['/', '\\']));
    if !(clean && web && host && written_whole) {
        return Err(Error::Invalid {
            field: "data url",
            problem: format!(
                "{text:?} is not an http(s) address with a host (like https://example.org/data.zip)"
            ),
        });
    }
    Ok(())
}

impl NewAbout {
    /// Trims the texts and checks their lengths and the address.
    fn checked(&self) -> Result<NewAbout, Error> {
        let a = NewAbout {
            overview: self.overview.trim().to_owned(),
            data_url: self
                .data_url
                .as_deref()
                .map(str::trim)
                .filter(|u| !u.is_empty())
                .map(str::to_owned),
            data_instructions: self.data_instructions.trim().to_owned(),
            rules: self.rules.trim().to_owned(),
        };
        check_len("overview", &a.overview, MAX_TEXT_CHARS)?;
        check_len("data instructions", &a.data_instructions, MAX_TEXT_CHARS)?;
        check_len("rules", &a.rules, MAX_TEXT_CHARS)?;
        if let Some(u) = &a.data_url {
            check_url(u)?;
        }
        Ok(a)
    }
}

fn announcement_from(r: &Row) -> Result<ChallengeAnnouncement, Error> {
    Ok(ChallengeAnnouncement {
        id: AnnouncementId::parse_stored(&r.get::<String>("id")?)?,
        challenge: r.get("challenge_id")?,
        title: r.get("title")?,
        body: r.get("body")?,
        posted_by: UserId::parse_stored(&r.get::<String>("posted_by")?)?,
        posted_at: time(r.get("posted_at")?)?,
    })
}

const ANNOUNCEMENT_COLUMNS: &str = "id, challenge_id, title, body, posted_by, posted_at";

impl Store {
    /// A challenge's texts (all empty for one never described; not found for no such
    /// challenge).
    pub async fn about(&self, challenge: &str) -> Result<About, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let known = tx
                .fetch_optional("SELECT id FROM challenges WHERE id = $1", args![challenge])
                .await?;
            if known.is_none() {
                return Err(not_found("challenge", challenge));
            }
            let Some(r) = tx
                .fetch_optional(
                    "SELECT overview, data_url, data_instructions, rules, updated_at, \
                     updated_by FROM challenge_about WHERE challenge_id = $1",
                    args![challenge],
                )
                .await?
            else {
                return Ok(About {
                    overview: String::new(),
                    data_url: None,
                    data_instructions: String::new(),
                    rules: String::new(),
                    updated_at: None,
                    updated_by: None,
                });
            };
            Ok(About {
                overview: r.get("overview")?,
                data_url: r.get("data_url")?,
                data_instructions: r.get("data_instructions")?,
                rules: r.get("rules")?,
                updated_at: Some(time(r.get("updated_at")?)?),
                updated_by: Some(UserId::parse_stored(&r.get::<String>("updated_by")?)?),
            })
        })
        .await;
        tx.finish(r).await
    }

    /// Writes a challenge's texts whole (trimmed; an empty address is none).
    pub async fn set_about(
        &self,
        challenge: &str,
        about: &NewAbout,
        by: UserId,
    ) -> Result<About, Error> {
        let a = about.checked()?;
        let now = self.now();
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            tx.execute(
                "INSERT INTO challenge_about (challenge_id, overview, data_url, \
                 data_instructions, rules, updated_at, updated_by) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT (challenge_id) DO UPDATE SET overview = $2, data_url = $3, \
                 data_instructions = $4, rules = $5, updated_at = $6, updated_by = $7",
                args![
                    challenge,
                    &a.overview,
                    a.data_url.as_deref(),
                    &a.data_instructions,
                    &a.rules,
                    us(now),
                    by
                ],
            )
            .await
            .map_err(|e| missing(e, "challenge", challenge))?;
            Ok(())
        })
        .await;
        tx.finish(r).await?;
        Ok(About {
            overview: a.overview,
            data_url: a.data_url,
            data_instructions: a.data_instructions,
            rules: a.rules,
            updated_at: Some(now),
            updated_by: Some(by),
        })
    }

    /// Posts an announcement (its title one line, trimmed; its body Markdown).
    pub async fn announce(
        &self,
        challenge: &str,
        title: &str,
        body: &str,
        by: UserId,
    ) -> Result<ChallengeAnnouncement, Error> {
        let title = title.trim();
        crate::users::nonempty("announcement title", title)?;
        check_len("announcement title", title, MAX_TITLE_CHARS)?;
        if title.chars().any(char::is_control) {
            return Err(Error::Invalid {
                field: "announcement title",
                problem: "one line, without control characters".to_owned(),
            });
        }
        let body = body.trim();
        check_len("announcement body", body, MAX_TEXT_CHARS)?;
        let id = AnnouncementId::new();
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let r = tx
                .fetch_one(
                    &format!(
                        "INSERT INTO announcements (id, challenge_id, title, body, posted_by, \
                         posted_at) VALUES ($1, $2, $3, $4, $5, $6) \
                         RETURNING {ANNOUNCEMENT_COLUMNS}"
                    ),
                    args![id, challenge, title, body, by, us(self.now())],
                )
                .await
                .map_err(|e| missing(e, "challenge", challenge))?;
            announcement_from(&r)
        })
        .await;
        tx.finish(r).await
    }

    /// A challenge's announcements, newest first.
    pub async fn announcements(
        &self,
        challenge: &str,
    ) -> Result<Vec<ChallengeAnnouncement>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            tx.fetch_all(
                &format!(
                    "SELECT {ANNOUNCEMENT_COLUMNS} FROM announcements WHERE challenge_id = $1 \
                     ORDER BY posted_at DESC, id DESC"
                ),
                args![challenge],
            )
            .await?
            .iter()
            .map(announcement_from)
            .collect()
        })
        .await;
        tx.finish(r).await
    }

    /// Takes an announcement down (one posted by mistake).
    pub async fn delete_announcement(
        &self,
        challenge: &str,
        id: AnnouncementId,
    ) -> Result<(), Error> {
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let n = tx
                .execute(
                    "DELETE FROM announcements WHERE id = $1 AND challenge_id = $2",
                    args![id, challenge],
                )
                .await?;
            if n == 0 {
                return Err(not_found("announcement", id));
            }
            Ok(())
        })
        .await;
        tx.finish(r).await
    }
}

#[cfg(test)]
mod tests {
    use super::check_url;

    #[test]
    fn data_addresses_are_http_with_a_host_as_written() {
        for good in [
            "https://example.org/cinc2017.zip",
            "http://example.org",
            "HTTPS://Example.org/data?x=1#part",
            "https://user@example.org:8443/a%20b.zip",
            "http://[::1]/x",
        ] {
            assert!(check_url(good).is_ok(), "{good}");
        }
        for bad in [
            "javascript:alert(1)",
            "ftp://example.org/x",
            "https://",
            "data:text/html,x",
            "https:example.org",
            "https:/example.org",
            "https:///example.org",
            "https:\\\\example.org",
            " https://example.org",
            "https://exa\tmple.org",
            "https://example.org/a b",
            "https://exa mple.org",
            "https://[::1/x",
            "http://example.org:99999/",
            "example.org/data.zip",
            "",
        ] {
            let e = check_url(bad).unwrap_err().to_string();
            assert!(e.contains("data url"), "{bad:?}: {e}");
        }
        let long = format!("https://example.org/{}", "x".repeat(2_000));
        assert!(
            check_url(&long)
                .unwrap_err()
                .to_string()
                .contains("at most 2000")
        );
    }
}
