"""command: real programs on the submission, in a temp folder, clean env, no network."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from reins.checks import BASE, spec_of, validate
from reins.checks.spec import BuiltCheck
from reins.errors import JudgeError, ParamError, ParamValueError
from reins.sandbox import isolation
from tests.kit.checkkit import build, run

PY = sys.executable


def python(code: str, **given: object) -> BuiltCheck:
    return build("command", run=[PY, "-c", code, "{file}"], **given)


def test_a_passing_program_leaves_no_fact_and_reads_the_submission() -> None:
    check = python("import sys; sys.exit(open(sys.argv[1]).read() != 'def f(): pass')")
    assert run(check, "def f(): pass") == []
    (fact,) = run(check, "def f(): fail")
    assert fact.expected == "exit code 0"
    assert fact.actual == "exit code 1"


def test_a_json_submission_is_written_as_json() -> None:
    code = "import json, sys; d = json.load(open(sys.argv[1])); sys.exit(d != {'a': [1, 'é']})"
    assert run(python(code), {"a": [1, "é"]}) == []


def test_a_failing_program_leaves_the_tail_of_its_output() -> None:
    code = "import sys; print('x' * 5000 + 'OUT-END'); sys.exit('assertion failed: ERR-END')"
    (fact,) = run(python(code), "s")
    assert fact.actual.startswith("exit code 1\nstderr: assertion failed: ERR-END\nstdout: …")
    assert fact.actual.endswith("OUT-END")
    assert len(fact.actual) < 1500


def test_huge_output_is_capped_while_it_is_read() -> None:
    code = "import sys\nfor _ in range(3000): sys.stdout.write('y' * 10000)\nsys.exit(2)"
    (fact,) = run(python(code, output_chars=100), "s")
    assert fact.actual.startswith("exit code 2\nstdout: ")
    assert len(fact.actual) < 300


def test_pass_codes() -> None:
    check = python("import sys; sys.exit(5)", pass_codes=[0, 5])
    assert run(check, "s") == []


def test_running_past_the_timeout_is_a_fact_and_the_program_is_killed() -> None:
    code = "import subprocess, sys; subprocess.Popen([sys.executable, '-c', 'while True: pass'])\n"
    code += "print('started', flush=True)\nwhile True: pass"
    (fact,) = run(python(code, timeout=1.0), "s")
    assert fact.expected == "to finish within 1 s"
    assert fact.actual == "still running, killed\nstdout: started"


def test_the_environment_is_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REINS_TEST_SECRET", "hunter2")
    code = "import os, sys; print(sorted(os.environ)); sys.exit(1)"
    (fact,) = run(python(code), "s")
    assert "hunter2" not in fact.actual and "REINS_TEST_SECRET" not in fact.actual
    # PWD is the sandbox's own (bubblewrap sets it with the working folder)
    assert "['HOME', 'LANG', 'PATH', 'PWD', 'TMPDIR']" in fact.actual


def test_each_run_gets_a_fresh_folder_that_is_removed() -> None:
    code = "import os, sys; print(os.getcwd()); print(os.listdir('.')); sys.exit(1)"
    (first,) = run(python(code, file="main.py"), "a")
    (second,) = run(python(code, file="main.py"), "b")
    folder = first.actual.split("stdout: ")[1].splitlines()[0]
    assert "['main.py']" in first.actual
    assert folder not in second.actual
    assert not Path(folder).exists()


def test_hostile_submissions_are_written_without_crashing() -> None:
    check = python("import sys; sys.exit(0)")
    for submission in ("\ud800", "\x00" * 10, "x" * 2_000_000, {"a": float("nan")}, None, 3):
        assert run(check, submission) == []


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server listening on the loopback interface."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    yield server.getsockname()[1]  # the kernel completes a handshake without accept()
    server.close()


CONNECT = "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 5)"


def test_without_isolation_the_program_reaches_the_network(listener: int) -> None:
    check = build("command", run=[PY, "-c", CONNECT, str(listener)], network=True)
    assert run(check, "s") == []


@pytest.mark.skipif(isolation() is None, reason="no network namespace on this host")
def test_the_program_has_no_network(listener: int) -> None:
    check = build("command", run=[PY, "-c", CONNECT, str(listener)])
    (fact,) = run(check, "s")
    # no route out (unshare's empty namespace), or only the sandbox's own loopback (bubblewrap)
    refused = ("OSError", "unreachable", "ConnectionRefusedError")
    assert any(word in fact.actual for word in refused), fact.actual


def test_a_missing_program_is_the_judge_s_failure() -> None:
    with pytest.raises(JudgeError, match="not found on PATH"):
        run(build("command", run=["reins-no-such-program-xyz"]), "s")


def test_a_program_in_the_quest_folder(tmp_path: Path) -> None:
    script = tmp_path / "check.sh"
    script.write_text('#!/bin/sh\ngrep -q hello "$1"\n', encoding="utf-8")
    script.chmod(0o755)
    spec = spec_of("command")
    check = spec.build(validate(spec, {"run": ["./check.sh", "{file}"], BASE: str(tmp_path)}))
    assert run(check, "hello world") == []
    assert len(run(check, "bye")) == 1
    script.chmod(0o644)
    with pytest.raises(JudgeError, match="not an executable file"):
        run(check, "hello")


@pytest.mark.parametrize(
    ("given", "param"),
    [
        ({"run": []}, "run"),
        ({"run": [""]}, "run"),
        ({"run": ["x"], "file": "../up.py"}, "file"),
        ({"run": ["x"], "file": ""}, "file"),
        ({"run": ["x"], "timeout": 0}, "timeout"),
        ({"run": ["x"], "pass_codes": []}, "pass_codes"),
        ({"run": ["x"], "output_chars": 0}, "output_chars"),
    ],
)
def test_unusable_values_are_refused_at_build(given: dict[str, object], param: str) -> None:
    with pytest.raises(ParamValueError) as caught:
        build("command", **given)
    assert caught.value.param == param


def test_parameters_are_validated() -> None:
    spec = spec_of("command")
    with pytest.raises(ParamError, match="missing"):
        validate(spec, {})
    with pytest.raises(ParamError, match="array of strings"):
        validate(spec, {"run": "pytest -q"})
    for codes in (0, [True], [0.5]):  # typed list[int]: a type error now, not a build error
        with pytest.raises(ParamError, match="expected an array of whole numbers"):
            validate(spec, {"run": ["x"], "pass_codes": codes})
    with pytest.raises(ParamError, match="unknown"):
        validate(spec, {"run": ["x"], "shell": True})
