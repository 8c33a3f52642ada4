-- Idempotent uploads and takes (docs/service.md, "A fleet"). The same text for both
-- dialects.

-- An upload's `Idempotency-Key`, per team, for 24 hours: a retried upload with the same
-- key and the same request (its fingerprint: the entry's sha256, the phase asked for,
-- the method's name and description) answers with the submission the first one made;
-- the same key with another request is refused. Rows older than 24 hours are ignored
-- and replaced.
CREATE TABLE upload_keys (
    team_id        TEXT NOT NULL REFERENCES teams (id),
    key            TEXT NOT NULL CHECK (key <> ''),
    request_sha256 TEXT NOT NULL,
    submission_id  TEXT NOT NULL REFERENCES submissions (id),
    created_at     BIGINT NOT NULL,
    PRIMARY KEY (team_id, key)
);

-- A take's id, chosen by the worker and sent again with every retry of the same take:
-- a take whose answer was lost is answered again with the same attempt. And the worker
-- process (its instance id, new at every start) that took it: a process that starts
-- again under the same worker ends its predecessor's attempts at once.
ALTER TABLE attempts ADD COLUMN take_id TEXT;
ALTER TABLE attempts ADD COLUMN instance TEXT;
CREATE UNIQUE INDEX attempts_by_take ON attempts (worker_id, take_id);
ALTER TABLE workers ADD COLUMN instance TEXT;
