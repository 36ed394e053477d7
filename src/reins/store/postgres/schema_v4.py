"""The PostgreSQL engine's migration 4: cached tokens, batch prices and batch jobs.

Attempts gain the tokens the provider's prompt cache read and wrote, whether the call went
through a batch API and what the same tokens cost at list price; the sharded usage rows gain
the same totals (a turn before v4 cost its list price), and ``usage_totals`` adds them up. The
server-side functions that write a turn are made again with the new columns. ``batch_jobs``
and ``batch_requests`` keep what a batch round sent (:mod:`reins.store.jobs`), as in SQLite.
"""

from __future__ import annotations

# The writes of a turn as of v4: v3's, the attempt's columns (reins.store.codec.ATTEMPT_COLUMNS
# order) gaining the cache and batch columns, which the sharded totals add up.
_APPEND = """
CREATE FUNCTION reins_append(
    p_item bigint, p_turn integer, p_kind text, p_driver text, p_state_after text,
    p_tries_after integer, p_outcome text, p_root_cause text, p_facts text, p_feedback text,
    p_submission text, p_error text, p_policy text, p_backend text, p_prompt_digest text,
    p_input_tokens bigint, p_output_tokens bigint, p_cost double precision,
    p_latency double precision, p_started_at text, p_recorded_at text, p_extra text,
    p_gate_digest text, p_action text, p_note text, p_round integer,
    p_cache_read_tokens bigint, p_cache_write_tokens bigint, p_batch boolean,
    p_list_cost double precision,
    p_rules text[], p_fired bigint[], p_roots bigint[]
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    s smallint := reins_shard();
BEGIN
    INSERT INTO attempts (item_id, turn, kind, driver, state_after, tries_after, outcome,
        root_cause, facts, feedback, submission, error, policy, backend, prompt_digest,
        input_tokens, output_tokens, cost, latency, started_at, recorded_at, extra,
        gate_digest, action, note, round, cache_read_tokens, cache_write_tokens, batch,
        list_cost)
    VALUES (p_item, p_turn, p_kind, p_driver, p_state_after, p_tries_after, p_outcome,
        p_root_cause, p_facts, p_feedback, p_submission, p_error, p_policy, p_backend,
        p_prompt_digest, p_input_tokens, p_output_tokens, p_cost, p_latency, p_started_at,
        p_recorded_at, p_extra, p_gate_digest, p_action, p_note, p_round,
        p_cache_read_tokens, p_cache_write_tokens, p_batch, p_list_cost);
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
        human = human + (p_kind = 'human')::integer,
        cache_read_tokens = cache_read_tokens + coalesce(p_cache_read_tokens, 0),
        cache_write_tokens = cache_write_tokens + coalesce(p_cache_write_tokens, 0),
        batch_cost = batch_cost + CASE WHEN p_batch THEN coalesce(p_cost, 0) ELSE 0 END,
        list_cost = list_cost + coalesce(p_list_cost, p_cost, 0)
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
    p_cache_read_tokens bigint, p_cache_write_tokens bigint, p_batch boolean,
    p_list_cost double precision,
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
        p_cache_read_tokens, p_cache_write_tokens, p_batch, p_list_cost,
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

V4 = f"""
ALTER TABLE attempts ADD COLUMN cache_read_tokens bigint,
    ADD COLUMN cache_write_tokens bigint, ADD COLUMN batch boolean NOT NULL DEFAULT false,
    ADD COLUMN list_cost double precision;

ALTER TABLE usage_shards ADD COLUMN cache_read_tokens bigint NOT NULL DEFAULT 0,
    ADD COLUMN cache_write_tokens bigint NOT NULL DEFAULT 0,
    ADD COLUMN batch_cost double precision NOT NULL DEFAULT 0,
    ADD COLUMN list_cost double precision NOT NULL DEFAULT 0;
UPDATE usage_shards SET list_cost = cost;
DROP VIEW usage_totals;
CREATE VIEW usage_totals AS
    SELECT 1 AS id, sum(attempts)::bigint AS attempts, sum(input_tokens)::bigint AS input_tokens,
           sum(output_tokens)::bigint AS output_tokens, sum(cost) AS cost,
           sum(cache_read_tokens)::bigint AS cache_read_tokens,
           sum(cache_write_tokens)::bigint AS cache_write_tokens,
           sum(batch_cost) AS batch_cost, sum(list_cost) AS list_cost
    FROM usage_shards;

CREATE TABLE batch_jobs (
    id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    tag         text NOT NULL UNIQUE,
    backend     text NOT NULL,
    model       text NOT NULL,
    driver      text NOT NULL,
    state       text NOT NULL CHECK (state IN ('leased', 'composed', 'uploaded', 'sent',
                                               'collected', 'cancelled', 'discarded')),
    requests    integer NOT NULL DEFAULT 0,
    created_at  text NOT NULL,
    updated_at  text NOT NULL,
    expires_at  double precision NOT NULL,
    composed_at double precision,
    file_id     text,
    batch_id    text,
    note        text,
    holder      text,
    held_until  double precision
);
CREATE INDEX batch_jobs_open ON batch_jobs(id)
    WHERE state NOT IN ('collected', 'cancelled', 'discarded');

CREATE TABLE batch_requests (
    job_id        bigint NOT NULL REFERENCES batch_jobs(id),
    custom_id     text NOT NULL,
    key           text NOT NULL,
    turns         integer NOT NULL,
    prompt_digest text NOT NULL,
    seed          bigint NOT NULL,
    PRIMARY KEY (job_id, custom_id)
);

DROP FUNCTION reins_turn;
DROP FUNCTION reins_append;
{_APPEND}
{_TURN}
"""
