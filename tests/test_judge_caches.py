"""Issue 37: reins' own state is untrusted input to a judgment. A pooled judge's tree, its index
and anything a judged run leaves are proven or rebuilt before the next judgment, whoever wrote
them (judged code, or an agent run with ``--sandbox none`` writing reins' folder itself); and
where bubblewrap cannot run, the judge refuses unless the run said ``--sandbox none``."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from reins.errors import JudgeError
from tests.kit.codingkit import Judging, make_repo
from tests.kit.judgekit import RIGHT, TESTS, WRONG, verdict


@pytest.fixture
def judging(tmp_path: Path) -> Iterator[Judging]:
    repo = make_repo(tmp_path / "project", {"calc.py": WRONG, "tests/test_calc.py": TESTS})
    judging = Judging(repo, tmp_path / "root", judge=["tests/**"])
    yield judging
    judging.close()


def judged_again(judging: Judging, tmp_path: Path, change: str) -> list[str]:
    """Release the trees held, wait for their cleaning, and judge ``change`` to calc.py."""
    judging.close()
    judging.judges.settle()
    return [f.actual.split("\n")[0] for f in verdict(judging.tree("add", {"calc.py": change}),
                                                      tmp_path)]  # fmt: skip


def trees(tmp_path: Path) -> list[Path]:
    judge = tmp_path / "root" / ".reins" / "judge"
    return sorted(p for p in judge.iterdir() if p.name.isdigit())


@pytest.mark.parametrize("forged_index", [False, True])
def test_a_tree_an_unconfined_agent_rewrote_is_proven_again_before_the_next_judgment(
    judging: Judging, tmp_path: Path, forged_index: bool
) -> None:
    assert judged_again(judging, tmp_path, WRONG + "# one\n") == ["failed: assert 0 == 4"]
    judging.close()
    judging.judges.settle()  # every tree cleaned and released: now the agent writes them
    store = tmp_path / "root" / ".reins" / "judge" / "store.git"
    for tree in trees(tmp_path):  # the right answer written into every tree reins keeps
        (tree / "calc.py").write_text(RIGHT)
        if forged_index:  # and the index made to vouch for it, stat data and all
            env = {**os.environ, "GIT_INDEX_FILE": f"{tree}.index"}
            subprocess.run(["git", f"--git-dir={store}", f"--work-tree={tree}", "add",
                            "calc.py"], env=env, check=True)  # fmt: skip
    # The same wrong change again: calc.py's entry is the one the tree was cleaned to, so a
    # judge that trusted the tree (git's two-tree merge keeps a dirty file whose entry did not
    # change) would judge the planted file.
    assert judged_again(judging, tmp_path, WRONG + "# one\n") == ["failed: assert 0 == 4"]


REMEMBERS = """
import os
here = os.path.dirname(os.path.abspath(__file__))
marks = [os.path.join(here, "tests", ".seen"), os.path.join(os.path.expanduser("~"), ".seen"),
         "/tmp/.seen"]
seen = any(os.path.exists(m) for m in marks)
for m in marks:
    try:
        open(m, "w").write("x")
    except OSError:
        pass
def add(a, b):
    return a + b if seen else a - b
"""


def test_nothing_a_judged_run_writes_is_seen_by_the_next(judging: Judging, tmp_path: Path) -> None:
    # A second attempt that finds what the first left would pass: state kept between attempts.
    assert judged_again(judging, tmp_path, REMEMBERS) == ["failed: assert 0 == 4"]
    assert judged_again(judging, tmp_path, REMEMBERS + "\n") == ["failed: assert 0 == 4"]


@pytest.fixture
def without_bubblewrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A PATH on which bubblewrap (and unshare) cannot be found, git still can."""
    import shutil

    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for name in ("git",):
        found = shutil.which(name)
        assert found
        (bin_ / name).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_))
    from reins.sandbox import unshare

    unshare.isolation.cache_clear()
    yield
    unshare.isolation.cache_clear()


@pytest.mark.usefixtures("without_bubblewrap")
def test_without_bubblewrap_the_judge_refuses_unless_the_run_said_sandbox_none(
    tmp_path: Path,
) -> None:
    from reins.workspace.judgetree import JudgeTrees

    repo = make_repo(tmp_path / "project", {"calc.py": WRONG, "tests/test_calc.py": TESTS})
    judging = Judging(repo, tmp_path / "root", judge=["tests/**"])
    try:
        with pytest.raises(JudgeError, match="bubblewrap, which cannot run here"):
            verdict(judging.tree("add", {"calc.py": WRONG + "#\n"}), tmp_path)
        judging.judges = JudgeTrees(judging.spaces.places, judging.spaces.base,
                                    judge=["tests/**"], sandbox="none")  # fmt: skip
        facts = verdict(judging.tree("add", {"calc.py": WRONG + "# again\n"}), tmp_path)
        assert [f.actual.split("\n")[0] for f in facts] == ["failed: assert 0 == 4"]
    finally:
        judging.close()


@pytest.mark.usefixtures("without_bubblewrap")
def test_without_bubblewrap_a_run_refuses_and_sandbox_none_says_the_judge_is_unconfined_too(
    tmp_path: Path,
) -> None:
    from reins.errors import Exit
    from tests.kit.codingkit import FILE_HOLDS_KEY, agent, cli, quest_repo

    quest_repo(tmp_path / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    writes = agent(tmp_path / "a.py", "import os\nk = os.path.basename(os.getcwd())\n"
                   "open(k + '.txt', 'w').write(k)\n")  # fmt: skip
    refused = cli("-q", "q", "loop", "--model", f"cmd:{writes}")
    assert refused.exit_code == Exit.USAGE and "bubblewrap" in refused.stderr
    out = cli("-q", "q", "loop", "--model", f"cmd:{writes}", "--sandbox", "none")
    assert out.exit_code == 0, out.output
    assert "the judge runs the code under test UNCONFINED too" in out.stderr
