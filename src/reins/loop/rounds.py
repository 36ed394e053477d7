"""A batch round's requests: each leased item's prompt composed from its log, and its custom id.

Compose is the loop's own (:func:`reins.turn.compose.compose`), a pure function of quest, item
and log, so the prompts of a round are byte for byte what ``reins next`` would print for each
item; the round only adds what the provider needs to send them back matched: a custom id.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from reins.backends.batch import BatchAPI, BatchLine
from reins.quest import Quest
from reins.store.jobs import BatchJob, BatchRequest
from reins.store.protocol import Store
from reins.turn.compose import compose

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]+")


def custom_id(tag: str, n: int, key: str, turn: int) -> str:
    """The custom id of request ``n`` of job ``tag``: the tag first (so a found batch's results
    say whose they are), then the item's key made safe and its turn, within Anthropic's
    ``^[a-zA-Z0-9_-]{1,64}$``. The ledger keeps the mapping; the key part is for people."""
    head, tail = f"{tag}-{n}-", f"-t{turn}"
    room = max(0, 64 - len(head) - len(tail))
    return f"{head}{_UNSAFE.sub('_', key)[:room]}{tail}"[:64]


def tag_of(custom_id: str) -> str:
    """The tag of the job that sent the request ``custom_id`` (what :func:`custom_id` put
    first)."""
    return custom_id.partition("-")[0]


def compose_round(
    store: Store,
    quest: Quest,
    api: BatchAPI,
    policy: str,
    job: BatchJob,
    keys: Sequence[str],
    *,
    taken: Collection[str] = (),
    max_items: int | None = None,
) -> tuple[list[BatchLine], list[BatchRequest]]:
    """The request of each item of ``keys`` (leased to ``job``), in their order (on the ledger
    thread).

    Items the round cannot send are given back to the pool: past the provider's limits on
    one batch (``api.max_requests``, ``api.max_bytes``), or new to the run (not in ``taken``)
    once it has taken ``max_items``.
    """
    lines: list[BatchLine] = []
    requests: list[BatchRequest] = []
    size, new = 0, set[str]()
    for n, key in enumerate(keys):
        if key not in taken:
            if max_items is not None and len(taken) + len(new) >= max_items:
                store.release(key, job.owner)
                continue
            new.add(key)
        item, log = store.snapshot(key)
        prompt = compose(quest, item, log, policy=policy)
        line = BatchLine(custom_id(job.tag, n, key, item.turns + 1), prompt, prompt.seed)
        size += api.size(line)
        if lines and (len(lines) >= api.max_requests or size > api.max_bytes):
            for rest in keys[n:]:
                store.release(rest, job.owner)
            break
        lines.append(line)
        requests.append(BatchRequest(line.custom_id, key, item.turns, prompt.digest(), prompt.seed))
    return lines, requests
