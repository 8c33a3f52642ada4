-- The platform's rules that came after the first records (docs/service.md): what a
-- result was made with, its warnings and run time, published leaderboards, rescorings.
-- The DDL is the same in both dialects; only the backfill of run_time_s reads JSON,
-- which the two dialects spell differently, so this migration is one file per dialect.

-- What a result was made with (the reproduce command names each), the judge's total
-- time (the leaderboard shows it: stored so a leaderboard is one query, not one read of
-- result.json per row), and the scorer's warnings (JSON array of text).
ALTER TABLE results ADD COLUMN runtime_lock TEXT;
ALTER TABLE results ADD COLUMN definition_sha256 TEXT;
ALTER TABLE results ADD COLUMN manifest_sha256 TEXT;
ALTER TABLE results ADD COLUMN entry_sha256 TEXT;
ALTER TABLE results ADD COLUMN run_time_s DOUBLE PRECISION;
ALTER TABLE results ADD COLUMN warnings TEXT NOT NULL DEFAULT '[]';
ALTER TABLE results ADD COLUMN rescore_id TEXT;

-- Results stored before this migration were judged against the challenge as it is
-- (definitions and data are pinned at creation and never change in place).
UPDATE results SET
    definition_sha256 = (SELECT c.definition_sha256 FROM submissions s
                         JOIN challenges c ON c.id = s.challenge_id
                         WHERE s.id = results.submission_id),
    manifest_sha256 = (SELECT c.manifest_sha256 FROM submissions s
                       JOIN challenges c ON c.id = s.challenge_id
                       WHERE s.id = results.submission_id),
    entry_sha256 = (SELECT s.entry_sha256 FROM submissions s
                    WHERE s.id = results.submission_id);

-- The leaderboard's candidates: the live result of each scored submission of a phase.
CREATE INDEX submissions_phase_state ON submissions (phase_id, state, team_id);

-- A published (final) leaderboard: a fixed snapshot, never derived again. Publishing
-- again makes the next version; every version is kept.
CREATE TABLE publications (
    phase_id     TEXT NOT NULL REFERENCES phases (id),
    version      BIGINT NOT NULL CHECK (version >= 1),
    published_at BIGINT NOT NULL,
    published_by TEXT REFERENCES users (id),
    board        TEXT NOT NULL, -- JSON: the store's Leaderboard, rows and figures
    PRIMARY KEY (phase_id, version)
);

-- The final entries of each published version, so that "is this submission a
-- published final entry" (its team may then see its exam scores) is an index lookup.
CREATE TABLE publication_entries (
    phase_id      TEXT NOT NULL,
    version       BIGINT NOT NULL,
    submission_id TEXT NOT NULL REFERENCES submissions (id),
    PRIMARY KEY (phase_id, version, submission_id),
    FOREIGN KEY (phase_id, version) REFERENCES publications (phase_id, version)
);

-- A rescoring: who asked, why, its scope and versions, and the changes it computed.
-- It is applied or cancelled as a whole, once.
CREATE TABLE rescores (
    id             TEXT PRIMARY KEY,
    challenge_id   TEXT NOT NULL REFERENCES challenges (id),
    requested_by   TEXT REFERENCES users (id),
    reason         TEXT NOT NULL CHECK (reason <> ''),
    scope          TEXT NOT NULL, -- JSON: what was rescored
    scorer_version TEXT NOT NULL,
    judge_version  TEXT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('pending', 'applied', 'cancelled')),
    created_at     BIGINT NOT NULL,
    decided_at     BIGINT,
    decided_by     TEXT REFERENCES users (id),
    CHECK ((state = 'pending') = (decided_at IS NULL))
);

-- One result a rescoring would replace, and what it would become.
CREATE TABLE rescore_changes (
    rescore_id     TEXT NOT NULL REFERENCES rescores (id),
    result_id      TEXT NOT NULL REFERENCES results (id),
    submission_id  TEXT NOT NULL REFERENCES submissions (id),
    attempt        BIGINT NOT NULL,
    report         TEXT NOT NULL, -- JSON: the store's Report of the new result
    PRIMARY KEY (rescore_id, result_id)
);

-- The judge's total time of results stored before: the sum of the stages' wall times in
-- result.json, in whole seconds.
UPDATE results SET run_time_s = (
    SELECT ROUND(SUM((st->>'wall_time_s')::double precision)::numeric)::double precision
    FROM jsonb_array_elements(result_json::jsonb->'stages') st)
WHERE result_json IS NOT NULL
  AND jsonb_typeof(result_json::jsonb->'stages') = 'array';
