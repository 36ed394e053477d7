"""The humaneval pack's harness: the one program a judgment runs, twice, as two processes.

``harness.py answer IN REQUESTS REPLIES`` defines the answer (the problem's prompt and the
answer's code, joined as the official harness joins them), then serves calls: a call's
arguments read from REQUESTS, the value returned (or what was raised) written to REPLIES. The
answer's code runs there only, behind an audit hook that refuses what the judge's policy names
(new processes, signals, native code, sockets, raised limits) and writes outside its folder.

``harness.py tests IN REPORT REQUESTS REPLIES`` runs the problem's own test code (never the
answer's) and calls ``check`` with a stand-in that sends each call to the answer's process and
returns the value read back as plain Python values: whatever the answer does to its own
interpreter (``builtins``, an object whose ``==`` is always true, an exit), the assertions are
evaluated by code it never ran in. Once ``check`` returns, it writes the nonce read from IN
(never shown to the answer) to REPORT, a descriptor the judge gave it alone; any other end is
written there with what went wrong. IN holds one JSON object, read and closed first; messages
are JSON lines in :func:`encode`'s form. Run as ``python -I -B``, this file imports nothing of
reins: the sandbox it runs in may not see reins at all.
"""

from __future__ import annotations

import ast
import json
import os
import resource
import signal
import sys
import traceback
from collections.abc import Callable
from typing import Any, NoReturn

MESSAGE = 8 << 20  # the longest message either process reads, in bytes
SHOWN = 300  # characters of a value, a call or a line quoted in a report
TAGS = ("tuple", "set", "frozenset", "dict")
ANSWER, TESTS = "<answer>", "<tests>"
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


class Timeout(BaseException):
    """The tests ran past their time limit (a BaseException: no ``except Exception`` eats it)."""


class AnswerRaised(Exception):
    """The answer's function raised, or returned a value that cannot cross to the tests."""

    def __init__(self, detail: dict[str, Any]) -> None:
        super().__init__(f"{detail.get('type', 'error')}: {detail.get('message', '')}")
        self.detail = detail


class AnswerEnded(Exception):
    """The answer's process ended, or broke the protocol, before it replied."""


# -- values ------------------------------------------------------------------------------------


def encode(value: object, depth: int = 0) -> object:
    """``value`` as JSON: lists as arrays, the other containers tagged (``{"tuple": [...]}``);
    a subclass of a built-in type as that type; anything else raises TypeError."""
    if depth > 100:
        raise TypeError("a value nested more than 100 levels deep")
    if value is None or isinstance(value, bool | str):
        return str(value) if isinstance(value, str) and type(value) is not str else value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, list):
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, tuple | set | frozenset):
        tag = "tuple" if isinstance(value, tuple) else "set"
        tag = "frozenset" if isinstance(value, frozenset) else tag
        return {tag: [encode(v, depth + 1) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    raise TypeError(f"a value of type {type(value).__name__}")


def decode(data: object, depth: int = 0) -> object:
    """The value :func:`encode` wrote, as plain built-in values only; ValueError otherwise."""
    if depth > 101:
        raise ValueError("nested too deep")
    if data is None or isinstance(data, bool | int | float | str):
        return data
    if isinstance(data, list):
        return [decode(v, depth + 1) for v in data]
    if not isinstance(data, dict) or len(data) != 1:
        raise ValueError("not an encoded value")
    ((tag, inner),) = data.items()
    if tag not in TAGS or not isinstance(inner, list):
        raise ValueError("not an encoded value")
    if tag == "dict":
        if not all(isinstance(p, list) and len(p) == 2 for p in inner):
            raise ValueError("not an encoded dict")
        return dict((decode(k, depth + 1), decode(v, depth + 1)) for k, v in inner)
    items = [decode(v, depth + 1) for v in inner]
    return tuple(items) if tag == "tuple" else set(items) if tag == "set" else frozenset(items)


def shown(value: object) -> str:
    """``value``'s repr, cut for a report."""
    text = repr(value)
    return text if len(text) <= SHOWN else text[:SHOWN] + f"… ({len(text) - SHOWN} more)"


# -- messages ----------------------------------------------------------------------------------


def read_input(fd: int) -> dict[str, Any]:
    """The JSON object the judge left at ``fd``; the descriptor is closed once read."""
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    os.close(fd)
    data = json.loads(b"".join(chunks))
    assert isinstance(data, dict)
    return data


class Channel:
    """JSON lines over two pipes: each message is one line, at most :data:`MESSAGE` bytes."""

    def __init__(self, read: int, write: int) -> None:
        self.read, self.write, self.buffer = read, write, b""

    def send(self, message: object) -> None:
        data = (json.dumps(message, allow_nan=True) + "\n").encode()
        while data:
            data = data[os.write(self.write, data) :]

    def receive(self) -> Any:
        """The next message; AnswerEnded at the end of the pipe or on a line too long."""
        while b"\n" not in self.buffer:
            if len(self.buffer) > MESSAGE:
                raise AnswerEnded(f"sent a message over {MESSAGE >> 20} MiB")
            chunk = os.read(self.read, 1 << 16)
            if not chunk:
                raise AnswerEnded("before it returned")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            return json.loads(line)
        except (ValueError, RecursionError):
            raise AnswerEnded("sent a message that is not JSON") from None


def limit(memory_mb: int) -> None:
    """Caps for this process: address space, file size, no core dump."""
    for what, value in (
        (resource.RLIMIT_AS, memory_mb << 20),
        (resource.RLIMIT_FSIZE, 16 << 20),
        (resource.RLIMIT_CORE, 0),
    ):
        hard = resource.getrlimit(what)[1]
        if hard == resource.RLIM_INFINITY or value < hard:
            resource.setrlimit(what, (value, value))


# -- the answer's process ----------------------------------------------------------------------


def guard(folder: str, hidden: list[str], policy: dict[str, Any]) -> None:
    """Install the audit hook the answer's code runs under (it cannot be removed), with the
    judge's ``policy`` (reins.packs.humaneval.confine.POLICY)."""
    root = os.path.realpath(folder)
    walls = [os.path.realpath(h) for h in [*hidden, "/proc"]]
    events, prefixes = frozenset(policy["events"]), tuple(policy["prefixes"])
    modules, writes = frozenset(policy["modules"]), dict(policy["writes"])

    def below(path: object, top: str) -> bool:
        where = os.path.realpath(os.fsdecode(path))  # type: ignore[arg-type]
        return where == top or where.startswith(top.rstrip("/") + "/")

    def refuse(what: str) -> NoReturn:
        raise PermissionError(f"the judge's harness does not allow {what} here")

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in events or event.startswith(prefixes):
            refuse(event)
        if event == "import" and args and str(args[0]).split(".")[0] in modules:
            refuse(f"importing {args[0]}")
        if event == "open" and args and isinstance(args[0], str | bytes | os.PathLike):
            mode, flags = args[1], args[2] if len(args) > 2 else 0
            writing = bool(flags & WRITE_FLAGS) or any(c in str(mode or "") for c in "wax+")
            if any(below(args[0], w) for w in walls) or (writing and not below(args[0], root)):
                refuse(f"opening {args[0]!r}")
        if event in writes:
            paths, dir_fds = writes[event]
            if any(i < len(args) and args[i] is not None for i in dir_fds):
                refuse(f"{event} with a dir_fd")
            for i in paths:
                path = args[i] if i < len(args) else None
                if isinstance(path, str | bytes | os.PathLike) and not below(path, root):
                    refuse(f"{event} on {path!r}")

    sys.addaudithook(hook)


def raised(exc: BaseException, lines: list[str]) -> dict[str, Any]:
    """What the answer raised, and the line of its program where the traceback last was."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == ANSWER]
    n = (frames[-1].lineno or 0) if frames else 0
    return {
        "type": type(exc).__name__,
        "message": str(exc)[:SHOWN],
        "line": n,
        "text": lines[n - 1].strip()[: 2 * SHOWN] if 0 < n <= len(lines) else "",
    }


def compiled(programs: list[str]) -> tuple[Any, list[str], dict[str, Any]]:
    """The first of ``programs`` that compiles, with its lines; else what the first one's
    compilation said."""
    first: dict[str, Any] = {}
    for text in programs:
        lines = text.splitlines()
        try:
            return compile(text, ANSWER, "exec", dont_inherit=True), lines, {}
        except (SyntaxError, ValueError) as exc:
            if first:
                continue
            n = (exc.lineno or 0) if isinstance(exc, SyntaxError) else 0
            said = exc.msg if isinstance(exc, SyntaxError) else str(exc)
            text = lines[n - 1].strip() if 0 < n <= len(lines) else ""
            first = {"kind": "code", "type": type(exc).__name__, "message": said[:SHOWN],
                     "line": n, "text": text}  # fmt: skip
    return None, [], first


def define(given: dict[str, Any]) -> tuple[Callable[..., object] | None, list[str], dict[str, Any]]:
    """The answer's function and its program's lines, or None and what went wrong (the
    official harness's namespace: an empty dict, so ``__name__`` is not ``"__main__"``)."""
    code, lines, error = compiled(list(given["programs"]))
    if code is None:
        return None, lines, error
    namespace: dict[str, Any] = {}
    try:
        exec(code, namespace)
    except BaseException as exc:  # the answer's fault, whatever it raised (SystemExit too)
        return None, lines, {"kind": "defines", **raised(exc, lines)}
    function = namespace.get(given["entry_point"])
    if not callable(function):
        names = sorted(k for k, v in namespace.items() if callable(v) and not k.startswith("__"))
        found = "nothing" if function is None else f"a {type(function).__name__}"
        return None, lines, {"kind": "missing", "found": found, "defined": names[:20]}
    return function, lines, {}


def serve(function: Callable[..., object], channel: Channel, lines: list[str]) -> None:
    """Answer calls until the tests close their pipe."""
    while True:
        try:
            request = channel.receive()
        except AnswerEnded:
            return
        args = decode(request["args"])
        kwargs = {str(k): decode(v) for k, v in request["kwargs"]}
        assert isinstance(args, list)
        try:
            value = function(*args, **kwargs)
        except BaseException as exc:  # reported, never swallowed: the tests fail on it
            channel.send({"raised": raised(exc, lines)})
            continue
        try:
            channel.send({"value": encode(value)})
        except (TypeError, ValueError, RecursionError) as exc:
            channel.send({"unreadable": str(exc)[:SHOWN]})


def answer(fd_in: int, fd_requests: int, fd_replies: int) -> None:
    given = read_input(fd_in)
    limit(int(given["memory_mb"]))
    guard(os.getcwd(), list(given["hidden"]), dict(given["policy"]))
    channel = Channel(fd_requests, fd_replies)
    function, lines, error = define(given)
    if function is None:
        channel.send({"error": error})
        return
    channel.send({"ready": True})
    serve(function, channel, lines)


# -- the tests' process ------------------------------------------------------------------------


class Calls:
    """The stand-in the tests call: each call goes to the answer's process."""

    def __init__(self, channel: Channel, name: str) -> None:
        self.channel, self.__name__, self.count, self.last = channel, name, 0, ""

    def __call__(self, *args: object, **kwargs: object) -> object:
        self.count += 1
        shown_args = ", ".join([*map(shown, args), *(f"{k}={shown(v)}" for k, v in kwargs.items())])
        self.last = f"{self.__name__}({shown_args})"[: 2 * SHOWN]
        kw = [[k, encode(v)] for k, v in kwargs.items()]
        try:
            self.channel.send({"args": encode(list(args)), "kwargs": kw})
        except OSError:
            raise AnswerEnded("before it returned") from None
        reply = self.channel.receive()
        if not isinstance(reply, dict):
            raise AnswerEnded("sent a reply that is not an object")
        if "value" in reply:
            try:
                value = decode(reply["value"])
            except (ValueError, TypeError, RecursionError):
                raise AnswerEnded("sent a value in no form the tests read") from None
            self.last += f" returned {shown(value)}"
            return value
        if "raised" in reply:
            raise AnswerRaised(dict(reply["raised"]))
        if "unreadable" in reply:
            raise AnswerRaised({"type": "unreadable", "message": str(reply["unreadable"])})
        raise AnswerEnded("sent a reply of no known kind")


def failed(exc: BaseException, source: str, offset: int, calls: Calls) -> dict[str, Any]:
    """Where in the test code (its ``offset`` lines of prompt skipped) the traceback last was,
    its line's text, and what a failed assertion compared the function's value with."""
    walk = traceback.walk_tb(exc.__traceback__)
    frames = [(f, n) for f, n in walk if f.f_code.co_filename == TESTS]
    if not frames:
        return {}
    frame, n = frames[-1]
    lines = source.splitlines()
    text = lines[n - 1].strip() if 0 < n <= len(lines) else ""
    report: dict[str, Any] = {"line": n - offset, "text": text[: 2 * SHOWN]}
    if isinstance(exc, AssertionError):
        last, count = calls.last, calls.count
        try:
            value = wanted(ast.parse(source), n, frame, calls)
            encode(value)  # plain data only (TypeError otherwise): what the tests can compare
            report["wanted"] = shown(value)
        except (Exception, Timeout):  # the verdict stands; only this wording is lost
            pass
        finally:  # a helper of the tests may have called the function: the report is not its
            calls.last, calls.count = last, count
    return report


def wanted(tree: ast.Module, n: int, frame: Any, calls: Calls) -> object:
    """What ``assert A == B`` at line ``n`` compared the function's value with: the side not
    calling it, evaluated where the assertion ran (a value the tests computed, a literal over
    several lines). LookupError for any other failure, or when both sides call it."""
    check = next(
        (
            s.test
            for s in ast.walk(tree)
            if isinstance(s, ast.Assert) and s.lineno <= n <= (s.end_lineno or n)
        ),
        None,
    )
    if not isinstance(check, ast.Compare) or not isinstance(check.ops[0], ast.Eq | ast.Is):
        raise LookupError("not an equality")
    names = frame.f_globals | frame.f_locals
    sides = [check.left, *check.comparators]
    calling = [any(names.get(getattr(x, "id", "")) is calls for x in ast.walk(s)) for s in sides]
    if len(sides) != 2 or calling.count(True) != 1:
        raise LookupError("not one call compared with one value")
    other = ast.Expression(sides[calling.index(False)])
    return eval(compile(other, TESTS, "eval"), frame.f_globals, names)


def run_tests(given: dict[str, Any], calls: Calls) -> dict[str, Any]:
    """Run the test code and ``check`` on the stand-in; what happened, as a report."""
    source = given["prompt"] + "\n" + given["test"]
    namespace: dict[str, Any] = {}
    exec(compile(source, TESTS, "exec", dont_inherit=True), namespace)
    ready = calls.channel.receive()
    if not isinstance(ready, dict) or "ready" not in ready:
        error = ready.get("error") if isinstance(ready, dict) else None
        if not isinstance(error, dict):
            raise AnswerEnded("sent no word that it was ready")
        return {"end": "answer", "error": error}
    namespace[given["entry_point"]] = calls  # the tests that name the function call the answer
    offset = given["prompt"].count("\n") + 1
    try:
        namespace["check"](calls)
    except (Timeout, AnswerEnded):
        raise
    except Exception as exc:
        report = {"end": "tests", **failed(exc, source, offset, calls)}
        if isinstance(exc, AnswerRaised):
            report["raised"] = exc.detail
        elif isinstance(exc, AssertionError):
            report["assertion"] = str(exc)[:SHOWN]
        else:
            report["error"] = f"{type(exc).__name__}: {str(exc)[:SHOWN]}"
        return report
    return {"end": "passed"}


def tests(fd_in: int, fd_report: int, fd_requests: int, fd_replies: int) -> None:
    given = read_input(fd_in)
    limit(int(given["memory_mb"]))
    calls = Calls(Channel(fd_replies, fd_requests), given["entry_point"])

    def alarm(signum: int, frame: object) -> NoReturn:
        raise Timeout

    signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, float(given["timeout"]))
    try:
        report = run_tests(given, calls)
    except Timeout:
        report = {"end": "time"}
    except AnswerEnded as exc:
        report = {"end": "ended", "why": str(exc)}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    report.update(calls=calls.count, last=calls.last, nonce=given["nonce"])
    os.write(fd_report, json.dumps(report).encode())
    os.close(fd_report)


def main(argv: list[str]) -> None:
    role, fds = argv[0], [int(a) for a in argv[1:]]
    if role == "answer":
        answer(*fds)
    elif role == "tests":
        tests(*fds)
    else:
        raise SystemExit(f"harness.py: no role {role!r}")
    sys.stdout.flush()
    os._exit(0)  # no atexit handler, finalizer or thread of the answer's runs after this


if __name__ == "__main__":
    main(sys.argv[1:])
