-- What a challenge's page tells a newcomer beyond its definition, and the organisers'
-- announcements (docs/web.md, "The challenge page"). The same text for both dialects.

-- One row per challenge, written whole by an organiser: the overview, where the data is
-- (a download address, or instructions when there is none), and the rules, each as
-- Markdown (rendered and cleaned when shown, never stored as HTML).
CREATE TABLE challenge_about (
    challenge_id      TEXT PRIMARY KEY REFERENCES challenges (id),
    overview          TEXT NOT NULL,
    data_url          TEXT,
    data_instructions TEXT NOT NULL,
    rules             TEXT NOT NULL,
    updated_at        BIGINT NOT NULL,
    updated_by        TEXT NOT NULL REFERENCES users (id)
);

-- An organiser's announcement: a title and a Markdown body, shown newest first on the
-- challenge's page and in its Atom feed.
CREATE TABLE announcements (
    id           TEXT PRIMARY KEY,
    challenge_id TEXT NOT NULL REFERENCES challenges (id),
    title        TEXT NOT NULL CHECK (title <> ''),
    body         TEXT NOT NULL,
    posted_by    TEXT NOT NULL REFERENCES users (id),
    posted_at    BIGINT NOT NULL
);
CREATE INDEX announcements_by_challenge ON announcements (challenge_id, posted_at);
