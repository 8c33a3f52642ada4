-- Worker and queue controls (docs/service.md, "Workers"): a worker's state with who
-- changed it, when and why; what a worker announced of itself (judge version, runtime
-- lock, slots, host) and its last refusal; whose fault an attempt's `error` was; and a
-- challenge's judging pause. The same text as SQLite's 0007. Numbered 0007: 0004 and
-- 0006 are other migrations' (the runner applies whatever versions it has not
-- applied, in order).

-- enabled: takes jobs; draining: finishes its running attempts, takes no new job;
-- disabled: takes nothing, heartbeats and reports are refused.
ALTER TABLE workers ADD COLUMN state TEXT NOT NULL DEFAULT 'enabled'
    CHECK (state IN ('enabled', 'draining', 'disabled'));
UPDATE workers SET state = 'disabled' WHERE disabled;
ALTER TABLE workers DROP COLUMN disabled;
ALTER TABLE workers ADD COLUMN state_changed_at BIGINT;
ALTER TABLE workers ADD COLUMN state_changed_by TEXT REFERENCES users (id);
-- JSON: the typed reason (store::WorkerStateReason).
ALTER TABLE workers ADD COLUMN state_reason TEXT;
ALTER TABLE workers ADD COLUMN judge_version TEXT;
ALTER TABLE workers ADD COLUMN runtime_lock TEXT;
ALTER TABLE workers ADD COLUMN slots BIGINT CHECK (slots >= 0);
ALTER TABLE workers ADD COLUMN host TEXT;
ALTER TABLE workers ADD COLUMN announced_at BIGINT;
-- The last time it was refused for its version, and the refusal's message.
ALTER TABLE workers ADD COLUMN refused_at BIGINT;
ALTER TABLE workers ADD COLUMN refusal TEXT;

-- The allowed changes of a worker's state: a history row names one (foreign key), so
-- the database refuses any other, whoever writes it.
CREATE TABLE worker_transitions (
    from_state TEXT NOT NULL,
    to_state   TEXT NOT NULL,
    PRIMARY KEY (from_state, to_state)
);
INSERT INTO worker_transitions (from_state, to_state) VALUES
    ('enabled', 'draining'), ('enabled', 'disabled'),
    ('draining', 'enabled'), ('draining', 'disabled'),
    ('disabled', 'enabled');

CREATE TABLE worker_history (
    worker_id  TEXT NOT NULL REFERENCES workers (id),
    seq        BIGINT NOT NULL CHECK (seq >= 1),
    from_state TEXT NOT NULL,
    to_state   TEXT NOT NULL,
    at         BIGINT NOT NULL,
    by_user    TEXT REFERENCES users (id),
    reason     TEXT NOT NULL, -- JSON: store::WorkerStateReason
    PRIMARY KEY (worker_id, seq),
    FOREIGN KEY (from_state, to_state) REFERENCES worker_transitions (from_state, to_state)
);

-- Whose an attempt's `error` was: 'worker' (a judge or machine fault, a lost lease:
-- counts towards disabling the worker) or 'elsewhere' (stopped, the organiser's
-- doing, the platform's). NULL for scored and failed attempts and running ones.
ALTER TABLE attempts ADD COLUMN blame TEXT CHECK (blame IN ('worker', 'elsewhere'));
-- Errors before this migration cannot be told apart (a shutdown's stop looked like a
-- judge fault): none is held against its worker.
UPDATE attempts SET blame = 'elsewhere' WHERE outcome = 'error';
CREATE INDEX attempts_worker_ended ON attempts (worker_id, ended_at);

-- A challenge whose judging is paused: submissions are still accepted and queued, no
-- worker takes one of its jobs.
ALTER TABLE challenges ADD COLUMN paused_at BIGINT;
ALTER TABLE challenges ADD COLUMN paused_by TEXT REFERENCES users (id);
ALTER TABLE challenges ADD COLUMN pause_reason TEXT;
