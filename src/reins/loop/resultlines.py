"""What a batch's results files hold beyond one result per request: sorted, counted and worded.

A results file may repeat a custom id (the first result of it is recorded, each repeat counted),
hold results for requests the job never sent (custom ids it does not hold), and lines that are
no result at all: *malformed* (not JSON, or no custom id) or *cut off* (the JSON stops before
its value ends: the file was truncated there). Each kind is counted in the job's closing note
and reported once per job (:class:`reins.loop.events.ResultsEvent`, a ``batch_results`` event
under ``--json``); a request left without a result whose line could not be read is recorded
as a generation error that says which line, not as "no result".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reins.backends.batch import BadLine, BatchResult, RemoteBatch, Results
from reins.store.jobs import BatchRequest

SHOWN = 10  # line numbers and custom ids an event lists at most


@dataclass(slots=True)
class Sorted:
    """One job's share of a batch's results."""

    mine: list[tuple[BatchRequest, BatchResult]] = field(default_factory=list)
    repeated: list[str] = field(default_factory=list)  # a custom id read already, each time
    foreign: list[str] = field(default_factory=list)  # custom ids the job does not hold
    bad: list[BadLine] = field(default_factory=list)
    unreadable: dict[str, BadLine] = field(default_factory=dict)  # the job's id → its bad line

    @property
    def answered(self) -> set[str]:
        return {request.custom_id for request, _ in self.mine}

    @property
    def unnamed(self) -> int:
        """Unreadable lines that name none of the job's requests (one may have been any)."""
        return sum(1 for b in self.bad if b.custom_id not in self.unreadable)


@dataclass(frozen=True, slots=True)
class Problem:
    """One kind of trouble in a results file: how many, where, and a sentence about it."""

    kind: str  # "repeated", "foreign", "malformed", "cut"
    count: int
    lines: list[str]  # "file:line" of the first few (malformed, cut)
    custom_ids: list[str]
    message: str


def sort(results: Results, requests: dict[str, BatchRequest]) -> Sorted:
    """The results of ``requests`` (first one per custom id), and everything else."""
    out = Sorted(bad=list(results.bad))
    seen: set[str] = set()
    for result in results.results:
        request = requests.get(result.custom_id)
        if request is None:
            out.foreign.append(result.custom_id)
        elif result.custom_id in seen:
            out.repeated.append(result.custom_id)
        else:
            seen.add(result.custom_id)
            out.mine.append((request, result))
    for line in results.bad:
        if line.custom_id in requests and line.custom_id not in seen:
            out.unreadable.setdefault(line.custom_id, line)
    return out


def problems(s: Sorted) -> list[Problem]:
    """Each kind of trouble ``s`` holds, worded, in a fixed order."""
    out = []
    if s.repeated:
        said = (
            f"{len(s.repeated)} result(s) repeat a custom id read already: the first result of "
            f"each was used, the repeats ignored ({_list(s.repeated)})"
        )
        out.append(Problem("repeated", len(s.repeated), [], _ids(s.repeated), said))
    if s.foreign:
        said = (
            f"{len(s.foreign)} result(s) are for requests this job did not send (custom ids it "
            f"does not hold): ignored ({_list(s.foreign)})"
        )
        out.append(Problem("foreign", len(s.foreign), [], _ids(s.foreign), said))
    for kind, lines in (("malformed", [b for b in s.bad if not b.cut]),
                        ("cut", [b for b in s.bad if b.cut])):  # fmt: skip
        if lines:
            out.append(_bad(kind, lines))
    return out


def _bad(kind: str, lines: list[BadLine]) -> Problem:
    n, first = len(lines), lines[0]
    where = [f"{b.file}:{b.line}" for b in lines[:SHOWN]]
    ids = _ids([b.custom_id for b in lines if b.custom_id])
    named = f" (custom ids {', '.join(ids)})" if ids else ""
    what = (
        "cut off before their JSON ends (the file was truncated there)"
        if kind == "cut"
        else "malformed (no JSON result with a custom id)"
    )
    message = (
        f"{n} line(s) of the results file are {what}: line {first.line} of {first.file} "
        f"begins {first.excerpt!r}{named}; a request whose result is among them is recorded "
        "as a generation error"
    )
    return Problem(kind, n, where, ids, message)


def _ids(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(ids))[:SHOWN]


def _list(ids: list[str]) -> str:
    shown = _ids(ids)
    more = len(set(ids)) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def unreadable_error(name: str, line: BadLine) -> str:
    """The generation error of a request whose result is ``line``, which cannot be read."""
    how = "cut off before its end" if line.cut else "malformed"
    return (
        f"{name}: the batch's result for this request cannot be read: line {line.line} of its "
        f"results file ({line.file}) is {how}"
    )


def missing_error(name: str, remote: RemoteBatch, line: BadLine | None, unnamed: int) -> str:
    """The error of a request that backend ``name``'s batch left without a result (``line``:
    its result's line, which cannot be read; ``unnamed``: unreadable lines that name no
    request)."""
    if line is not None:
        return unreadable_error(name, line)
    why = f": {remote.detail}" if remote.detail else ""
    maybe = (
        f" ({unnamed} line(s) of its results file cannot be read and name no request: "
        "this one's may be among them)"
        if unnamed
        else ""
    )
    return f"{name}: the batch ended ({remote.status}) with no result for this request{why}{maybe}"
