"""The PostgreSQL engine's migration 7: a person drops an item (issue 39).

``reins_turn`` is made again, as migration 5 made it, but for one rule: a person's action on a
TODO item is refused unless it is a ``drop`` (turn.md's human table: a drop retires an item to
do or locked, DONE with the person's note), as :func:`reins.store.ratchet.admit` refuses it.
No table changes.
"""

from __future__ import annotations

from reins.store.postgres.schema_v5 import TURN

_REFUSED = "OR (human AND i.state = 'TODO')"
if TURN.count(_REFUSED) != 1:  # pragma: no cover - a change to migration 5's text
    raise AssertionError("schema v7: migration 5's turn no longer refuses a person's TODO turn")

V7 = f"""
DROP FUNCTION IF EXISTS reins_turn;
{TURN.replace(_REFUSED, "OR (human AND i.state = 'TODO' AND p_action IS DISTINCT FROM 'drop')")}
"""
