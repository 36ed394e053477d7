"""The humaneval gate against answers that try to pass without solving the problem.

Each answer here is an attack on the judge: exiting early, forging the report, lying through
the interpreter the tests run in, escaping into the host. Each must FAIL, or, where the answer
is also correct, be contained (its escape left no trace). Every attack runs under each
confinement that works on this host, so that the fallbacks hold too. Where the package's own
harness is fooled by an attack (it runs the tests in the answer's interpreter), the test says
so by running that harness on it: the attack is real, and only the pack's design stops it.
"""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest

from tests.kit.humaneval import context, need_the_extra, reference, working_modes

need_the_extra()

from reins.packs.humaneval.checks import Finding, judge  # noqa: E402 - after the extra check
from reins.packs.humaneval.problems import hidden, problem  # noqa: E402
from reins.packs.humaneval.run import Settings  # noqa: E402

MODES = working_modes()


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def verdict(task: str, answer: str, mode: str, timeout: float = 3.0) -> Finding | None:
    """What the pack's check makes of ``answer`` (None: it passes)."""
    return judge(context(task, answer), Settings(timeout=timeout, sandbox=mode))


def body(code: str) -> str:
    """``code`` as a function body (indented four spaces)."""
    return textwrap.indent(textwrap.dedent(code).strip("\n"), "    ") + "\n"


def canonical(task: str) -> str:
    return problem(task).canonical_solution


# -- ending the run early ----------------------------------------------------------------------


def test_os_exit_zero_inside_the_function_fails(mode: str) -> None:
    found = verdict("HumanEval/2", body("import os\nos._exit(0)"), mode)
    assert found is not None and found.part == "returns"
    assert "exited with status 0" in found.fact.actual


def test_sys_exit_zero_inside_the_function_fails(mode: str) -> None:
    for code in ("import sys\nsys.exit(0)", "raise SystemExit(0)", "raise KeyboardInterrupt"):
        found = verdict("HumanEval/2", body(code), mode)
        assert found is not None and found.part == "tests", code
        assert "raised" in found.fact.actual


def test_sys_exit_when_the_code_is_defined_fails(mode: str) -> None:
    answer = "import sys\ndef truncate_number(number):\n    return number % 1.0\nsys.exit(0)\n"
    found = verdict("HumanEval/2", answer, mode)
    assert found is not None and found.part == "defines"
    assert "SystemExit" in found.fact.actual


def test_exiting_from_an_atexit_hook_or_a_finaliser_after_a_wrong_answer_fails(mode: str) -> None:
    code = """
    import atexit, os
    atexit.register(lambda: os._exit(0))
    return None
    """
    found = verdict("HumanEval/2", body(code), mode)
    assert found is not None and found.part == "tests"


# -- forging the report ------------------------------------------------------------------------


def test_printing_passed_and_writing_a_report_to_every_descriptor_fails(mode: str) -> None:
    """The answer writes what a passing report looks like (with a made-up nonce) to stdout,
    stderr and every descriptor it can write, then exits 0."""
    code = """
    import json, os
    fake = json.dumps({"end": "passed", "calls": 6, "last": "", "nonce": "0" * 32})
    print("passed"); print(fake)
    for fd in range(3, 256):
        try:
            os.write(fd, (fake + "\\n").encode())
        except OSError:
            pass
    os._exit(0)
    """
    found = verdict("HumanEval/2", body(code), mode)
    assert found is not None and found.part in ("returns", "tests")


def test_killing_the_tests_process_or_the_group_is_refused(mode: str) -> None:
    for code in (
        "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)",
        "import os, signal\nos.killpg(0, signal.SIGKILL)",
        "import os, signal\nos.kill(1, signal.SIGKILL)",
    ):
        found = verdict("HumanEval/2", body(code), mode)
        assert found is not None and found.part == "tests", code
        assert "PermissionError" in found.fact.actual


# -- lying through the interpreter -------------------------------------------------------------


ALWAYS_EQUAL = body(
    """
    class Equal:
        def __eq__(self, other): return True
    return Equal()
    """
)
# a bool-looking float that equals anything: sent to the tests as the float it holds
EQUAL_FLOAT = body(
    """
    class Anything(float):
        def __eq__(self, other): return True
    return Anything(0.0)
    """
)
# truncate_number: right for 3.5 only; the other assertions go through abs().
LYING_BUILTINS = body(
    """
    import builtins
    builtins.abs = lambda x: 0
    return 0.5
    """
)
# decode_cyclic, the identity: right only if every string the tests draw is "aaa…".
PATCHED_RANDOM = """
import random
random.choice = lambda seq: "a"

def decode_cyclic(s: str):
    return s
"""
# decode_cyclic, the identity, with the prompt's encode_cyclic replaced by the identity too.
REPLACED_HELPER = """
def encode_cyclic(s: str):
    return s

def decode_cyclic(s: str):
    return s
"""


@pytest.mark.parametrize(
    ("task", "answer"),
    [
        ("HumanEval/0", ALWAYS_EQUAL),
        ("HumanEval/0", EQUAL_FLOAT),
        ("HumanEval/2", LYING_BUILTINS),
        ("HumanEval/38", PATCHED_RANDOM),
        ("HumanEval/38", REPLACED_HELPER),
    ],
    ids=["always-equal", "equal-float", "builtins", "random", "helper"],
)
def test_answers_that_fool_the_official_harness_fail(task: str, answer: str) -> None:
    """The official harness runs the tests in the answer's interpreter, so an object that
    equals everything, a patched builtin, a patched ``random`` or a replaced helper of the
    prompt passes there; the pack's tests run in a process of their own and read plain
    values."""
    assert reference([(task, answer)])[task][0], "the attack no longer fools the reference"
    for mode in MODES:
        found = verdict(task, answer, mode)
        assert found is not None and found.part == "tests", (mode, found)


def test_a_value_that_is_not_plain_data_is_named_in_the_fact(mode: str) -> None:
    found = verdict("HumanEval/0", ALWAYS_EQUAL, mode)
    assert found is not None
    assert "a value of type Equal" in found.fact.actual
    # the call and the value the tests expected, as behaviour (issue 41), not the assert line
    assert found.fact.expected.startswith("has_close_elements([")
    assert " returns " in found.fact.expected and "assert" not in found.fact.expected


def test_native_code_and_tracing_do_not_reach_the_tests(mode: str) -> None:
    for code in ("import ctypes", "import _ctypes", "import mmap", "import _posixsubprocess"):
        found = verdict("HumanEval/2", body(f"{code}\nreturn number % 1.0"), mode)
        assert found is not None and found.part == "tests", code
        assert "does not allow importing" in found.fact.actual


# -- escaping into the host ---------------------------------------------------------------------


def test_an_infinite_loop_is_stopped_at_the_time_limit(mode: str) -> None:
    started = time.monotonic()
    found = verdict("HumanEval/2", body("while True:\n    pass"), mode, timeout=1.0)
    assert found is not None and found.part == "time"
    assert "truncate_number(3.5)" in found.fact.actual
    assert time.monotonic() - started < 1.0 + 4


def test_an_answer_that_ignores_the_alarm_is_killed(mode: str) -> None:
    code = """
    import signal
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    while True:
        pass
    """
    found = verdict("HumanEval/2", body(code), mode, timeout=1.0)
    assert found is not None and found.part == "time"


def test_a_loop_while_the_code_is_defined_is_stopped_too(mode: str) -> None:
    answer = "while True:\n    pass\ndef truncate_number(number):\n    return number % 1.0\n"
    found = verdict("HumanEval/2", answer, mode, timeout=1.0)
    assert found is not None and found.part == "time"
    assert "before the first call" in found.fact.actual


def test_no_process_the_answer_starts_outlives_the_run(mode: str, tmp_path: Path) -> None:
    """Each way to start a process is refused; had one started, it would have written the
    marker a second later."""
    marker = tmp_path / "outlived"
    later = f"import time; time.sleep(1); open({str(marker)!r}, 'w').write('x')"
    starts = [
        f"import os\nif os.fork() == 0:\n    exec({later!r})\n    os._exit(0)",
        f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', {later!r}])",
        f"import os, sys\nos.posix_spawn(sys.executable, [sys.executable, '-c', {later!r}], {{}})",
        f"import os\nos.system('sleep 1; touch {marker}')",
        "import multiprocessing\nmultiprocessing.Process(target=print).start()",
        "import pty\npty.fork()",
    ]
    for start in starts:
        found = verdict("HumanEval/2", body(f"{start}\nreturn number % 1.0"), mode)
        assert found is not None and found.part == "tests", start
    time.sleep(1.5)
    assert not marker.exists()


def test_writes_outside_the_answer_s_folder_leave_nothing(mode: str, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    write = f"open({str(outside)!r}, 'w').write('escaped')"
    found = verdict("HumanEval/2", body(f"{write}\nreturn number % 1.0"), mode)
    assert found is not None and found.part == "tests"
    # the same write swallowed by a correct answer: it passes, and nothing was written
    swallowed = f"try:\n    {write}\nexcept OSError:\n    pass\nreturn number % 1.0"
    assert verdict("HumanEval/2", body(swallowed), mode) is None
    for trick in (
        f"import os\nos.symlink({str(outside)!r}, 'link')\nopen('link', 'w').write('x')",
        f"import os\nos.chdir('/')\nopen({str(outside)!r}, 'w').write('x')",
        f"import shutil\nshutil.rmtree({str(tmp_path)!r})",
    ):
        found = verdict("HumanEval/2", body(f"{trick}\nreturn number % 1.0"), mode)
        assert found is not None, trick
    assert tmp_path.is_dir() and not outside.exists()


def test_the_answer_s_own_folder_is_writable(mode: str) -> None:
    code = "open('scratch.txt', 'w').write('ok')\nassert open('scratch.txt').read() == 'ok'"
    assert verdict("HumanEval/2", body(f"{code}\nreturn number % 1.0"), mode) is None


def test_the_package_s_tests_and_solutions_cannot_be_read(mode: str) -> None:
    """The answer reads the package's data file, finds its own problem and runs the canonical
    solution: the official harness lets it; the pack's answer process cannot read the file."""
    (folder,) = hidden()
    data = os.path.join(folder, "data", "HumanEval.jsonl.gz")
    code = f"""
    import gzip, json
    with gzip.open({data!r}, "rt") as f:
        tasks = [json.loads(line) for line in f]
    task = next(t for t in tasks if t["task_id"] == "HumanEval/2")
    namespace = {{}}
    exec(task["prompt"] + task["canonical_solution"], namespace)
    return namespace["truncate_number"](number)
    """
    assert reference([("HumanEval/2", body(code))])["HumanEval/2"][0]
    found = verdict("HumanEval/2", body(code), mode)
    assert found is not None and found.part == "tests"
    assert "FileNotFoundError" in found.fact.actual or "PermissionError" in found.fact.actual


def test_the_answer_finds_no_test_in_its_folder_its_input_or_proc(mode: str) -> None:
    """Everything the answer's process can list holds no line of the tests."""
    code = """
    import os
    seen = []
    for top in (".", "/tmp", "/proc/self/fd", "/dev/fd"):
        try:
            for name in os.listdir(top):
                path = os.path.join(top, name)
                try:
                    with open(path, "rb") as f:
                        seen.append(f.read(1 << 20))
                except OSError:
                    pass
        except OSError:
            pass
    if any(b"def check" in s for s in seen):
        return number % 1.0
    return -1.0
    """
    found = verdict("HumanEval/2", body(code), mode)
    assert found is not None and found.part == "tests"
    assert "returned -1.0" in found.fact.actual


def test_a_memory_bomb_and_a_huge_value_fail(mode: str) -> None:
    found = verdict("HumanEval/2", body("x = bytearray(8 << 30)\nreturn 0.5"), mode)
    assert found is not None and found.part == "tests" and "MemoryError" in found.fact.actual
    found = verdict("HumanEval/2", body("return 'x' * (20 << 20)"), mode)
    assert found is not None and found.part == "returns" and "MiB" in found.fact.actual


def test_a_correct_answer_passes_under_every_confinement(mode: str) -> None:
    assert verdict("HumanEval/2", canonical("HumanEval/2"), mode) is None
