-- The platform's records (docs/service.md, "Data model"). This file runs unchanged on
-- SQLite and PostgreSQL, so it keeps to what both dialects mean the same way:
--   * times are BIGINT microseconds since the Unix epoch, UTC: the same SQL compares,
--     adds and orders them in both (SQLite has no time type; TEXT times order only
--     while every writer formats them alike);
--   * ids are TEXT (UUID version 7, made by the crate), since the two dialects spell
--     generated keys differently;
--   * integers are BIGINT (read as i64 in both), reals DOUBLE PRECISION, flags BOOLEAN.
-- What cannot be written once (triggers) is in 0002, one file per dialect.

CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE CHECK (name <> ''),
    role          TEXT NOT NULL CHECK (role IN ('participant', 'organiser')),
    password_hash TEXT,
    created_at    BIGINT NOT NULL
);

CREATE TABLE workers (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE CHECK (name <> ''),
    created_at   BIGINT NOT NULL,
    last_seen_at BIGINT,
    disabled     BOOLEAN NOT NULL DEFAULT FALSE
);

-- A token is shown once; only its sha256 is kept. A worker token belongs to a worker
-- and is good only for the queue.
CREATE TABLE api_tokens (
    hash         TEXT PRIMARY KEY,
    kind         TEXT NOT NULL CHECK (kind IN ('user', 'worker')),
    user_id      TEXT REFERENCES users (id),
    worker_id    TEXT REFERENCES workers (id),
    label        TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at   BIGINT,
    CHECK ((kind = 'user' AND user_id IS NOT NULL AND worker_id IS NULL)
        OR (kind = 'worker' AND worker_id IS NOT NULL AND user_id IS NULL))
);

CREATE TABLE challenges (
    id                TEXT PRIMARY KEY CHECK (id <> ''),
    title             TEXT NOT NULL,
    definition_kind   TEXT NOT NULL CHECK (definition_kind IN ('builtin', 'toml')),
    definition        TEXT NOT NULL,
    definition_sha256 TEXT NOT NULL,
    data_path         TEXT NOT NULL,
    data_manifest     TEXT NOT NULL, -- JSON: {"relative/path": "sha256", ...}
    manifest_sha256   TEXT NOT NULL,
    created_at        BIGINT NOT NULL
);

CREATE TABLE phases (
    id                   TEXT PRIMARY KEY,
    challenge_id         TEXT NOT NULL REFERENCES challenges (id),
    name                 TEXT NOT NULL CHECK (name <> ''),
    opens_at             BIGINT NOT NULL,
    closes_at            BIGINT NOT NULL,
    selection_closes_at  BIGINT,
    quota_total          BIGINT CHECK (quota_total >= 0),
    quota_per_day        BIGINT CHECK (quota_per_day >= 0),
    quota_max_concurrent BIGINT CHECK (quota_max_concurrent >= 0),
    scored_split         TEXT NOT NULL CHECK (scored_split IN ('quiz', 'exam')),
    show_exam            BOOLEAN NOT NULL,
    rule                 TEXT NOT NULL CHECK (rule IN ('best', 'latest')),
    created_at           BIGINT NOT NULL,
    UNIQUE (challenge_id, name),
    UNIQUE (id, challenge_id),
    CHECK (opens_at < closes_at),
    CHECK (selection_closes_at IS NULL OR selection_closes_at >= closes_at)
);

CREATE TABLE teams (
    id           TEXT PRIMARY KEY,
    challenge_id TEXT NOT NULL REFERENCES challenges (id),
    name         TEXT NOT NULL CHECK (name <> ''),
    hidden       BOOLEAN NOT NULL DEFAULT FALSE,
    disqualified BOOLEAN NOT NULL DEFAULT FALSE,
    reason       TEXT,
    created_at   BIGINT NOT NULL,
    UNIQUE (challenge_id, name),
    UNIQUE (id, challenge_id)
);

-- A user is in at most one team per challenge: UNIQUE (challenge_id, user_id), with the
-- challenge tied to the team's by the composite foreign key.
CREATE TABLE team_members (
    team_id      TEXT NOT NULL,
    challenge_id TEXT NOT NULL,
    user_id      TEXT NOT NULL REFERENCES users (id),
    joined_at    BIGINT NOT NULL,
    PRIMARY KEY (team_id, user_id),
    UNIQUE (challenge_id, user_id),
    FOREIGN KEY (team_id, challenge_id) REFERENCES teams (id, challenge_id)
);

CREATE TABLE invitations (
    id          TEXT PRIMARY KEY,
    team_id     TEXT NOT NULL REFERENCES teams (id),
    user_id     TEXT NOT NULL REFERENCES users (id),
    invited_by  TEXT NOT NULL REFERENCES users (id),
    state       TEXT NOT NULL CHECK (state IN ('pending', 'accepted', 'declined')),
    created_at  BIGINT NOT NULL,
    answered_at BIGINT
);
CREATE UNIQUE INDEX invitations_one_pending ON invitations (team_id, user_id)
    WHERE state = 'pending';

-- The submission state machine, as data: the states (and which count against a quota)
-- and every allowed change. The guard of 0002 refuses any other change.
CREATE TABLE submission_states (
    state            TEXT PRIMARY KEY,
    counts_for_quota BOOLEAN NOT NULL
);
INSERT INTO submission_states (state, counts_for_quota) VALUES
    ('queued', TRUE), ('running', TRUE), ('scored', TRUE), ('failed', TRUE),
    ('error', FALSE), ('withdrawn', FALSE);

CREATE TABLE state_transitions (
    from_state TEXT NOT NULL REFERENCES submission_states (state),
    to_state   TEXT NOT NULL REFERENCES submission_states (state),
    PRIMARY KEY (from_state, to_state)
);
INSERT INTO state_transitions (from_state, to_state) VALUES
    ('queued', 'running'),
    ('queued', 'withdrawn'),
    ('running', 'scored'),
    ('running', 'failed'),
    ('running', 'error'),
    ('error', 'queued');

CREATE TABLE submissions (
    id                 TEXT PRIMARY KEY,
    challenge_id       TEXT NOT NULL,
    team_id            TEXT NOT NULL,
    phase_id           TEXT NOT NULL,
    entry_sha256       TEXT NOT NULL,
    entry_path         TEXT NOT NULL,
    received_at        BIGINT NOT NULL,
    state              TEXT NOT NULL REFERENCES submission_states (state),
    state_changed_at   BIGINT NOT NULL,
    current_attempt    BIGINT NOT NULL DEFAULT 0 CHECK (current_attempt >= 0),
    selected           BOOLEAN NOT NULL DEFAULT FALSE,
    method_name        TEXT,
    method_description TEXT,
    -- the team and the phase are of the same challenge
    FOREIGN KEY (team_id, challenge_id) REFERENCES teams (id, challenge_id),
    FOREIGN KEY (phase_id, challenge_id) REFERENCES phases (id, challenge_id),
    CHECK (selected = FALSE OR state = 'scored')
);
CREATE INDEX submissions_queue ON submissions (state, received_at);
CREATE INDEX submissions_team_phase ON submissions (team_id, phase_id, received_at);
CREATE UNIQUE INDEX submissions_one_selected ON submissions (team_id, phase_id)
    WHERE selected = TRUE;

CREATE TABLE attempts (
    submission_id    TEXT NOT NULL REFERENCES submissions (id),
    number           BIGINT NOT NULL CHECK (number >= 1),
    worker_id        TEXT NOT NULL REFERENCES workers (id),
    started_at       BIGINT NOT NULL,
    lease_expires_at BIGINT NOT NULL,
    ended_at         BIGINT,
    outcome          TEXT CHECK (outcome IN ('scored', 'failed', 'error')),
    PRIMARY KEY (submission_id, number),
    CHECK ((ended_at IS NULL) = (outcome IS NULL))
);

-- Every state change, in the transaction that made it. A creation has no from_state;
-- every other row names an allowed transition (the foreign key).
CREATE TABLE state_history (
    submission_id TEXT NOT NULL REFERENCES submissions (id),
    seq           BIGINT NOT NULL CHECK (seq >= 1),
    from_state    TEXT,
    to_state      TEXT NOT NULL REFERENCES submission_states (state),
    at            BIGINT NOT NULL,
    reason        TEXT NOT NULL, -- JSON, tagged by "kind"
    PRIMARY KEY (submission_id, seq),
    FOREIGN KEY (from_state, to_state) REFERENCES state_transitions (from_state, to_state),
    CHECK (from_state IS NOT NULL OR to_state = 'queued')
);

-- One live result per attempt (the partial unique index): a second report for the
-- same attempt cannot be stored. A rescoring marks the old row replaced and adds one.
CREATE TABLE results (
    id             TEXT PRIMARY KEY,
    submission_id  TEXT NOT NULL,
    attempt        BIGINT NOT NULL,
    outcome        TEXT NOT NULL CHECK (outcome IN ('scored', 'failed', 'error')),
    result_json    TEXT,
    private_json   TEXT,
    scorer_version TEXT NOT NULL,
    judge_version  TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    replaced       BOOLEAN NOT NULL DEFAULT FALSE,
    replaced_at    BIGINT,
    FOREIGN KEY (submission_id, attempt) REFERENCES attempts (submission_id, number),
    CHECK (outcome = 'error' OR result_json IS NOT NULL)
);
CREATE UNIQUE INDEX results_one_live ON results (submission_id, attempt)
    WHERE replaced = FALSE;

-- The ranking numbers of a result; position 0 is the one a leaderboard ranks by.
CREATE TABLE result_figures (
    result_id TEXT NOT NULL REFERENCES results (id),
    position  BIGINT NOT NULL CHECK (position >= 0),
    key       TEXT NOT NULL,
    value     DOUBLE PRECISION,
    better    TEXT NOT NULL CHECK (better IN ('higher', 'lower')),
    PRIMARY KEY (result_id, position),
    UNIQUE (result_id, key)
);
