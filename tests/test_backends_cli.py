"""CLI backends against small fake CLIs that mimic each tool's flags and output format.

Each fake is a Python script written into tmp_path. It records its argv, stdin and working
directory, then behaves as ``FAKE_MODE`` says: answer, fail, rate-limit, hang (with a child of
its own, to prove the whole process group dies), or flood stdout.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from reins.backends import process, registry
from reins.backends.base import Backend, Completion
from reins.backends.cli import PREAMBLE
from reins.errors import BackendError, BackendTimeout, ConfigError
from reins.values import Prompt

PROMPT = Prompt(system="SYSTEM-TEXT: answer in one word.", user="USER-TEXT: say good for a.")
FAST = "backoff=0.001&max_wait=0.1"

COMMON = r"""
import json, os, subprocess, sys, time

def record(prompt):
    with open(os.environ["FAKE_LOG"], "a") as f:
        f.write(json.dumps({"argv": sys.argv[1:], "stdin": prompt, "cwd": os.getcwd()}) + "\n")

def behave():
    mode = os.environ.get("FAKE_MODE", "ok")
    if mode == "hang":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        with open(os.environ["FAKE_LOG"] + ".child", "w") as f:
            f.write(str(child.pid))
        time.sleep(60)
    if mode == "linger":  # answer, but leave a helper running with the pipes closed
        quiet = subprocess.DEVNULL
        code = "import time; time.sleep(60)"
        child = subprocess.Popen([sys.executable, "-c", code], stdout=quiet, stderr=quiet)
        with open(os.environ["FAKE_LOG"] + ".child", "w") as f:
            f.write(str(child.pid))
    if mode == "crash":
        secret = os.environ.get("FAKE_SECRET", "")
        sys.stderr.write("fatal: cannot reach the model; token=" + secret + "\n")
        sys.stderr.write("x" * 20000 + "\nlast line of stderr\n")
        sys.exit(3)
    if mode == "ratelimit":
        sys.stderr.write("Error: 429 Too Many Requests: rate limit reached\n")
        sys.exit(1)
    if mode == "flood":
        sys.stdout.write("y" * 5000)
        sys.exit(0)
    return mode
"""

FAKES = {
    "claude": COMMON
    + r"""
prompt = sys.stdin.read()
record(prompt)
mode = behave()
if mode == "is_error":
    print(json.dumps({"type": "result", "subtype": "error_max_turns", "is_error": True}))
    sys.exit(1)
print(json.dumps({
    "type": "result", "subtype": "success", "is_error": False, "num_turns": 1,
    "result": "good", "session_id": "s-1", "total_cost_usd": 0.0123,
    "usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 7},
    "modelUsage": {"claude-sonnet-4-5": {"inputTokens": 15}},
}))
""",
    "codex": COMMON
    + r"""
assert sys.argv[-1] == "-", "codex reads the prompt from stdin when given -"
prompt = sys.stdin.read()
record(prompt)
mode = behave()
print(json.dumps({"type": "thread.started", "thread_id": "t-1"}))
print("not json: a progress line")
print(json.dumps({"type": "turn.started"}))
if mode == "turn_failed":
    print(json.dumps({"type": "turn.failed", "error": {"message": "model refused"}}))
    sys.exit(1)
for kind, text in (("reasoning", "hmm"), ("agent_message", "draft"), ("agent_message", "good")):
    print(json.dumps({"type": "item.completed", "item": {"id": "i", "type": kind, "text": text}}))
usage = {"input_tokens": 40, "cached_input_tokens": 0, "output_tokens": 9}
print(json.dumps({"type": "turn.completed", "usage": usage}))
""",
    "gemini": COMMON
    + r"""
prompt = sys.stdin.read()
record(prompt)
mode = behave()
if mode == "plain":
    print("good as plain text")
    sys.exit(0)
if mode == "error_json":
    error = {"type": "ApiError", "message": "quota exceeded for this project", "code": 403}
    print(json.dumps({"error": error}))
    sys.exit(1)
print("Loaded cached credentials.")
print(json.dumps({
    "response": "good",
    "stats": {"models": {"gemini-2.5-pro": {"tokens": {
        "prompt": 11, "candidates": 4, "thoughts": 2, "total": 17,
    }}}},
}))
""",
    "grok": COMMON
    + r"""
path = sys.argv[sys.argv.index("--prompt-file") + 1]
with open(path) as f:
    prompt = f.read()
record(prompt)
mode = behave()
if mode == "cancelled":
    print(json.dumps({"text": "", "stopReason": "Cancelled", "sessionId": "s"}))
    sys.exit(0)
print(json.dumps({"text": "good", "stopReason": "EndTurn", "sessionId": "s-2", "requestId": "r"}))
""",
}

BIN_ENV = {
    "claude": "REINS_CLAUDE_BIN",
    "codex": "REINS_CODEX_BIN",
    "gemini-cli": "REINS_GEMINI_CLI_BIN",
    "grok": "REINS_GROK_BIN",
}
SCRIPT = {"claude": "claude", "codex": "codex", "gemini-cli": "gemini", "grok": "grok"}


class Fake:
    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.dir = tmp_path
        self.log = tmp_path / "calls.jsonl"
        self.monkeypatch = monkeypatch
        monkeypatch.setenv("FAKE_LOG", str(self.log))
        for backend, script in SCRIPT.items():
            path = tmp_path / "bin" / script
            path.parent.mkdir(exist_ok=True)
            path.write_text(f"#!{sys.executable}\n{FAKES[script]}")
            path.chmod(0o755)
            monkeypatch.setenv(BIN_ENV[backend], str(path))

    def mode(self, mode: str) -> None:
        self.monkeypatch.setenv("FAKE_MODE", mode)

    def calls(self) -> list[dict[str, object]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fake:
    return Fake(tmp_path, monkeypatch)


def run(backend: Backend, *, timeout: float = 20) -> Completion:
    return asyncio.run(backend.complete(PROMPT, seed=1, timeout=timeout))


EXPECTED = {
    "claude": ("claude:sonnet", "claude-sonnet-4-5", 15, 7, 0.0123),
    "codex": ("codex:gpt-5-codex", "gpt-5-codex", 40, 9, None),
    "gemini-cli": ("gemini-cli:gemini-2.5-pro", "gemini-2.5-pro", 11, 6, None),
    "grok": ("grok:grok-code-fast-1", "grok-code-fast-1", None, None, None),
}
ARGV = {
    "claude": [
        "-p", "--output-format", "json", "--max-turns", "1", "--permission-mode", "dontAsk",
        "--tools", "", "--no-session-persistence", "--model", "sonnet",
    ],
    "codex": [
        "exec", "--ephemeral", "--sandbox", "read-only", "--model", "gpt-5-codex", "--json",
        "--skip-git-repo-check", "--ignore-user-config", "--ignore-rules", "-",
    ],
    "gemini-cli": [
        "-p", "", "--model", "gemini-2.5-pro", "--output-format", "json", "--approval-mode", "plan",
    ],
    "grok": [
        "--prompt-file", "/dev/stdin", "--output-format", "json", "--max-turns", "1",
        "--permission-mode", "dontAsk", "--tools", "", "--disable-web-search", "--no-subagents",
        "--no-memory", "-m", "grok-code-fast-1",
    ],
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_cli_gets_the_whole_prompt_on_stdin_and_none_in_argv(fake: Fake, name: str) -> None:
    spec, model, input_tokens, output_tokens, cost = EXPECTED[name]
    done = run(registry.resolve(f"{spec}?{FAST}"))
    assert (done.text, done.model, done.input_tokens, done.output_tokens, done.cost) == (
        "good",
        model,
        input_tokens,
        output_tokens,
        cost,
    )
    assert done.latency is not None and done.latency > 0
    [call] = fake.calls()
    assert call["argv"] == ARGV[name]
    assert call["stdin"] == f"{PREAMBLE}\n\n{PROMPT.system}\n\n{PROMPT.user}"
    assert not any("TEXT" in arg for arg in call["argv"])
    cwd = Path(str(call["cwd"]))
    assert cwd.name.startswith("reins-") and not cwd.exists()  # a fresh scratch dir, removed


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_default_model_leaves_the_choice_to_the_cli(fake: Fake, name: str) -> None:
    run(registry.resolve(f"{name}:default?{FAST}"))
    argv = fake.calls()[0]["argv"]
    assert "--model" not in argv and "-m" not in argv  # type: ignore[operator]


def test_a_working_directory_can_be_given(fake: Fake, tmp_path: Path) -> None:
    run(registry.resolve(f"claude:default?cwd={tmp_path}&{FAST}"))
    assert fake.calls()[0]["cwd"] == str(tmp_path)


def test_a_failing_cli_reports_a_bounded_redacted_stderr_tail_without_retrying(
    fake: Fake, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_SECRET", "cli-secret-7f3a9c")
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "cli-secret-7f3a9c")
    fake.mode("crash")
    with pytest.raises(BackendError) as info:
        run(registry.resolve(f"claude:sonnet?{FAST}"))
    message = str(info.value)
    assert message.startswith("claude: exit status 3; stderr: …")
    assert message.endswith("last line of stderr")
    assert "cli-secret-7f3a9c" not in message and len(message) < 1200
    assert not info.value.retryable and len(fake.calls()) == 1


def test_a_rate_limited_cli_is_retried_then_gives_up(fake: Fake) -> None:
    fake.mode("ratelimit")
    with pytest.raises(
        BackendError, match=r"429 Too Many Requests.*\(gave up after 3 tries\)"
    ) as info:
        run(registry.resolve(f"codex:m?retries=2&{FAST}"))
    assert info.value.retryable and len(fake.calls()) == 3


def test_a_timeout_kills_the_whole_process_tree(fake: Fake) -> None:
    fake.mode("hang")
    start = time.monotonic()
    with pytest.raises(BackendTimeout, match=r"no answer within 0.5s \(process tree killed\)"):
        run(registry.resolve(f"gemini-cli:m?request_timeout=0.5&retries=0&{FAST}"), timeout=10)
    assert time.monotonic() - start < 5
    child = int(Path(str(fake.log) + ".child").read_text())
    assert _dead(child)


def test_nothing_the_cli_started_outlives_a_successful_call(fake: Fake) -> None:
    fake.mode("linger")
    assert run(registry.resolve(f"codex:m?{FAST}")).text == "good"
    assert _dead(int(Path(str(fake.log) + ".child").read_text()))


def _dead(pid: int) -> bool:
    """Gone, or a zombie waiting for a reaper: either way it runs no more."""
    for _ in range(50):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize(
    ("spec", "mode", "message"),
    [
        ("claude:m", "is_error", "claude: error_max_turns"),
        ("codex:m", "turn_failed", "codex: model refused"),
        ("gemini-cli:m", "error_json", "gemini-cli: quota exceeded for this project"),
        ("grok:m", "cancelled", "grok: stop reason Cancelled"),
    ],
)
def test_errors_the_cli_reports_in_its_output_are_read(
    fake: Fake, spec: str, mode: str, message: str
) -> None:
    fake.mode(mode)
    with pytest.raises(BackendError) as info:
        run(registry.resolve(f"{spec}?{FAST}"))
    assert str(info.value).startswith(message)


def test_gemini_cli_plain_text_output_is_the_answer(fake: Fake) -> None:
    fake.mode("plain")
    assert run(registry.resolve(f"gemini-cli:m?{FAST}")).text == "good as plain text"


def test_stdout_is_bounded(fake: Fake, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "MAX_STDOUT", 1000)
    fake.mode("flood")
    with pytest.raises(BackendError, match="more than 1000 bytes on stdout") as info:
        run(registry.resolve(f"claude:m?{FAST}"))
    assert not info.value.retryable


def test_a_missing_binary_is_a_config_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(
        ConfigError, match="'gemini' is not on PATH; install it or set REINS_GEMINI_CLI_BIN"
    ):
        registry.resolve("gemini-cli:m")
    monkeypatch.setenv("REINS_CLAUDE_BIN", str(tmp_path / "nope"))
    with pytest.raises(ConfigError, match=r"REINS_CLAUDE_BIN=.* is not an executable"):
        registry.resolve("claude:m")


def test_a_model_that_looks_like_a_flag_is_refused(fake: Fake) -> None:
    with pytest.raises(ConfigError, match="is not a model name"):
        registry.resolve("claude:--dangerously-skip-permissions")


def test_process_run_passes_stdin_through_a_pipe(tmp_path: Path) -> None:
    """The runner itself: a large input arrives whole, and the exit status is kept."""
    data = b"z" * 1_000_000
    code = "import sys; d = sys.stdin.buffer.read(); print(len(d)); sys.exit(4)"
    done = asyncio.run(process.run([sys.executable, "-c", code], stdin=data, timeout=20))
    assert (done.returncode, done.stdout.strip()) == (4, "1000000")
