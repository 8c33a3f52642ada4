-- SQLite's half of the guards (the same rules as postgres/0002_guards.sql). Triggers
-- cannot be written once: SQLite puts the body in the trigger and raises with RAISE();
-- PostgreSQL needs a plpgsql function and RAISE EXCEPTION.
--
-- 1. A submission is created queued, and its state changes only along a row of
--    state_transitions (an UPDATE that names the state column and keeps it the same is
--    refused too: it is not a transition).
-- 2. The history is append-only.

CREATE TRIGGER submissions_born_queued
BEFORE INSERT ON submissions
WHEN NEW.state <> 'queued'
BEGIN
    SELECT RAISE(ABORT, 'state_transition_refused: a submission is created queued');
END;

CREATE TRIGGER submissions_state_guard
BEFORE UPDATE OF state ON submissions
WHEN NOT EXISTS (
    SELECT 1 FROM state_transitions
    WHERE from_state = OLD.state AND to_state = NEW.state
)
BEGIN
    SELECT RAISE(ABORT, 'state_transition_refused: not in state_transitions');
END;

CREATE TRIGGER state_history_no_update
BEFORE UPDATE ON state_history
BEGIN
    SELECT RAISE(ABORT, 'state_history is append-only');
END;

CREATE TRIGGER state_history_no_delete
BEFORE DELETE ON state_history
BEGIN
    SELECT RAISE(ABORT, 'state_history is append-only');
END;
