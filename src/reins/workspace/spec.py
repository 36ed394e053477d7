"""``Workspace``: what a quest whose items are changes to a git repository declares.

It is the ``[workspace]`` table of quest.toml and the ``workspace`` of a Python
:class:`~reins.quest.Quest`: the repository, the base revision every item starts from, how an
item's branch is named, what is kept once an item locks, how a retry starts, how the agent is
confined, which files are the judge's, where hidden tests are, and how large a change may be.
A value, checked when it is made; nothing here touches git (the loop resolves the base when it
starts).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, fields

from reins.errors import ConfigError
from reins.sandbox.allow import entry
from reins.workspace import globs

KEEP = ("failed", "all", "none")
"""Which worktrees stay once their item locks: ``failed`` (those that did not pass, for a person
to look at), ``all`` or ``none``. Branches always stay: a PASS's branch is its result."""
RETRY = ("continue", "fresh")
"""How the next try of an item starts: in the same workspace as the last judged try left it
(``continue``), or from the base revision (``fresh``)."""
SANDBOX = ("bwrap", "none")
"""How an agent is confined: by bubblewrap to its workspace and HOME (``bwrap``, the default),
or not at all (``none``, which must be asked for)."""
MAX_FILES = 1000
MAX_BYTES = 1024 * 1024
SETUP_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "requirements*.txt", "*.lock",
               "Pipfile", "tox.ini", "noxfile.py")  # fmt: skip
"""What keys a project's environment unless the quest says: what declares its dependencies."""
TEST = "python -m pytest -q -p no:cacheprovider"
"""The project's whole suite unless the quest says (pytest finding none is no suite)."""
KEY = "{key}"
QUEST = "{quest}"
DEFAULT_BRANCH = "reins/{quest}/{key}"
LEGACY_BRANCH = "reins/{key}"
"""The default before issue 39, shared by every quest: a ledger that gave its items branches
under it keeps it (:mod:`reins.loop.branching`)."""
REFS = "refs/"
"""What a ``hidden`` value naming a ref starts with (:class:`HiddenRef`)."""

# git check-ref-format's refusals that a template can already commit (the key is made safe).
_MODULE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_BAD_REF = re.compile(r"\.\.|@\{|//|[\x00-\x20\x7f~^:?*\[\\]|\.lock(?:/|\Z)|(?:\A|/)\.|/\Z|\A/")


class WorkspaceValueError(ConfigError):
    """A ``[workspace]`` value that is not usable; ``field`` names it (for a document's line)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"workspace {field}: {message}")
        self.field, self.message = field, message


@dataclass(frozen=True, slots=True)
class Workspace:
    """A quest's workspace: the items are changes to the git repository ``repo``.

    Args:
        repo: the repository's folder (for quest.toml, relative to the quest folder).
        base: the revision every item starts from: a branch, a tag, ``HEAD`` or a commit id.
            The loop resolves it to a commit once and records it in the ledger; a later run
            whose base names another commit is refused.
        branch: the item's branch; ``{key}`` is the item's key made safe for git, ``{quest}``
            (optional, a folder of its own) the quest's name. It needs a fixed folder first
            (``reins/{quest}/{key}``), so no item can name a branch of yours. A ledger keeps
            the template it first gave branches under.
        keep: the workspaces kept once their item locks (:data:`KEEP`).
        retry: how a retry starts (:data:`RETRY`).
        sandbox: how the agent is confined (:data:`SANDBOX`); ``reins loop --sandbox`` overrides it.
        worktrees: the folder the workspaces go in (default: ``.reins-worktrees/<quest>`` beside
            the ledger); never inside the repository's own checkout.
        judge: the judge's files (:mod:`reins.workspace.globs` patterns): a change to one is a
            FAIL fact, and the judge's tree takes them from the base. None: the defaults
            (:data:`~reins.workspace.globs.DEFAULT_JUDGE`).
        hidden: a folder outside the repository whose files are copied into the judge's tree
            only (tests the agent never sees), at the same paths; or a folder of a git ref of
            the repository (of the remote, with ``remote``), written as git names a folder of
            a revision, ``REF:FOLDER`` (``refs/reins/hidden:tests``; ``REF:`` its whole
            tree): read into reins' own folder, never into an agent's (:class:`HiddenRef`).
        max_files: the most files one change may touch.
        max_bytes: the most bytes one change may bring (its files, and its patch).
        read: folders and files a sandboxed agent may read besides its workspace and its
            toolchain (for quest.toml, relative to the quest folder; ``~`` is your HOME).
        network: hosts a sandboxed agent may reach besides its model (``host``: ports 443
            and 80; ``host:port``; ``*.domain``), through reins' egress proxy; nothing else.
            The setup reaches these too (package registries).
        setup: the project's environment, built once per base and per content of the
            ``setup_files`` (:mod:`reins.workspace.environment`): shell command lines run in
            order in a tree of the base, in reins' sandbox, ``$REINS_ENV`` the folder to build
            (a virtual environment, say). Files they make in the tree (a generated version
            file, compiled translations) are in every judge's tree.
        setup_files: the files (path patterns, as ``judge``) whose content keys the
            environment: a change to one at the base builds it again.
        python: the interpreter the judge's tests run with, and an agent finds first on its
            ``PATH``: ``$REINS_ENV/…`` for one setup built, else an absolute path of one you
            built. None with a setup: ``$REINS_ENV/bin/python``; None without: reins' own.
        test: the project's own test command, a shell line (``python`` is the interpreter
            above): ``reins land`` runs it on the integration before it moves your branch,
            which moves only when it passes. "": none.
        plugins: the pytest plugins the project's tests need (module names, as
            ``pytest_mock``): every pytest run reins makes of them loads each (``-p``), the
            ``pytest`` check's, a ``from = "pytest"`` scan's and the default ``test``'s; no
            other is loaded (plugin autoload is off).
        remote: the git URL every host works from (a path on shared storage, ``file://``,
            ``ssh://``, ``host:path``, ``https://``), in place of ``repo``: each host fetches
            the base from it and pushes each turn's commit onto the item's branch there, and
            ``reins land`` lands there (:mod:`reins.workspace.remote`). None: ``repo``.
    """

    repo: str = "."
    base: str = "HEAD"
    branch: str = DEFAULT_BRANCH
    keep: str = "failed"
    retry: str = "continue"
    sandbox: str = "bwrap"
    worktrees: str | None = None
    judge: tuple[str, ...] | None = None
    hidden: str | None = None
    max_files: int = MAX_FILES
    max_bytes: int = MAX_BYTES
    read: tuple[str, ...] = ()
    network: tuple[str, ...] = ()
    setup: tuple[str, ...] = ()
    setup_files: tuple[str, ...] = SETUP_FILES
    python: str | None = None
    test: str = TEST
    plugins: tuple[str, ...] = ()
    remote: str | None = None

    @property
    def hidden_ref(self) -> HiddenRef | None:
        """The hidden tests' ref and folder (None: a folder on disk, or none)."""
        return None if self.hidden is None else HiddenRef.parse(self.hidden)

    @property
    def judge_globs(self) -> tuple[str, ...]:
        """The judge's files: the quest's patterns (or the defaults), and compiled Python."""
        return (*(globs.DEFAULT_JUDGE if self.judge is None else self.judge), *globs.ALWAYS)

    def __post_init__(self) -> None:
        for f in fields(self):
            check_field(f.name, getattr(self, f.name))
        if self.judge is not None:  # a list from TOML or a caller: kept as a tuple, a value
            object.__setattr__(self, "judge", tuple(self.judge))
        object.__setattr__(self, "read", tuple(self.read))
        for name in ("network", "setup", "setup_files", "plugins"):
            object.__setattr__(self, name, tuple(getattr(self, name)))


@dataclass(frozen=True, slots=True)
class HiddenRef:
    """Hidden tests kept in git: the folder ``path`` ("": the whole tree) of the commit ``ref``
    names. Written ``REF:FOLDER``, as git names a folder of a revision; a value is one when it
    starts with ``refs/`` and holds a colon (a folder of the quest's is neither)."""

    ref: str
    path: str

    @classmethod
    def parse(cls, value: str) -> HiddenRef | None:
        if not value.startswith(REFS) or ":" not in value:
            return None
        ref, _, path = value.partition(":")
        return cls(ref, path.rstrip("/"))

    def __str__(self) -> str:
        return f"{self.ref}:{self.path}"

    def why_not(self) -> str | None:
        """What is wrong with it, in words (None: nothing)."""
        if _BAD_REF.search(self.ref) or self.ref.endswith(".") or self.ref.count("/") < 2:
            return f"{self.ref!r:.60} is not a valid ref (as refs/reins/hidden)"
        parts = self.path.split("/")
        if self.path and (self.path.startswith("/") or ".." in parts or "\0" in self.path):
            return f"expected a folder inside the ref, as {self.ref}:tests, not {self.path!r:.60}"
        return None


def _a_path(path: object) -> str | None:
    if isinstance(path, str) and path.strip() and "\0" not in path:
        return None
    return f"expected a path, not {path!r:.60}"


def _a_url(url: object) -> str | None:
    if not isinstance(url, str) or not url.strip() or "\0" in url or url.startswith("-"):
        return f"expected a git URL or a path, not {url!r:.60}"
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest.split("/", 1)[0] and ":" in rest.split("/", 1)[0].rsplit("@", 1)[0]:
        # a password in the URL would sit in every git command line reins runs
        return (f"{scheme}:// with a password in it: reins never puts a secret on a command "
                "line; use ssh keys, or a URL without the password")  # fmt: skip
    return None


def _a_line(line: object) -> str | None:
    return None if isinstance(line, str) and line.strip() else "expected a non-empty string"


def _a_pattern(pattern: object) -> str | None:
    return globs.check(pattern) if isinstance(pattern, str) else "expected a string"


def _a_host(host: object) -> str | None:
    if not isinstance(host, str):
        return f'expected a host, as "pypi.org", not {host!r:.60}'
    try:
        entry(host, where="network")
    except ConfigError as exc:
        return str(exc).removeprefix("network: ")
    return None


def _a_module(name: object) -> str | None:
    if isinstance(name, str) and _MODULE.fullmatch(name):
        return None
    return f'expected a module name, as "pytest_mock", not {name!r:.60}'


LISTS: dict[str, tuple[str, Callable[[object], str | None]]] = {
    "read": ('a list of paths, as ["../data"]', _a_path),
    "judge": ('a list of path patterns, as ["tests/**"]', _a_pattern),
    "setup": ('a list of strings, as ["python -m venv $REINS_ENV"]', _a_line),
    "setup_files": ('a list of path patterns, as ["uv.lock"]', _a_pattern),
    "network": ('a list of hosts, as ["pypi.org"]', _a_host),
    "plugins": ('a list of module names, as ["pytest_mock"]', _a_module),
}
"""The fields that are lists: what to write, and what each element must be (None: fine)."""


def check_field(name: str, value: object) -> None:
    """Refuse one field's value with a :class:`WorkspaceValueError` that says what to write."""
    if name == "remote":
        if value is not None and (why := _a_url(value)) is not None:
            raise WorkspaceValueError(name, why)
        return
    if name in ("worktrees", "hidden"):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise WorkspaceValueError(name, "expected a folder")
        ref = HiddenRef.parse(value) if name == "hidden" and value is not None else None
        if ref is not None and (why := ref.why_not()) is not None:
            raise WorkspaceValueError(name, why)
        return
    if name in ("max_files", "max_bytes"):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise WorkspaceValueError(name, f"expected a whole number above 0, not {value!r:.60}")
        return
    if name in LISTS:
        if value is None and name == "judge":
            return
        what, each = LISTS[name]
        if isinstance(value, str) or not isinstance(value, tuple | list):
            raise WorkspaceValueError(name, f"expected {what}")
        for one in value:
            if (why := each(one)) is not None:
                raise WorkspaceValueError(name, why)
        return
    if name == "python":
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise WorkspaceValueError(name, "expected a path to an interpreter")
        return
    if name == "test":
        if not isinstance(value, str):
            raise WorkspaceValueError(name, f'expected a command line, as "{TEST}"')
        return
    if not isinstance(value, str) or not value.strip():
        raise WorkspaceValueError(name, f"expected a non-empty string, not {value!r:.60}")
    choices = {"keep": KEEP, "retry": RETRY, "sandbox": SANDBOX}.get(name)
    if choices is not None and value not in choices:
        raise WorkspaceValueError(name, f"expected one of {', '.join(choices)}, not {value!r:.60}")
    if name == "branch":
        check_branch(value)
    if name == "base" and value.startswith("-"):
        raise WorkspaceValueError(name, f"{value!r:.60} is not a revision")


def check_branch(template: str) -> None:
    """A branch template names one branch per item, in a folder of its own, valid for git."""
    if template.count(KEY) != 1:
        raise WorkspaceValueError("branch", f"expected {KEY} once in it, as in {DEFAULT_BRANCH!r}")
    prefix = template.split(KEY, 1)[0]
    if "/" not in prefix or not prefix.split("/", 1)[0]:
        raise WorkspaceValueError(
            "branch",
            f"{template!r:.60} needs a folder before {KEY} (like {DEFAULT_BRANCH!r}), so that "
            "no item's branch can be one of yours",
        )
    folders = template.split("/")
    if QUEST in template and (folders.count(QUEST) != 1 or template.count(QUEST) != 1
                              or folders[0] == QUEST):  # fmt: skip
        raise WorkspaceValueError(
            "branch", f"{QUEST} is a folder of its own, after a fixed one: {DEFAULT_BRANCH!r}"
        )
    sample = template.replace(KEY, "item").replace(QUEST, "quest")
    if _BAD_REF.search(sample) or sample.endswith("."):
        raise WorkspaceValueError("branch", f"{template!r:.60} is not a valid git branch name")
