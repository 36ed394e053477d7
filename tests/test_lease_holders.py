"""Lease holders: a process named for good by its pid, start time and boot, read from /proc."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reins.store import holder
from reins.workspace.processes import boot_id, pid_namespace, start_time

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="no /proc here")


def blocked(argv0: str = sys.executable) -> subprocess.Popen[bytes]:
    """A child that runs until its stdin is closed."""
    return subprocess.Popen([argv0, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)


def test_the_start_time_is_the_22nd_field_of_the_process_s_stat() -> None:
    fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    assert start_time(os.getpid()) == int(fields[19])
    assert start_time(0) is None and start_time(-1) is None


def test_a_command_name_with_spaces_and_parentheses_does_not_shift_the_fields(
    tmp_path: Path,
) -> None:
    odd = tmp_path / "a) b (c"
    odd.symlink_to(sys.executable)
    child = blocked(str(odd))
    try:
        fields = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
        assert "a) b (c" in Path(f"/proc/{child.pid}/stat").read_text()
        assert start_time(child.pid) == int(fields[19])
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait()


def test_a_process_that_exited_has_no_start_time_even_before_it_is_reaped() -> None:
    child = blocked()
    assert start_time(child.pid) is not None
    name = holder.holder_name("loop", pid=child.pid)
    assert child.stdin is not None
    child.stdin.close()
    deadline = time.monotonic() + 30
    while "Z" not in Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1][:3]:
        assert time.monotonic() < deadline, "the child never exited"
        time.sleep(0.01)
    assert start_time(child.pid) is None  # a zombie runs nothing
    assert holder.gone(name)  # its holder is gone, though the pid is not free yet
    child.wait()
    assert start_time(child.pid) is None


def test_the_boot_id_and_the_pid_namespace_are_the_kernel_s() -> None:
    assert boot_id() == Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    assert pid_namespace() == os.readlink("/proc/self/ns/pid").split("[")[1].rstrip("]")


def test_an_owner_name_carries_its_process_and_says_when_it_is_gone() -> None:
    mine = holder.holder_name("loop")
    assert mine.startswith(f"loop@{holder.host()}:{os.getpid()}:{start_time(os.getpid())}:")
    assert not holder.gone(mine) and not holder.gone(f"{mine}#3")
    child = blocked()
    name = holder.holder_name("ann@laptop", pid=child.pid)  # a driver's own "@" is no holder
    try:
        assert not holder.gone(name)
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait()
    assert holder.gone(name) and holder.gone(f"{name}#0")
    # Its pid reused by a process that started later: still gone.
    me = f"{holder.host()}:{os.getpid()}:{start_time(os.getpid())}:"
    assert holder.gone(mine.replace(me, f"{holder.host()}:{os.getpid()}:1:"))


def test_an_owner_whose_process_this_host_cannot_see_is_never_gone() -> None:
    child = blocked()
    name = holder.holder_name("loop", pid=child.pid)
    assert child.stdin is not None
    child.stdin.close()
    child.wait()
    host, boot = holder.host(), holder.boot()
    assert boot is not None and holder.gone(name)
    for unknown in (
        name.replace(f"@{host}:", "@elsewhere:"),  # another host
        name.replace(f":{boot}.", ":0123456789ab."),  # another boot of this one
        name.replace(f":{boot}.", f":{boot}-4026532999."),  # another pid namespace
        f"loop@{host}:{child.pid}.ab12#0",  # written before holders were recorded
        "ann",
        "batch:3",
    ):
        assert not holder.gone(unknown), unknown
