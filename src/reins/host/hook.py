"""``reins hook stop``: Claude Code's Stop hook, so an agent cannot declare itself done.

Claude Code runs the hook when the agent wants to end its turn, with JSON on stdin
(``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``, ``stop_hook_active``).
Printing ``{"decision": "block", "reason": …}`` sends the agent back to work with the reason as
its next instruction; printing nothing lets it stop. :func:`decide` is the whole policy, a pure
function of the ledger's standing, the payload and the session's block count; :func:`stop`
reads and writes those. The hook never traps an agent: nothing left for it, a budget reached,
or too many blocks without progress lets the agent stop, and it never exits 2, which Claude
Code would read as a block. When it cannot read its quest or ledger, :func:`trouble` tells the
agent once, in a block's reason, and lets its continued stop go (with a message for the user).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from reins.store.model import Item, State
from reins.store.protocol import Store
from reins.store.query import PageQuery

COUNT = "agents.stop."  # + session id → "blocks turns": blocks in a row, ledger turns then
BOARD_LINES = 10


@dataclass(frozen=True, slots=True)
class Payload:
    """What Claude Code hands a Stop hook."""

    session_id: str
    stop_hook_active: bool = False
    transcript_path: str | None = None
    cwd: str | None = None
    hook_event_name: str = "Stop"

    @classmethod
    def parse(cls, text: str) -> Payload:
        """Raises ValueError: not a JSON object with a string ``session_id``."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"the hook's input is not JSON ({exc})") from None
        if not isinstance(data, dict) or not isinstance(data.get("session_id"), str):
            raise ValueError("the hook's input is not a JSON object with a session_id")
        return cls(
            session_id=data["session_id"],
            stop_hook_active=data.get("stop_hook_active") is True,
            transcript_path=_text(data.get("transcript_path")),
            cwd=_text(data.get("cwd")),
            hook_event_name=_text(data.get("hook_event_name")) or "Stop",
        )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class Standing:
    """The ledger as the hook sees it, for one driver."""

    total: int
    remaining: int
    free: int  # TODO items nobody holds a live lease on
    turns: int  # turns recorded in the ledger: progress is a new one
    mine: Item | None  # the item this driver holds
    board: tuple[str, ...]  # its item first, then the next items to do


@dataclass(frozen=True, slots=True)
class Blocks:
    """A session's blocks in a row without progress, and the ledger's turns at the last one."""

    count: int
    turns: int

    def dump(self) -> str:
        return f"{self.count} {self.turns}"

    @classmethod
    def load(cls, raw: str | None) -> Blocks | None:
        parts = (raw or "").split()
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            return None
        return cls(int(parts[0]), int(parts[1]))


@dataclass(frozen=True, slots=True)
class Decision:
    """Block (with the reason the agent reads) or allow (with why, for stderr)."""

    block: bool
    reason: str
    blocks: Blocks | None  # the session's count after this decision (None: cleared)


def decide(
    standing: Standing,
    payload: Payload,
    previous: Blocks | None,
    *,
    max_blocks: int,
    max_turns: int | None = None,
) -> Decision:
    """Whether the agent may stop now.

    It may when nothing is left, when what is left is all leased to other drivers, when the
    ledger holds ``max_turns`` turns, or after ``max_blocks`` blocks in a row without a new
    recorded turn while ``stop_hook_active`` says the agent is already running on a block.
    """
    s = standing
    if s.remaining == 0:
        return Decision(False, f"all {s.total} item(s) are locked: nothing left to do", None)
    if max_turns is not None and s.turns >= max_turns:
        why = f"the turn budget is reached ({s.turns} of hook_max_turns {max_turns} recorded)"
        return Decision(False, why, None)
    if s.mine is None and s.free == 0:
        why = f"the {s.remaining} item(s) left are all leased to other drivers"
        return Decision(False, why, None)
    # A continued stop (stop_hook_active) with no turn recorded since the last block counts;
    # a fresh stop, or any progress, starts the count again.
    stalled = payload.stop_hook_active and previous is not None and previous.turns == s.turns
    count = previous.count + 1 if stalled and previous is not None else 1
    if count > max_blocks:
        why = (
            f"blocked {max_blocks} time(s) in a row without a new recorded turn: letting the "
            f"agent stop with {s.remaining} item(s) left (hook_max_blocks)"
        )
        return Decision(False, why, None)
    if s.mine is not None:
        step = (
            f"Finish {s.mine.key!r} and submit it (MCP tool submit, or "
            f"`reins submit --key {s.mine.key}`); read the facts of a FAIL and submit again."
        )
    else:
        step = "Take the next item (MCP tool next_item, or `reins next`) and work it."
    reason = "\n".join(
        [
            f"reins: {s.remaining} of {s.total} item(s) are still to do, and you cannot declare "
            "them done: only the gate can, when a submission passes it.",
            *s.board,
            *(
                [f"… and {s.remaining - len(s.board)} more to do"]
                if s.remaining > len(s.board)
                else []
            ),
            f"Next: {step}",
            f"(stop hook: block {count} of {max_blocks} in a row without a new recorded turn; "
            f"after {max_blocks} it lets you stop.)",
        ]
    )
    return Decision(True, reason, Blocks(count, s.turns))


def standing(
    store: Store,
    driver: str | None,
    *,
    now: float | None = None,
    max_tries: int | None = None,
) -> Standing:
    """Read the ledger's standing for ``driver`` (None: an agent holding nothing);
    ``max_tries``: the quest's answers allowed, for the board (None: not known)."""
    from reins.host.session import held_by
    from reins.turn.views import board_lines

    t = time.time() if now is None else now
    stats = store.stats(now=t)
    mine = None if driver is None else held_by(store, driver, t)
    todo = [
        i
        for i in store.page(PageQuery(state=State.TODO, limit=BOARD_LINES)).items
        if mine is None or i.key != mine.key
    ]
    shown = ([mine] if mine is not None else []) + todo
    return Standing(
        total=stats.total,
        remaining=stats.remaining,
        free=max(0, stats.remaining - stats.leased),
        turns=stats.attempts,
        mine=mine,
        board=tuple(board_lines(shown[:BOARD_LINES], t, max_tries=max_tries)),
    )


def stop(
    store: Store,
    payload: Payload,
    driver: str | None,
    *,
    max_blocks: int,
    max_turns: int | None,
    max_tries: int | None = None,
) -> Decision:
    """Decide for this stop and keep the session's block count in the ledger."""
    key = COUNT + payload.session_id
    previous = Blocks.load(store.meta(key))
    decision = decide(
        standing(store, driver, max_tries=max_tries),
        payload,
        previous,
        max_blocks=max_blocks,
        max_turns=max_turns,
    )
    after = decision.blocks.dump() if decision.blocks is not None else ""
    if after != (store.meta(key) or ""):
        store.set_meta(key, after)
    return decision


TROUBLE = "reins: the stop hook cannot read its quest or ledger"


def trouble(cause: str, payload: Payload | None) -> Decision:
    """The hook of a project cannot read its quest or ledger (``cause``): tell the agent.

    A fresh stop is blocked once, with the cause as the agent's next instruction, since the
    agent may be the one to fix it (run ``reins scan``, fix reins.toml). The count of blocks in
    a row lives in the ledger that cannot be read, so ``stop_hook_active`` is the count: a stop
    that already runs on a block is let go, with the cause in ``reason`` for the user
    (:func:`notice_output`). One block per stop never exceeds ``hook_max_blocks`` (at least 1).
    Input that is not a payload (``payload`` None) is let go too: nothing says it is a fresh
    stop.
    """
    if payload is not None and not payload.stop_hook_active:
        reason = (
            f"{TROUBLE}: {cause}. Fix that (or tell the user what is wrong), then stop again; "
            "if you stop again without a fix, the hook lets you stop."
        )
        return Decision(True, reason, None)
    return Decision(False, f"{TROUBLE}: {cause}; it let the agent stop", None)


def block_output(decision: Decision) -> str:
    """What the hook prints on stdout to block: Claude Code's decision JSON."""
    return json.dumps({"decision": "block", "reason": decision.reason}, ensure_ascii=False)


def notice_output(message: str) -> str:
    """What the hook prints on stdout to let the agent stop with a message shown to the user
    (Claude Code's ``systemMessage``): a failure of its own is never only on stderr."""
    return json.dumps({"systemMessage": message}, ensure_ascii=False)
