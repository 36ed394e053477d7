"""The desk's reviewers: each person a token of their own, bound to their name.

``reins serve --reviewer ann --reviewer bob`` prints one link per person. Each token is an HMAC
of the person's name under a secret kept in the project's ``.reins/desk.key`` (made at first
use, readable by its owner only), so a person's link works again after a restart, and no token
is stored anywhere or named on a command line. A new secret (``--new-links``) ends every link
given before. The name a decision records is the one its token is bound to
(:meth:`reins.web.security.Guard.signer`): a person cannot act as another by typing a name.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import secrets
from pathlib import Path

from reins.errors import ConfigError

KEY_FILE = Path(".reins") / "desk.key"
_NAME = re.compile(r"[^\W][\w.@+-]{0,63}")
_PURPOSE = b"reins desk reviewer\x00"


def names(given: tuple[str, ...]) -> tuple[str, ...]:
    """The reviewers named, each once, in order.

    Raises:
        ConfigError: a name that is not a word (letters, digits, ``. @ + - _``; at most 64).
    """
    for name in given:
        if not _NAME.fullmatch(name):
            raise ConfigError(
                f"--reviewer {name!r}: a reviewer's name is one word of letters, digits and "
                "'. @ + - _' (at most 64 characters)"
            )
    return tuple(dict.fromkeys(given))


def secret(folder: Path, *, renew: bool = False) -> bytes:
    """The desk's secret in ``folder/.reins/desk.key``: made (mode 0600) when there is none or
    ``renew`` asks for a new one, else read.

    Raises:
        ConfigError: the file cannot be read or made, or another user can read it.
    """
    path = folder / KEY_FILE
    try:
        if renew:
            path.unlink(missing_ok=True)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return _read(path)
        with os.fdopen(fd, "wb") as out:
            made = secrets.token_bytes(32)
            out.write(made.hex().encode())
        return made
    except OSError as exc:
        raise ConfigError(f"the desk's key {path}: {exc.strerror or exc}") from None


def _read(path: Path) -> bytes:
    if path.stat().st_mode & 0o077:
        raise ConfigError(
            f"the desk's key {path} can be read by others: chmod 600 it, or start with "
            "--new-links to make a new one (every link given before stops working)"
        )
    try:
        found = bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (ValueError, UnicodeDecodeError):
        found = b""
    if len(found) < 16:
        raise ConfigError(f"the desk's key {path} is damaged: start with --new-links")
    return found


def token(key: bytes, name: str) -> str:
    """The access token of reviewer ``name`` under ``key``."""
    mac = hmac.new(key, _PURPOSE + name.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac[:24]).decode().rstrip("=")


def roster(key: bytes, people: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """Each of ``people`` with their token, as :class:`~reins.web.security.Guard` holds them."""
    return tuple((name, token(key, name)) for name in people)
