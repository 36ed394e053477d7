"""The PostgreSQL engine's migration 5: a turn is one statement, checked on the server.

``reins_turn`` is made again to take the draft and the claim instead of what the client had
decided: it locks the item by its key, refuses the turn when the ratchet or the claim does not
allow it (the rules of :func:`reins.store.ratchet.admit`: a machine's turn on a locked item, a
person's action that does not fit it, another holder's live lease, a stale lease token, a turn
count that moved, tries going down), and otherwise works out the item after the turn (the rules
of :func:`reins.store.ratchet.apply`) and writes it, the attempt, the counters and a withdrawal
owed, all in the one statement that the client sends in autocommit: one round trip, one commit.
It returns the item as it was before the turn and whether it wrote: the client builds the same
item and attempt from it with ``apply``, and on a refusal runs ``admit`` on it, so that the
error raised and its words are the ones both engines share. No table changes, so a ledger at
version 4 and one at 5 hold the same relations.
"""

from __future__ import annotations

# The item's columns as the turn returns them (reins.store.codec.ITEM_COLUMNS order, then id).
_ITEM = """
    r_key text, r_state text, r_tries integer, r_payload text, r_turns integer,
    r_created_at text, r_updated_at text, r_locked_at text, r_lease_owner text,
    r_lease_expires double precision, r_export_batch bigint, r_root_cause text,
    r_round integer, r_lease_token text, r_gate_digest text, r_id bigint, r_written boolean
"""

TURN = f"""
CREATE FUNCTION reins_turn(
    p_key text, p_turns integer, p_holder text, p_token text, p_now double precision,
    p_delta integer, p_new_round boolean, p_owe text,
    p_kind text, p_driver text, p_state text, p_outcome text, p_root_cause text, p_facts text,
    p_feedback text, p_submission text, p_error text, p_policy text, p_backend text,
    p_prompt_digest text, p_input_tokens bigint, p_output_tokens bigint,
    p_cost double precision, p_latency double precision, p_started_at text,
    p_recorded_at text, p_extra text, p_gate_digest text, p_action text, p_note text,
    p_cache_read_tokens bigint, p_cache_write_tokens bigint, p_batch boolean,
    p_list_cost double precision, p_rules text
) RETURNS TABLE ({_ITEM}) LANGUAGE plpgsql AS $$
DECLARE
    i items%ROWTYPE;
    v_rules text[] := '{{}}';
    v_fired bigint[] := '{{}}';
    v_roots bigint[] := '{{}}';
    human boolean := p_kind = 'human';
    live boolean;
    keep boolean;
    judged boolean;
    v_tries integer;
    v_round integer;
BEGIN
    SELECT * INTO i FROM items WHERE items.key = p_key FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;  -- no row: no such item
    END IF;
    live := i.lease_owner IS NOT NULL AND coalesce(i.lease_expires, 0) > p_now;
    IF (i.state <> 'TODO' AND NOT human)
       OR (human AND i.state = 'TODO')
       OR (human AND p_action IN ('accept', 'reject') AND i.state <> 'REVIEW')
       OR (live AND i.lease_owner <> p_holder)
       OR (p_token IS NOT NULL AND live AND i.lease_token IS DISTINCT FROM p_token)
       OR i.turns <> p_turns
       OR p_delta < 0
    THEN
        r_written := false;  -- refused: the client says why, from the row
    ELSE
        v_tries := CASE WHEN p_new_round THEN 0 ELSE i.tries + p_delta END;
        v_round := CASE WHEN p_new_round THEN i.round + 1 ELSE i.round END;
        keep := p_state = 'TODO' AND NOT human AND i.lease_owner IS NOT DISTINCT FROM p_holder;
        judged := p_kind = 'judged' OR (human AND p_outcome IS NOT NULL);
        IF i.export_batch IS NOT NULL AND i.state <> 'TODO' AND (human OR p_state <> 'TODO')
        THEN
            -- a withdrawal owed to the file the lock went to, read before its mark goes
            -- (reins.store.withdrawal.owed: a person moved an exported lock)
            INSERT INTO meta (key, value) SELECT p_owe, b.path FROM export_batches b
                WHERE b.id = i.export_batch
                ON CONFLICT (key) DO UPDATE SET value = excluded.value;
        END IF;
        IF p_rules IS NOT NULL THEN  -- [[rule, fired, root], ...]: one text, not 3 arrays
            SELECT array_agg(e->>0 ORDER BY n), array_agg((e->>1)::bigint ORDER BY n),
                   array_agg((e->>2)::bigint ORDER BY n)
            INTO v_rules, v_fired, v_roots
            FROM json_array_elements(p_rules::json) WITH ORDINALITY AS r(e, n);
        END IF;
        PERFORM reins_append(i.id, i.turns + 1, p_kind, p_driver, p_state, v_tries,
            p_outcome, p_root_cause, p_facts, p_feedback, p_submission, p_error, p_policy,
            p_backend, p_prompt_digest, p_input_tokens, p_output_tokens, p_cost, p_latency,
            p_started_at, p_recorded_at, p_extra, p_gate_digest, p_action, p_note, v_round,
            p_cache_read_tokens, p_cache_write_tokens, p_batch, p_list_cost,
            v_rules, v_fired, v_roots);
        UPDATE items SET state = p_state, tries = v_tries, turns = i.turns + 1,
            updated_at = p_recorded_at,
            locked_at = CASE WHEN p_state <> 'TODO' THEN p_recorded_at END,
            lease_owner = CASE WHEN keep THEN i.lease_owner END,
            lease_expires = CASE WHEN keep THEN i.lease_expires END,
            root_cause = CASE WHEN judged THEN p_root_cause ELSE i.root_cause END,
            round = v_round,
            lease_token = CASE WHEN keep THEN i.lease_token END,
            gate_digest = CASE WHEN judged THEN p_gate_digest ELSE i.gate_digest END,
            export_batch = CASE WHEN NOT human AND p_state = 'TODO' THEN i.export_batch END
        WHERE id = i.id;
        IF p_kind = 'judged' THEN
            UPDATE drivers SET nexts = 0 WHERE name = p_holder;
        END IF;
        r_written := true;
    END IF;
    RETURN QUERY SELECT i.key, i.state, i.tries, i.payload, i.turns, i.created_at,
        i.updated_at, i.locked_at, i.lease_owner, i.lease_expires, i.export_batch,
        i.root_cause, i.round, i.lease_token, i.gate_digest, i.id, r_written;
END $$;
"""

# DROP ... IF EXISTS: a ledger whose version was set back by hand from 5 to 4 holds the same
# tables, so it passes the shape check and is migrated again.
V5 = f"""
DROP FUNCTION IF EXISTS reins_turn;
{TURN}
"""
