"""Export: every terminal item reaches a JSONL file exactly once, across crashes and processes.

The marks below say which locks went out, once; a file that may lack some of them (new, deleted,
cut, or one another export went to since) is read, and gets what it lacks
(:mod:`reins.store.reconcile`), so every file exported to holds each lock once.

A batch is claimed in the ledger (items marked, the file offset noted) before its lines are
appended, and finished after they are on disk. A process that dies in between leaves an open
batch; the next export to that file cuts the file back to the noted offset and writes the batch
again. Appends to one file are serialised by an exclusive ``flock`` on the file, so nothing else
can write past the offset of an open batch.

A lock no attempt produced is refused (an item moved by hand-written SQL, or by a forged attempt
row: :mod:`reins.store.provenance`). Its export mark stays unset, and the claim's own query
passes over it, so:

- it is never written later as if sound: every export asks again, and no machine can change a
  locked item, so it stays refused until a person acts (only a log forged whole, attempt rows
  that follow the tables and an item that follows from them, would pass; a re-judge is what
  tells that one);
- it holds up no other item: it is never claimed, so no batch fills up with it;
- a person's reopen returns it to TODO owing no withdrawal (the file never held it), and its
  next real lock is exported like any other; a person's re-judge that locks it records the
  attempt that produces its lock, and exports it so.

Marking it instead would have said "exported" of a record no file holds, and made the reopen owe
the file a withdrawal of a lock it never had. An item that a person reopened with its lock in
the file and that was then locked no attempt's way keeps its owed withdrawal (the file's record
is withdrawn once it is reopened again: :mod:`reins.store.withdrawal`). Each export returns the
refused locks (:class:`Exported`) for the command that exported to say, and ``reins ledger
check`` lists them.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reins.errors import LedgerError
from reins.store.model import ExportClaim, ExportEntry
from reins.store.protocol import Store
from reins.values import readable_json

if TYPE_CHECKING:
    from reins.store.lockfault import LockFault

BATCH_SIZE = 1_000
# Meta keys (:mod:`reins.store.reconcile`): the token the last export wrote, before its claims
# and again (a fresh one) after them when another export ran meanwhile; by path, the token a
# file's last export found unchanged after its claims, and the size it left the file at.
LAST, SEEN, END = "export.last", "export.seen.", "export.end."
SHOWN = 10  # refused locks a message names; the JSON and ``reins ledger check`` name them all


@dataclass(frozen=True, slots=True)
class Exported:
    """What an export did: how many records it wrote, and the locks it refused to write (each
    a lock no attempt produced). Exports add up, into a run's total."""

    count: int = 0
    refused: tuple[LockFault, ...] = ()

    def __add__(self, other: Exported) -> Exported:
        faults = {f.key: f for f in (*self.refused, *other.refused)}
        return Exported(self.count + other.count, tuple(faults.values()))

    def refusal(self) -> str | None:
        """What the command that exported says of the refused locks (None: there were none)."""
        if not self.refused:
            return None
        lines = [f"  {f.words()}" for f in self.refused[:SHOWN]]
        if len(self.refused) > SHOWN:
            lines.append(f"  and {len(self.refused) - SHOWN} more")
        return (
            f"export refused {len(self.refused)} locked item(s) whose lock no attempt produced; "
            "`reins ledger check` lists them:\n" + "\n".join(lines)
        )


def record_of(entry: ExportEntry) -> dict[str, Any]:
    """The JSONL record of a terminal item (the shape is documented in docs/ledger.md).

    An item a coding agent worked in a workspace also has ``workspace``: the branch that holds
    its change, the commit on it, the base commit, the patch from the base (the whole patch the
    gate judged, read at the span the attempt's notes give) and the sandbox the agent ran in
    (``none``: unconfined).
    """
    item, attempt = entry.item, entry.attempt
    record = {
        "key": item.key,
        "state": item.state.value,
        "tries": item.tries,
        "turns": item.turns,
        "outcome": attempt.outcome if attempt else None,
        "root_cause": attempt.root_cause if attempt else None,
        "facts": [f.to_dict() for f in attempt.facts] if attempt else [],
        "submission": attempt.submission if attempt else None,
        "driver": attempt.driver if attempt else None,
        "round": item.round,
        "action": attempt.action if attempt else None,
        "note": attempt.note if attempt else None,
        "locked_at": item.locked_at,
        "payload": item.payload,
    }
    notes = attempt.notes if attempt else None
    if notes is not None and notes.branch:
        from reins.workspace.submission import patch_at

        submission = attempt.submission if attempt else None
        record["workspace"] = {
            "branch": notes.branch,
            "commit": notes.commit,
            "base": notes.base,
            "patch": patch_at(submission, notes.patch_start, notes.patch_end),
            "sandbox": notes.sandbox,
        }
    return record


def export(store: Store, out: str | os.PathLike[str]) -> Exported:
    """Append to ``out`` every lock it does not hold, and the withdrawal of each lock it holds
    that a person moved back to TODO, each once, but the locks no attempt produced; returns
    how many records it wrote, and the locks it refused.

    The claims write what was not exported yet; a file that may lack more (new, deleted, cut,
    or exported to by another export since its last) is read, and gets what it lacks
    (:mod:`reins.store.reconcile`). Also finishes batches that a crashed process left open,
    for ``out`` and for any other file that no live process is writing.
    """
    target = Path(out).resolve()
    try:
        return _export(store, target)
    except OSError as exc:  # a full or read-only disk: what was written is whole (_append)
        raise LedgerError(
            f"cannot write export file {target}: {exc.strerror or exc}; nothing torn was "
            "left in it, and the next export writes what this one could not"
        ) from None


def _export(store: Store, target: Path) -> Exported:
    path, count = str(target), 0
    with _locked(target, wait=True) as fd:
        _recover(store, path, fd)
        _mend(target, fd)
        end, size, last = store.meta(END + path), os.fstat(fd).st_size, store.meta(LAST)
        whole = end is not None and size >= int(end) and last == store.meta(SEEN + path)
        read = not whole and not (size == 0 and _untouched(store))
        token = os.urandom(8).hex()
        store.set_meta(LAST, token)  # before the claims: any other file's next export reads it
        count += _claim_all(store, path, fd)
        if read:
            count += _append_lacking(store, target, fd)
        if store.meta(LAST) == token:
            store.set_meta(SEEN + path, token)  # no other export claimed meanwhile
        else:  # one did: this file may lack its claims, and it ours
            store.set_meta(LAST, os.urandom(8).hex())
        if str(os.fstat(fd).st_size) != end:
            store.set_meta(END + path, str(os.fstat(fd).st_size))
    for other in store.open_export_paths():
        if other != path:
            _recover_elsewhere(store, other)
    return Exported(count, tuple(store.refused_locks()))


def _claim_all(store: Store, path: str, fd: int) -> int:
    """Claim, write and finish every lock not exported yet, and every withdrawal owed to
    ``path``, a batch at a time; how many records."""
    count = 0
    while True:
        batch = store.claim_export(path, os.fstat(fd).st_size, BATCH_SIZE)
        if batch is None:
            return count
        _write(fd, batch)
        store.finish_export(batch.id)
        count += len(batch.entries)
        if len(batch.entries) < BATCH_SIZE:
            return count  # a short batch took every pending item: no need to ask again


def _untouched(store: Store) -> bool:
    """Whether no lock was ever exported (none marked, no batch open): an empty file then lacks
    nothing the claims do not write."""
    return not store.open_export_paths() and store.exported_count() == 0


def _append_lacking(store: Store, target: Path, fd: int) -> int:
    """Append what the file lacks (:func:`reins.store.reconcile.lacking`); how many records."""
    from reins.store import reconcile  # only for a file the marks do not speak for

    data, count = bytearray(), 0
    for entry in reconcile.lacking(store, target):
        data += _line(record_of(entry))
        count += 1
        if len(data) >= 1 << 20:
            _append(fd, bytes(data))
            data.clear()
    if count:
        _append(fd, bytes(data))
    return count


def _recover(store: Store, path: str, fd: int) -> None:
    for batch in store.open_exports(path):
        # Only cut what a dead writer appended; a file someone shortened is left as it is.
        if os.fstat(fd).st_size > batch.offset:
            os.ftruncate(fd, batch.offset)
        _write(fd, batch)
        store.finish_export(batch.id)


def _mend(target: Path, fd: int) -> None:
    """End the file's last line before anything is appended: a line a crash cut short (it
    reads as no JSON: a record is written whole or not at all) is cut off; any other line
    without its newline gets one."""
    size = os.fstat(fd).st_size
    if size == 0:
        return
    with target.open("rb") as f:
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return
        start = size
        while start > 0:  # back to the start of the last line
            step = max(0, start - (1 << 16))
            f.seek(step)
            newline = f.read(start - step).rfind(b"\n")
            if newline >= 0:
                start = step + newline + 1
                break
            start = step
        f.seek(start)
        tail = f.read()
    try:
        json.loads(tail)
    except ValueError:
        os.ftruncate(fd, start)
        return
    _append(fd, b"\n")


def _recover_elsewhere(store: Store, path: str) -> None:
    try:
        with _locked(Path(path), wait=False) as fd:
            _recover(store, path, fd)
    except BlockingIOError:
        pass  # a live process holds that file; it finishes its own batch
    except OSError:
        pass  # the file's folder is gone or unwritable; the batch stays open for later


def _write(fd: int, batch: ExportClaim) -> None:
    _append(fd, b"".join(_line(record_of(entry)) for entry in batch.entries))


def _append(fd: int, data: bytes) -> None:
    """Append ``data`` (whole lines) to the file, or, when the disk refuses (full, read-only),
    none of it: a line cut short would stand in the file until the next export."""
    start = os.fstat(fd).st_size
    view = memoryview(data)
    try:
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    except OSError:
        os.ftruncate(fd, start)  # a shrink needs no room
        raise


def _line(record: dict[str, Any]) -> bytes:
    return (readable_json(record) + "\n").encode()


@contextmanager
def _locked(path: Path, *, wait: bool) -> Iterator[int]:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # 0600: results may hold personal data taken from the inputs.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError as exc:
        if not wait:
            raise
        raise LedgerError(f"cannot write export file {path}: {exc.strerror or exc}") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield fd
    finally:
        os.close(fd)  # closing releases the lock
