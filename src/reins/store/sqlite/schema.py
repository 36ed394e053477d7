"""The SQLite engine's schema, its version, and the migrations that reach it.

Migration N takes a ledger from version N-1 to N. A ledger newer than ``SCHEMA_VERSION`` is
refused, never touched. The triggers are the ratchet's second line of defence: even SQL written
by hand cannot move a terminal item, and the log is append-only.
"""

from __future__ import annotations

import sqlite3

from reins.errors import LedgerError

APPLICATION_ID = 0x5245494E  # "REIN": marks an SQLite file as a reins ledger
SCHEMA_VERSION = 5

_V1 = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE export_batches (
    id         INTEGER PRIMARY KEY,
    path       TEXT NOT NULL,
    offset     INTEGER NOT NULL,
    done       INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE INDEX export_batches_open ON export_batches(path) WHERE done = 0;

CREATE TABLE items (
    id            INTEGER PRIMARY KEY,
    key           TEXT NOT NULL UNIQUE,
    state         TEXT NOT NULL DEFAULT 'TODO'
                  CHECK (state IN ('TODO', 'PASS', 'REVIEW', 'DONE', 'SKIPPED', 'BLOCKED')),
    tries         INTEGER NOT NULL DEFAULT 0 CHECK (tries >= 0),
    turns         INTEGER NOT NULL DEFAULT 0 CHECK (turns >= 0),
    payload       TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    locked_at     TEXT,
    lease_owner   TEXT,
    lease_expires REAL,
    export_batch  INTEGER REFERENCES export_batches(id)
);
CREATE INDEX items_todo ON items(id) WHERE state = 'TODO';
CREATE INDEX items_unexported ON items(id) WHERE state != 'TODO' AND export_batch IS NULL;
CREATE INDEX items_batch ON items(export_batch) WHERE export_batch IS NOT NULL;
CREATE INDEX items_lease ON items(lease_owner) WHERE lease_owner IS NOT NULL;

CREATE TABLE attempts (
    id            INTEGER PRIMARY KEY,
    item_id       INTEGER NOT NULL REFERENCES items(id),
    turn          INTEGER NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('judged', 'generation_error')),
    driver        TEXT NOT NULL,
    state_after   TEXT NOT NULL,
    tries_after   INTEGER NOT NULL,
    outcome       TEXT,
    root_cause    TEXT,
    facts         TEXT,
    feedback      TEXT NOT NULL DEFAULT '',
    submission    TEXT,
    error         TEXT,
    policy        TEXT NOT NULL DEFAULT 'facts',
    backend       TEXT,
    prompt_digest TEXT,
    input_tokens  INTEGER,
    output_tokens INTEGER,
    cost          REAL,
    latency       REAL,
    started_at    TEXT,
    recorded_at   TEXT NOT NULL,
    extra         TEXT,
    UNIQUE (item_id, turn)
);

-- Counters kept by triggers so that status costs the same at 1k and 1M items.
CREATE TABLE state_counts (state TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE tries_counts (tries INTEGER PRIMARY KEY, n INTEGER NOT NULL);
CREATE TABLE rule_counts (
    rule  TEXT PRIMARY KEY,
    fired INTEGER NOT NULL DEFAULT 0,
    root  INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE TABLE usage_totals (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    attempts      INTEGER NOT NULL DEFAULT 0,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost          REAL NOT NULL DEFAULT 0
);
INSERT INTO usage_totals (id) VALUES (1);

CREATE TABLE drivers (
    name          TEXT PRIMARY KEY,
    nexts         INTEGER NOT NULL DEFAULT 0,
    last_seen     TEXT NOT NULL
) WITHOUT ROWID;

CREATE TRIGGER items_counted AFTER INSERT ON items BEGIN
    INSERT INTO state_counts (state, n) VALUES (NEW.state, 1)
        ON CONFLICT (state) DO UPDATE SET n = n + 1;
    INSERT INTO tries_counts (tries, n) VALUES (NEW.tries, 1)
        ON CONFLICT (tries) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER items_recounted AFTER UPDATE OF state, tries ON items
WHEN OLD.state != NEW.state OR OLD.tries != NEW.tries BEGIN
    UPDATE state_counts SET n = n - 1 WHERE state = OLD.state;
    INSERT INTO state_counts (state, n) VALUES (NEW.state, 1)
        ON CONFLICT (state) DO UPDATE SET n = n + 1;
    UPDATE tries_counts SET n = n - 1 WHERE tries = OLD.tries;
    INSERT INTO tries_counts (tries, n) VALUES (NEW.tries, 1)
        ON CONFLICT (tries) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER items_ratchet BEFORE UPDATE OF state, tries, turns ON items
WHEN (OLD.state != 'TODO' AND (NEW.state != OLD.state OR NEW.tries != OLD.tries
                                OR NEW.turns != OLD.turns))
  OR NEW.tries < OLD.tries OR NEW.turns < OLD.turns BEGIN
    SELECT RAISE(ABORT, 'reins ratchet: a terminal item cannot change');
END;

CREATE TRIGGER items_kept BEFORE DELETE ON items BEGIN
    SELECT RAISE(ABORT, 'reins ledger: items are never deleted');
END;

CREATE TRIGGER attempts_append_only_update BEFORE UPDATE ON attempts BEGIN
    SELECT RAISE(ABORT, 'reins ledger: the log is append-only');
END;

CREATE TRIGGER attempts_append_only_delete BEFORE DELETE ON attempts BEGIN
    SELECT RAISE(ABORT, 'reins ledger: the log is append-only');
END;
"""

# v2: the root cause of each item's last judged attempt, so items can be listed by rule
# through an index (``reins items --rule``) instead of a scan of the log.
_V2 = """
ALTER TABLE items ADD COLUMN root_cause TEXT;
UPDATE items SET root_cause = (
    SELECT a.root_cause FROM attempts a
    WHERE a.item_id = items.id AND a.kind = 'judged' ORDER BY a.turn DESC LIMIT 1
);
CREATE INDEX items_rule ON items(root_cause, id) WHERE root_cause IS NOT NULL;
CREATE INDEX items_state ON items(state, id);
"""

# v3: the human lane and the judge's own errors. Attempts gain the kinds judge_error and human
# (the table is rebuilt: SQLite cannot widen a CHECK), a person's action and note, the digest
# of the gate that judged, and the round; items gain their round, a lease token and the gate
# digest of their last judgment. The ratchet trigger now lets a terminal item move only by a
# person's recorded action, one attempt at a time, and tries go down only into a new round.
_V3 = """
CREATE TABLE attempts_v3 (
    id            INTEGER PRIMARY KEY,
    item_id       INTEGER NOT NULL REFERENCES items(id),
    turn          INTEGER NOT NULL,
    kind          TEXT NOT NULL
                  CHECK (kind IN ('judged', 'generation_error', 'judge_error', 'human')),
    driver        TEXT NOT NULL,
    state_after   TEXT NOT NULL,
    tries_after   INTEGER NOT NULL,
    outcome       TEXT,
    root_cause    TEXT,
    facts         TEXT,
    feedback      TEXT NOT NULL DEFAULT '',
    submission    TEXT,
    error         TEXT,
    policy        TEXT NOT NULL DEFAULT 'facts',
    backend       TEXT,
    prompt_digest TEXT,
    input_tokens  INTEGER,
    output_tokens INTEGER,
    cost          REAL,
    latency       REAL,
    started_at    TEXT,
    recorded_at   TEXT NOT NULL,
    extra         TEXT,
    gate_digest   TEXT,
    action        TEXT,
    note          TEXT,
    round         INTEGER NOT NULL DEFAULT 1,
    UNIQUE (item_id, turn)
);
INSERT INTO attempts_v3 (id, item_id, turn, kind, driver, state_after, tries_after, outcome,
    root_cause, facts, feedback, submission, error, policy, backend, prompt_digest,
    input_tokens, output_tokens, cost, latency, started_at, recorded_at, extra)
SELECT id, item_id, turn, kind, driver, state_after, tries_after, outcome, root_cause, facts,
    feedback, submission, error, policy, backend, prompt_digest, input_tokens, output_tokens,
    cost, latency, started_at, recorded_at, extra FROM attempts;
DROP TABLE attempts;
ALTER TABLE attempts_v3 RENAME TO attempts;

CREATE TRIGGER attempts_append_only_update BEFORE UPDATE ON attempts BEGIN
    SELECT RAISE(ABORT, 'reins ledger: the log is append-only');
END;

CREATE TRIGGER attempts_append_only_delete BEFORE DELETE ON attempts BEGIN
    SELECT RAISE(ABORT, 'reins ledger: the log is append-only');
END;

ALTER TABLE items ADD COLUMN round INTEGER NOT NULL DEFAULT 1 CHECK (round >= 1);
ALTER TABLE items ADD COLUMN lease_token TEXT;
ALTER TABLE items ADD COLUMN gate_digest TEXT;
CREATE INDEX items_reopened ON items(id) WHERE round > 1;

-- Attempts per kind ride on the usage row a turn updates anyway (no extra statement per turn);
-- the view turns them into rows.
ALTER TABLE usage_totals ADD COLUMN judged INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_totals ADD COLUMN generation_errors INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_totals ADD COLUMN judge_errors INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_totals ADD COLUMN human INTEGER NOT NULL DEFAULT 0;
UPDATE usage_totals SET
    judged = (SELECT count(*) FROM attempts WHERE kind = 'judged'),
    generation_errors = (SELECT count(*) FROM attempts WHERE kind = 'generation_error');
CREATE VIEW kind_counts (kind, n) AS
    SELECT 'judged', judged FROM usage_totals
    UNION ALL SELECT 'generation_error', generation_errors FROM usage_totals
    UNION ALL SELECT 'judge_error', judge_errors FROM usage_totals
    UNION ALL SELECT 'human', human FROM usage_totals;

CREATE TABLE gate_counts (digest TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;

CREATE TRIGGER items_gate_counted AFTER UPDATE OF gate_digest ON items
WHEN OLD.gate_digest IS NOT NEW.gate_digest BEGIN
    UPDATE gate_counts SET n = n - 1 WHERE digest = OLD.gate_digest;
    INSERT INTO gate_counts (digest, n) SELECT NEW.gate_digest, 1
        WHERE NEW.gate_digest IS NOT NULL
        ON CONFLICT (digest) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER items_gate_inserted AFTER INSERT ON items WHEN NEW.gate_digest IS NOT NULL BEGIN
    INSERT INTO gate_counts (digest, n) VALUES (NEW.gate_digest, 1)
        ON CONFLICT (digest) DO UPDATE SET n = n + 1;
END;

DROP TRIGGER items_ratchet;
CREATE TRIGGER items_ratchet BEFORE UPDATE OF state, tries, turns, round ON items
WHEN NEW.turns < OLD.turns OR NEW.round < OLD.round
  OR (NEW.tries < OLD.tries AND NEW.round = OLD.round)
  OR (NEW.round != OLD.round
      AND NOT (NEW.round = OLD.round + 1 AND NEW.tries = 0 AND NEW.state = 'TODO'))
  OR ((OLD.state != 'TODO' OR NEW.round != OLD.round)
      AND (NEW.state != OLD.state OR NEW.tries != OLD.tries OR NEW.turns != OLD.turns
           OR NEW.round != OLD.round)
      AND NOT (NEW.turns = OLD.turns + 1 AND EXISTS (
          SELECT 1 FROM attempts WHERE item_id = NEW.id AND turn = NEW.turns AND kind = 'human'
      ))) BEGIN
    SELECT RAISE(ABORT, 'reins ratchet: a terminal item moves only by a human attempt');
END;
"""

# v4: cached tokens, batch prices and batch jobs. Attempts gain the tokens the provider's prompt
# cache read and wrote, whether the call went through a batch API, and what the same tokens
# cost at list price; the kept totals gain the same (a turn before v4 cost its list price).
# batch_jobs and batch_requests keep what a batch round sent (reins.store.jobs).
_V4 = """
ALTER TABLE attempts ADD COLUMN cache_read_tokens INTEGER;
ALTER TABLE attempts ADD COLUMN cache_write_tokens INTEGER;
ALTER TABLE attempts ADD COLUMN batch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN list_cost REAL;

ALTER TABLE usage_totals ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_totals ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_totals ADD COLUMN batch_cost REAL NOT NULL DEFAULT 0;
ALTER TABLE usage_totals ADD COLUMN list_cost REAL NOT NULL DEFAULT 0;
UPDATE usage_totals SET list_cost = cost;

CREATE TABLE batch_jobs (
    id          INTEGER PRIMARY KEY,
    tag         TEXT NOT NULL UNIQUE,
    backend     TEXT NOT NULL,
    model       TEXT NOT NULL,
    driver      TEXT NOT NULL,
    state       TEXT NOT NULL CHECK (state IN ('leased', 'composed', 'uploaded', 'sent',
                                               'collected', 'cancelled', 'discarded')),
    requests    INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    expires_at  REAL NOT NULL,
    composed_at REAL,
    file_id     TEXT,
    batch_id    TEXT,
    note        TEXT,
    holder      TEXT,
    held_until  REAL
);
CREATE INDEX batch_jobs_open ON batch_jobs(id)
    WHERE state NOT IN ('collected', 'cancelled', 'discarded');

CREATE TABLE batch_requests (
    job_id        INTEGER NOT NULL REFERENCES batch_jobs(id),
    custom_id     TEXT NOT NULL,
    key           TEXT NOT NULL,
    turns         INTEGER NOT NULL,
    prompt_digest TEXT NOT NULL,
    seed          INTEGER NOT NULL,
    PRIMARY KEY (job_id, custom_id)
) WITHOUT ROWID;
"""

# v5: search and the reviewer's desk. Two FTS5 tables hold the words of each item's key and
# payload and of each turn's submission and facts (contentless: the words only, not the text a
# second time; no positions: a search names words, not phrases), filled by triggers as items
# are added and turns recorded, over the first 100,000 characters of each text
# (reins.store.search.INDEXED). A partial index finds a person's actions, newest first.
_V5 = """
CREATE VIRTUAL TABLE item_words USING fts5(
    body, content='', detail=none, columnsize=0, tokenize='unicode61 remove_diacritics 0'
);
CREATE VIRTUAL TABLE turn_words USING fts5(
    body, content='', detail=none, columnsize=0, tokenize='unicode61 remove_diacritics 0'
);
INSERT INTO item_words (rowid, body)
    SELECT id, substr(key || ' ' || coalesce(payload, ''), 1, 100000) FROM items;
INSERT INTO turn_words (rowid, body)
    SELECT id, substr(coalesce(submission, '') || ' ' || coalesce(facts, ''), 1, 100000)
    FROM attempts WHERE submission IS NOT NULL OR facts IS NOT NULL;

CREATE TRIGGER items_worded AFTER INSERT ON items BEGIN
    INSERT INTO item_words (rowid, body)
        VALUES (NEW.id, substr(NEW.key || ' ' || coalesce(NEW.payload, ''), 1, 100000));
END;

CREATE TRIGGER attempts_worded AFTER INSERT ON attempts
WHEN NEW.submission IS NOT NULL OR NEW.facts IS NOT NULL BEGIN
    INSERT INTO turn_words (rowid, body) VALUES (NEW.id,
        substr(coalesce(NEW.submission, '') || ' ' || coalesce(NEW.facts, ''), 1, 100000));
END;

CREATE INDEX attempts_human ON attempts(id) WHERE kind = 'human';
"""

MIGRATIONS: dict[int, str] = {1: _V1, 2: _V2, 3: _V3, 4: _V4, 5: _V5}


def statements(script: str, name: str = "a migration") -> list[str]:
    """The statements of migration script ``name``, comment lines left out.

    Raises:
        LedgerError: the script ends with an incomplete statement.
    """
    out, buffer = [], ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            out.append(buffer)
            buffer = ""
    if buffer.strip():
        raise LedgerError(f"{name} ends with an incomplete statement")
    return out


def run_script(conn: sqlite3.Connection, version: int) -> None:
    """Run migration ``version`` inside the caller's transaction, statement by statement."""
    # executescript would COMMIT the surrounding transaction.
    for statement in statements(MIGRATIONS[version], f"migration {version}"):
        conn.execute(statement)
