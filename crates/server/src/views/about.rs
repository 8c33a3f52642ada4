//! The shapes of a challenge's page texts, its announcements and a team's changes
//! (docs/web.md, "The challenge page"; docs/service.md, "Teams").

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// A challenge's texts for newcomers, as Markdown: the overview, where the data is,
/// and the rules (all empty until an organiser writes them).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AboutView {
    pub overview: String,
    /// An `http(s)` address to download the data from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_url: Option<String>,
    pub data_instructions: String,
    pub rules: String,
    /// When it was last written (absent: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<DateTime<Utc>>,
}

impl From<store::About> for AboutView {
    fn from(a: store::About) -> AboutView {
        AboutView {
            overview: a.overview,
            data_url: a.data_url,
            data_instructions: a.data_instructions,
            rules: a.rules,
            updated_at: a.updated_at,
        }
    }
}

/// What an organiser writes: every text whole (an absent one is empty).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewAbout {
    /// Markdown, at most 20,000 characters.
    #[serde(default)]
    pub overview: String,
    /// An `http(s)` address; empty or absent: none.
    #[serde(default)]
    pub data_url: Option<String>,
    /// Markdown, at most 20,000 characters.
    #[serde(default)]
    pub data_instructions: String,
    /// Markdown, at most 20,000 characters.
    #[serde(default)]
    pub rules: String,
}

impl From<NewAbout> for store::NewAbout {
    fn from(a: NewAbout) -> store::NewAbout {
        store::NewAbout {
            overview: a.overview,
            data_url: a.data_url,
            data_instructions: a.data_instructions,
            rules: a.rules,
        }
    }
}

/// An organiser's announcement.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct AnnouncementView {
    pub id: Uuid,
    pub challenge: String,
    pub title: String,
    /// Markdown (rendered and cleaned by whoever shows it).
    pub body: String,
    pub posted_at: DateTime<Utc>,
}

impl From<&store::ChallengeAnnouncement> for AnnouncementView {
    fn from(a: &store::ChallengeAnnouncement) -> AnnouncementView {
        AnnouncementView {
            id: a.id.0,
            challenge: a.challenge.clone(),
            title: a.title.clone(),
            body: a.body.clone(),
            posted_at: a.posted_at,
        }
    }
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewAnnouncement {
    /// One line, at most 200 characters.
    #[schema(min_length = 1, max_length = 200)]
    pub title: String,
    /// Markdown, at most 20,000 characters.
    #[serde(default)]
    pub body: String,
}

/// A team's new name.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamChange {
    /// One line, at most 100 characters (docs/service.md, "Names").
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
}
