-- PostgreSQL's half of the guards (the same rules as sqlite/0002_guards.sql). Triggers
-- cannot be written once: PostgreSQL needs a plpgsql function and RAISE EXCEPTION;
-- SQLite puts the body in the trigger and raises with RAISE().
--
-- 1. A submission is created queued, and its state changes only along a row of
--    state_transitions (an UPDATE that names the state column and keeps it the same is
--    refused too: it is not a transition).
-- 2. The history is append-only.

CREATE FUNCTION submissions_state_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.state <> 'queued' THEN
            RAISE EXCEPTION 'state_transition_refused: a submission is created queued, not %',
                NEW.state USING ERRCODE = 'check_violation';
        END IF;
    ELSIF NOT EXISTS (
        SELECT 1 FROM state_transitions
        WHERE from_state = OLD.state AND to_state = NEW.state
    ) THEN
        RAISE EXCEPTION 'state_transition_refused: % -> % is not in state_transitions',
            OLD.state, NEW.state USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER submissions_state_guard
BEFORE INSERT OR UPDATE OF state ON submissions
FOR EACH ROW EXECUTE FUNCTION submissions_state_guard();

CREATE FUNCTION state_history_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'state_history is append-only' USING ERRCODE = 'check_violation';
END
$$;

CREATE TRIGGER state_history_append_only
BEFORE UPDATE OR DELETE ON state_history
FOR EACH ROW EXECUTE FUNCTION state_history_append_only();
