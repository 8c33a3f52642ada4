-- Rules an organiser sets for one team (docs/service.md, "Deadlines and quotas per
-- team"): a later close of a phase (an extension) and a quota of its own (an
-- override), each with who set it, when and why. Both are kept as append-only
-- histories: every change is a new row (the next `seq` of the phase and team), and the
-- rule in force is the latest row. A row with no value is a revocation (an extension)
-- or a removal (an override). The team and the phase are of the same challenge (the
-- composite foreign keys, as submissions' are). The DDL is the same in both dialects;
-- the triggers that keep the histories append-only are not, so this migration is one
-- file per dialect.

CREATE TABLE deadline_extensions (
    phase_id     TEXT NOT NULL,
    team_id      TEXT NOT NULL,
    challenge_id TEXT NOT NULL,
    seq          BIGINT NOT NULL CHECK (seq >= 1),
    -- The team's own close of the phase; NULL: the extension is revoked.
    closes_at    BIGINT,
    reason       TEXT,
    set_by       TEXT REFERENCES users (id),
    set_at       BIGINT NOT NULL,
    PRIMARY KEY (phase_id, team_id, seq),
    FOREIGN KEY (team_id, challenge_id) REFERENCES teams (id, challenge_id),
    FOREIGN KEY (phase_id, challenge_id) REFERENCES phases (id, challenge_id),
    -- A grant says why; a revocation may.
    CHECK (closes_at IS NULL OR (reason IS NOT NULL AND reason <> ''))
);

CREATE TABLE quota_overrides (
    phase_id             TEXT NOT NULL,
    team_id              TEXT NOT NULL,
    challenge_id         TEXT NOT NULL,
    seq                  BIGINT NOT NULL CHECK (seq >= 1),
    -- FALSE: the override is removed (the limits below are then all NULL).
    active               BOOLEAN NOT NULL,
    -- Each limit the override sets; NULL: the phase's own limit holds.
    quota_total          BIGINT CHECK (quota_total >= 0),
    quota_per_day        BIGINT CHECK (quota_per_day >= 0),
    quota_max_concurrent BIGINT CHECK (quota_max_concurrent >= 0),
    reason               TEXT,
    set_by               TEXT REFERENCES users (id),
    set_at               BIGINT NOT NULL,
    PRIMARY KEY (phase_id, team_id, seq),
    FOREIGN KEY (team_id, challenge_id) REFERENCES teams (id, challenge_id),
    FOREIGN KEY (phase_id, challenge_id) REFERENCES phases (id, challenge_id),
    CHECK ((active AND reason IS NOT NULL AND reason <> ''
            AND (quota_total IS NOT NULL OR quota_per_day IS NOT NULL
                 OR quota_max_concurrent IS NOT NULL))
        OR (NOT active AND quota_total IS NULL AND quota_per_day IS NULL
            AND quota_max_concurrent IS NULL))
);

-- A baseline team (an organiser's reference entry): shown on leaderboards with a
-- badge, although organisers' teams are otherwise hidden.
ALTER TABLE teams ADD COLUMN baseline BOOLEAN NOT NULL DEFAULT FALSE;

CREATE FUNCTION team_rules_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'check_violation';
END
$$;

CREATE TRIGGER deadline_extensions_append_only
BEFORE UPDATE OR DELETE ON deadline_extensions
FOR EACH ROW EXECUTE FUNCTION team_rules_append_only();

CREATE TRIGGER quota_overrides_append_only
BEFORE UPDATE OR DELETE ON quota_overrides
FOR EACH ROW EXECUTE FUNCTION team_rules_append_only();
