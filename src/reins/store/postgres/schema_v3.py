"""The PostgreSQL engine's migration 3: the human lane and the judge's own errors.

Attempts gain the kinds judge_error and human, a person's action and note, the digest of the
gate that judged and the round; items gain their round, a lease token and the gate digest of
their last judgment. The server-side functions that write a turn are made again with the new
columns.
"""

from __future__ import annotations

# The writes of a turn as of v3: the attempt's columns (reins.store.codec.ATTEMPT_COLUMNS
# order) gain gate_digest, action, note and round; the attempt is counted by kind; the item's
# round, lease token and gate digest are written, and its export mark kept only while the turn
# leaves it exported (``p_exported``: false after a person's action).
_APPEND = """
CREATE FUNCTION reins_append(
    p_item bigint, p_turn integer, p_kind text, p_driver text, p_state_after text,
    p_tries_after integer, p_outcome text, p_root_cause text, p_facts text, p_feedback text,
    p_submission text, p_error text, p_policy text, p_backend text, p_prompt_digest text,
    p_input_tokens bigint, p_output_tokens bigint, p_cost double precision,
    p_latency double precision, p_started_at text, p_recorded_at text, p_extra text,
    p_gate_digest text, p_action text, p_note text, p_round integer,
    p_rules text[], p_fired bigint[], p_roots bigint[]
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    s smallint := reins_shard();
BEGIN
    INSERT INTO attempts (item_id, turn, kind, driver, state_after, tries_after, outcome,
        root_cause, facts, feedback, submission, error, policy, backend, prompt_digest,
        input_tokens, output_tokens, cost, latency, started_at, recorded_at, extra,
        gate_digest, action, note, round)
    VALUES (p_item, p_turn, p_kind, p_driver, p_state_after, p_tries_after, p_outcome,
        p_root_cause, p_facts, p_feedback, p_submission, p_error, p_policy, p_backend,
        p_prompt_digest, p_input_tokens, p_output_tokens, p_cost, p_latency, p_started_at,
        p_recorded_at, p_extra, p_gate_digest, p_action, p_note, p_round);
    IF cardinality(p_rules) > 0 THEN
        INSERT INTO rule_count_shards AS c (shard, rule, fired, root)
            SELECT s, r, f, o FROM unnest(p_rules, p_fired, p_roots) AS u(r, f, o)
            ORDER BY r COLLATE "C"
            ON CONFLICT (shard, rule)
            DO UPDATE SET fired = c.fired + excluded.fired, root = c.root + excluded.root;
    END IF;
    UPDATE usage_shards SET attempts = attempts + 1,
        input_tokens = input_tokens + coalesce(p_input_tokens, 0),
        output_tokens = output_tokens + coalesce(p_output_tokens, 0),
        cost = cost + coalesce(p_cost, 0),
        judged = judged + (p_kind = 'judged')::integer,
        generation_errors = generation_errors + (p_kind = 'generation_error')::integer,
        judge_errors = judge_errors + (p_kind = 'judge_error')::integer,
        human = human + (p_kind = 'human')::integer
    WHERE shard = s;
END $$;
"""

_TURN = """
CREATE FUNCTION reins_turn(
    p_item bigint, p_turn integer, p_kind text, p_driver text, p_state_after text,
    p_tries_after integer, p_outcome text, p_root_cause text, p_facts text, p_feedback text,
    p_submission text, p_error text, p_policy text, p_backend text, p_prompt_digest text,
    p_input_tokens bigint, p_output_tokens bigint, p_cost double precision,
    p_latency double precision, p_started_at text, p_recorded_at text, p_extra text,
    p_gate_digest text, p_action text, p_note text, p_round integer,
    p_rules text[], p_fired bigint[], p_roots bigint[],
    p_state text, p_tries integer, p_turns integer, p_updated_at text, p_locked_at text,
    p_lease_owner text, p_lease_expires double precision, p_item_root_cause text,
    p_item_round integer, p_lease_token text, p_item_gate_digest text, p_exported boolean,
    p_holder text
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM reins_append(p_item, p_turn, p_kind, p_driver, p_state_after, p_tries_after,
        p_outcome, p_root_cause, p_facts, p_feedback, p_submission, p_error, p_policy,
        p_backend, p_prompt_digest, p_input_tokens, p_output_tokens, p_cost, p_latency,
        p_started_at, p_recorded_at, p_extra, p_gate_digest, p_action, p_note, p_round,
        p_rules, p_fired, p_roots);
    UPDATE items SET state = p_state, tries = p_tries, turns = p_turns,
        updated_at = p_updated_at, locked_at = p_locked_at, lease_owner = p_lease_owner,
        lease_expires = p_lease_expires, root_cause = p_item_root_cause, round = p_item_round,
        lease_token = p_lease_token, gate_digest = p_item_gate_digest,
        export_batch = CASE WHEN p_exported THEN export_batch END
    WHERE id = p_item;
    IF p_kind = 'judged' THEN
        UPDATE drivers SET nexts = 0 WHERE name = p_holder;
    END IF;
END $$;
"""

# v3: the human lane and the judge's own errors, as in SQLite. Attempts gain the kinds
# judge_error and human (the CHECK is widened in place), a person's action and note, the digest
# of the gate that judged, and the round; items gain their round, a lease token and the gate
# digest of their last judgment. Attempts per kind are counted beside the usage, in the same
# sharded row a turn already updates (``kind_counts`` turns the columns into rows); items per
# gate digest are counted by triggers in ``gate_count_shards``. The ratchet's trigger now lets
# a terminal item move only by a person's recorded action, one attempt at a time, and tries go
# down only into a new round. ``reins_append`` and ``reins_turn`` are made again with the new
# columns; a turn a person made clears its item's export mark, so the item is exported again.
V3 = f"""
ALTER TABLE attempts DROP CONSTRAINT attempts_kind_check;
ALTER TABLE attempts ADD CONSTRAINT attempts_kind_check
    CHECK (kind IN ('judged', 'generation_error', 'judge_error', 'human'));
ALTER TABLE attempts ADD COLUMN gate_digest text, ADD COLUMN action text,
    ADD COLUMN note text, ADD COLUMN round integer NOT NULL DEFAULT 1;

ALTER TABLE items ADD COLUMN round integer NOT NULL DEFAULT 1 CHECK (round >= 1),
    ADD COLUMN lease_token text, ADD COLUMN gate_digest text;
CREATE INDEX items_reopened ON items(id) WHERE round > 1;

ALTER TABLE usage_shards ADD COLUMN judged bigint NOT NULL DEFAULT 0,
    ADD COLUMN generation_errors bigint NOT NULL DEFAULT 0,
    ADD COLUMN judge_errors bigint NOT NULL DEFAULT 0,
    ADD COLUMN human bigint NOT NULL DEFAULT 0;
UPDATE usage_shards u SET
    judged = (SELECT count(*) FROM attempts WHERE kind = 'judged'),
    generation_errors = (SELECT count(*) FROM attempts WHERE kind = 'generation_error')
WHERE u.shard = 0;
CREATE VIEW kind_counts AS
    SELECT k.kind, k.n FROM (
        SELECT sum(judged)::bigint AS judged, sum(generation_errors)::bigint AS generation_errors,
               sum(judge_errors)::bigint AS judge_errors, sum(human)::bigint AS human
        FROM usage_shards
    ) s CROSS JOIN LATERAL (VALUES ('judged', s.judged),
        ('generation_error', s.generation_errors), ('judge_error', s.judge_errors),
        ('human', s.human)) AS k(kind, n);

CREATE TABLE gate_count_shards (
    shard  smallint NOT NULL,
    digest text NOT NULL,
    n      bigint NOT NULL,
    PRIMARY KEY (shard, digest)
);
CREATE VIEW gate_counts AS
    SELECT digest, sum(n)::bigint AS n FROM gate_count_shards GROUP BY digest;

CREATE OR REPLACE FUNCTION items_count() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO state_count_shards AS c (shard, state, n)
        SELECT reins_shard(), state, count(*) FROM added GROUP BY state
        ON CONFLICT (shard, state) DO UPDATE SET n = c.n + excluded.n;
    INSERT INTO tries_count_shards AS c (shard, tries, n)
        SELECT reins_shard(), tries, count(*) FROM added GROUP BY tries
        ON CONFLICT (shard, tries) DO UPDATE SET n = c.n + excluded.n;
    INSERT INTO gate_count_shards AS c (shard, digest, n)
        SELECT reins_shard(), gate_digest, count(*) FROM added
        WHERE gate_digest IS NOT NULL GROUP BY gate_digest ORDER BY gate_digest COLLATE "C"
        ON CONFLICT (shard, digest) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END $$;

CREATE FUNCTION items_gate_recount() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO gate_count_shards AS c (shard, digest, n)
        SELECT reins_shard(), d, n FROM (VALUES (OLD.gate_digest, -1), (NEW.gate_digest, 1))
            AS v(d, n)
        WHERE d IS NOT NULL ORDER BY d COLLATE "C"
        ON CONFLICT (shard, digest) DO UPDATE SET n = c.n + excluded.n;
    RETURN NULL;
END $$;
CREATE TRIGGER items_gate_counted AFTER UPDATE OF gate_digest ON items FOR EACH ROW
    WHEN (OLD.gate_digest IS DISTINCT FROM NEW.gate_digest)
    EXECUTE FUNCTION items_gate_recount();

-- The ratchet. The trigger's WHEN is the cheap part (no subquery is allowed there): it lets
-- through every update that might be refused; the function decides, looking for the human
-- attempt at the new turn only when the move needs one.
DROP TRIGGER items_ratchet ON items;
CREATE FUNCTION items_ratchet() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF NEW.turns < OLD.turns OR NEW.round < OLD.round
       OR (NEW.tries < OLD.tries AND NEW.round = OLD.round)
       OR (NEW.round <> OLD.round
           AND NOT (NEW.round = OLD.round + 1 AND NEW.tries = 0 AND NEW.state = 'TODO'))
    THEN
        RAISE EXCEPTION 'reins ratchet: turns and rounds never go down, tries only into a new '
            'round, and a new round is the next one, TODO with no tries'
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF (OLD.state <> 'TODO' OR NEW.round <> OLD.round)
       AND (NEW.state <> OLD.state OR NEW.tries <> OLD.tries OR NEW.turns <> OLD.turns
            OR NEW.round <> OLD.round)
       AND NOT (NEW.turns = OLD.turns + 1 AND EXISTS (
           SELECT 1 FROM attempts
           WHERE item_id = NEW.id AND turn = NEW.turns AND kind = 'human'))
    THEN
        RAISE EXCEPTION 'reins ratchet: a terminal item moves only by a human attempt'
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER items_ratchet BEFORE UPDATE OF state, tries, turns, round ON items FOR EACH ROW
    WHEN (NEW.turns < OLD.turns OR NEW.tries < OLD.tries OR NEW.round <> OLD.round
          OR (OLD.state <> 'TODO' AND (NEW.state <> OLD.state OR NEW.tries <> OLD.tries
                                       OR NEW.turns <> OLD.turns)))
    EXECUTE FUNCTION items_ratchet();

DROP FUNCTION reins_turn;
DROP FUNCTION reins_append;
{_APPEND}
{_TURN}
"""
