"""The PostgreSQL engine's migration 6: search and the reviewer's desk.

``reins_words`` is the one spelling of an item's searchable words (:mod:`reins.store.search`):
the first 100,000 characters of a text, each run of other characters than letters and digits
made a space (so that a word is what SQLite's FTS5 tokenizer makes of it, not an e-mail address
or a URL that PostgreSQL's parser keeps whole), as a ``tsvector`` of the ``simple``
configuration (lower case, no stemming, no stop words). Two GIN indexes over it, one on each
item's key and payload and one on each turn's submission and facts, answer a search; the
engine's query spells the same expressions, so the planner matches them. A partial index
finds a person's actions, newest first. No table changes.
"""

from __future__ import annotations

V6 = """
CREATE FUNCTION reins_words(doc text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURNS NULL ON NULL INPUT
    AS $$ SELECT pg_catalog.to_tsvector('pg_catalog.simple'::pg_catalog.regconfig,
        pg_catalog.regexp_replace(pg_catalog.left(doc, 100000), '[^[:alnum:]]+', ' ', 'g')) $$;
CREATE INDEX items_words ON items USING gin (reins_words(key || ' ' || coalesce(payload, '')));
CREATE INDEX attempts_words ON attempts
    USING gin (reins_words(coalesce(submission, '') || ' ' || coalesce(facts, '')));
CREATE INDEX attempts_human ON attempts(id) WHERE kind = 'human';
"""
