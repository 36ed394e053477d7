"""The remote: the one repository every host of a quest works from (``[workspace] remote``).

::

    root/.reins/remote.git    this host's copy: the remote's branches, tags and refs/reins/*

A host reads the remote through its copy, fetched when a run starts: the base is resolved and
its history copied from there, as from the user's repository (the copy stands for it:
:class:`~reins.workspace.repository.Repository`, bare). It writes to the remote itself, and
only by a push pinned to the value the ref is expected to hold (``--force-with-lease=REF:OLD``;
an empty OLD: the ref must not exist), so a host whose view is stale moves nothing: each turn's
commit onto its item's branch (:func:`publish`, before the turn is recorded: a locked item's
result is on the remote before its lock), and ``reins land``'s integration and the branch it
lands on. A push that finds its commit there already does nothing, so a run that died between
a push and what follows it converges when it is run again, on any host.

The URL is any git URL (a path on shared storage, ``file://``, ``ssh://``, ``host:path``,
``https://``); git reads no configuration of the user's (:mod:`reins.workspace.git`), so an
ssh remote authenticates with ssh's own keys and agent, and a URL with a password is refused
(:mod:`reins.workspace.spec`).
"""

from __future__ import annotations

import os

from reins.errors import WorkspaceError
from reins.workspace.basestore import seal
from reins.workspace.git import git, last_line
from reins.workspace.places import Places, locked
from reins.workspace.repository import Repository

REFSPECS = ("+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*", "+refs/reins/*:refs/reins/*")
"""What a host's copy fetches: branches and tags (the base, and the branches reins pushed) and
reins' own refs (the integrations of ``reins land``)."""
FETCH = ("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules")


def mirrored(url: str, places: Places) -> Repository:
    """This host's copy of the remote at ``url``, fetched now (made first if missing).

    Raises:
        WorkspaceError: the remote cannot be read.
    """
    path = places.mirror
    with locked(os.path.join(places.own, "remote.lock")):  # one fetch into it at a time
        if not os.path.isfile(os.path.join(path, "HEAD")):
            git(["init", "--quiet", "--bare", "--template=", path], cwd=places.own)
        seal(path)
        done = git([f"--git-dir={path}", *FETCH, "--prune", url, *REFSPECS], cwd=places.own,
                   check=False)  # fmt: skip
        if done.returncode != 0:
            raise WorkspaceError(f"the remote {url} cannot be read: {last_line(done)}")
        head = _head(url, places.own)
        if head is not None:  # HEAD names what the remote's HEAD names
            git([f"--git-dir={path}", "symbolic-ref", "HEAD", head], cwd=places.own)
    return Repository(None, path, path)


def ref_at(url: str, ref: str, *, cwd: str) -> str | None:
    """The commit ``ref`` holds on the remote now (None: no such ref).

    Raises:
        WorkspaceError: the remote cannot be read.
    """
    done = git(["ls-remote", "--end-of-options", url, ref], cwd=cwd, check=False)
    if done.returncode != 0:
        raise WorkspaceError(f"the remote {url} cannot be read: {last_line(done)}")
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        commit, _, name = line.partition("\t")
        if name == ref:
            return commit
    return None


class Moved(WorkspaceError):
    """A pinned push refused: the remote's ref is not where the push expected it."""


def push(store: str, url: str, commit: str, ref: str, *, old: str | None) -> None:
    """Move ``ref`` on the remote from ``old`` (None: it must not exist) to ``commit``, sent
    from the git folder ``store``, or not at all.

    Raises:
        WorkspaceError: the ref is not at ``old`` any more (another host moved it), or the
            push failed.
    """
    args = [f"--git-dir={store}", "push", "--quiet", "--porcelain", "--no-verify", "--atomic",
            f"--force-with-lease={ref}:{old or ''}", url, f"{commit}:{ref}"]  # fmt: skip
    done = git(args, cwd=store, check=False)
    if done.returncode == 0:
        return
    said = done.stdout.decode("utf-8", "replace")
    if "stale info" in said or "fetch first" in said or "already exists" in said:
        was = f"at {old[:12]}" if old else "absent"
        raise Moved(
            f"the remote's {ref} is no longer {was}: another host moved it (nothing was pushed)"
        )
    raise WorkspaceError(f"push of {ref} to {url} failed: {last_line(done)}")


def publish(
    store: str, url: str, commit: str, ref: str, *, copy: Repository, base: str,
    expected: str | None = None,
) -> None:  # fmt: skip
    """``commit`` onto ``ref`` on the remote (an item's branch), from reins' ``store`` of the
    item; nothing when it is there already. A ref of that name that reins did not make for
    this base (its history, as this host's ``copy`` knows it, does not hold the base) is
    refused, as the user's repository's is.

    First a push pinned to ``expected`` (what this process last pushed there; None: nothing,
    the ref must not exist), which costs one round trip; only when the remote refuses it is
    the ref read and checked (a crash's rerun, a branch of another run or of someone else's).

    Raises:
        WorkspaceError: the branch is not reins', another host moved it, or the push failed.
    """
    try:
        push(store, url, commit, ref, old=expected)
        return
    except Moved:
        pass
    old = ref_at(url, ref, cwd=store)
    if old == commit:
        return
    known = old is not None and _known(copy, old)
    if old is not None and known and not copy.holds(base, old) and not copy.holds(old, base):
        raise WorkspaceError(
            f"the remote's {ref} exists but reins did not make it for this ledger (its "
            f"history does not hold the base {base[:12]}): delete it there, or name the "
            "branches otherwise ([workspace] branch)"
        )
    push(store, url, commit, ref, old=old)


def _known(copy: Repository, commit: str) -> bool:
    args = [f"--git-dir={copy.common}", "cat-file", "-e", f"{commit}^{{commit}}"]
    return git(args, cwd=copy.common, check=False).returncode == 0


def _head(url: str, cwd: str) -> str | None:
    """The branch the remote's HEAD names (None: detached, unborn, or not said)."""
    done = git(["ls-remote", "--symref", "--end-of-options", url, "HEAD"], cwd=cwd, check=False)
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        said, _, name = line.partition("\t")
        if name == "HEAD" and said.startswith("ref: refs/heads/"):
            return said.removeprefix("ref: ")
    return None
