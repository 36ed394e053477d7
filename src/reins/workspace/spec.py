"""``Workspace``: what a quest whose items are changes to a git repository declares.

It is the ``[workspace]`` table of quest.toml and the ``workspace`` of a Python
:class:`~reins.quest.Quest`: the repository, the base revision every item starts from, how an
item's branch is named, what is kept once an item locks, and how a retry starts. A value,
checked when it is made; nothing here touches git (the loop resolves the base when it starts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

from reins.errors import ConfigError

KEEP = ("failed", "all", "none")
"""Which worktrees stay once their item locks: ``failed`` (those that did not pass, for a person
to look at), ``all`` or ``none``. Branches always stay: a PASS's branch is its result."""
RETRY = ("continue", "fresh")
"""How the next try of an item starts: in the same worktree as the last judged try left it
(``continue``), or from the base revision (``fresh``)."""
SANDBOX = ("none", "bwrap")
"""How an agent is confined: not at all (``none``), or by bubblewrap to its worktree and HOME."""
KEY = "{key}"
DEFAULT_BRANCH = "reins/{key}"

# git check-ref-format's refusals that a template can already commit (the key is made safe).
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
        branch: the item's branch; ``{key}`` is the item's key made safe for git. It needs a
            fixed folder before the key (``reins/{key}``), so no item can name a branch of yours.
        keep: the worktrees kept once their item locks (:data:`KEEP`).
        retry: how a retry starts (:data:`RETRY`).
        sandbox: how the agent is confined (:data:`SANDBOX`); ``reins loop --sandbox`` overrides it.
        worktrees: the folder the worktrees go in (default: ``.reins-worktrees/<quest>`` beside
            the ledger); never inside the repository's own checkout.
    """

    repo: str = "."
    base: str = "HEAD"
    branch: str = DEFAULT_BRANCH
    keep: str = "failed"
    retry: str = "continue"
    sandbox: str = "none"
    worktrees: str | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            check_field(f.name, getattr(self, f.name))


def check_field(name: str, value: object) -> None:
    """Refuse one field's value with a :class:`WorkspaceValueError` that says what to write."""
    if name == "worktrees":
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise WorkspaceValueError(name, "expected a folder")
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
    sample = template.replace(KEY, "item")
    if _BAD_REF.search(sample) or sample.endswith("."):
        raise WorkspaceValueError("branch", f"{template!r:.60} is not a valid git branch name")
