"""``reins hook install claude`` / ``uninstall``: reins in a project's Claude Code settings.

Install merges two entries into the project, never clobbering what is there: the stop hook into
``.claude/settings.json`` (``hooks.Stop``) and the MCP server into ``.mcp.json``
(``mcpServers.reins``). Each file that existed is backed up first (``<file>.reins-backup``),
and a manifest (``.claude/reins-install.json``) records exactly what was added and which
containers were created for it. Uninstall removes exactly that: the entries, the containers it
created once they are empty, the files and folder it created, the backups and the manifest. A
file nobody touched since is written back byte for byte from its backup.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reins.errors import ConfigError

SETTINGS = ".claude/settings.json"
SERVERS = ".mcp.json"
MANIFEST = ".claude/reins-install.json"
BACKUP = ".reins-backup"
SERVER_NAME = "reins"


@dataclass(frozen=True, slots=True)
class Launch:
    """How the agent starts reins: the executable and the options before the command."""

    program: list[str]  # e.g. ["/venv/bin/reins"] or [python, "-m", "reins.cli"]
    options: list[str]  # e.g. ["--quest", "emails"]

    def hook_command(self, project: Path) -> str:
        """The stop hook's command, pinned to ``project`` (made absolute): the hook finds the
        project from there when the agent's own folder does not lead to it."""
        import shlex

        pinned = ["--project", os.path.abspath(project)]
        return shlex.join([*self.program, *self.options, "hook", "stop", *pinned])

    def server(self) -> dict[str, Any]:
        return {
            "type": "stdio",
            "command": self.program[0],
            "args": [*self.program[1:], *self.options, "mcp"],
        }


def _read(path: Path) -> tuple[bytes | None, dict[str, Any]]:
    """The file's bytes (None if missing) and its JSON object."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, {}
    except OSError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}): fix it, then install") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object: fix it, then install")
    return raw, data


def _child(parent: dict[str, Any], key: str, kind: type, where: str) -> tuple[Any, bool]:
    """``parent[key]``, created empty if missing; and whether it was created."""
    if key not in parent:
        parent[key] = kind()
        return parent[key], True
    if not isinstance(parent[key], kind):
        raise ConfigError(f"{where}: {key!r} is not a JSON {kind.__name__}: fix it, then install")
    return parent[key], False


def _write(path: Path, data: dict[str, Any]) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    tmp = path.with_name(path.name + ".reins-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def install(project: Path, launch: Launch) -> list[str]:
    """Add the stop hook and the MCP server to ``project``; returns the files written.

    Raises:
        ConfigError: already installed, a file is not valid JSON, or a server named ``reins``
            exists already. Nothing is written then.
    """
    manifest_path = project / MANIFEST
    if manifest_path.exists():
        raise ConfigError(f"reins is installed already ({manifest_path}): uninstall it first")
    settings_path, servers_path = project / SETTINGS, project / SERVERS
    settings_raw, settings = _read(settings_path)
    servers_raw, servers = _read(servers_path)
    # Everything is checked before anything is written.
    hooks, made_hooks = _child(settings, "hooks", dict, str(settings_path))
    stops, made_stop = _child(hooks, "Stop", list, f"{settings_path} hooks")
    entry = {"hooks": [{"type": "command", "command": launch.hook_command(project)}]}
    stops.append(entry)
    table, made_table = _child(servers, "mcpServers", dict, str(servers_path))
    if SERVER_NAME in table:
        raise ConfigError(
            f"{servers_path} has an MCP server named {SERVER_NAME!r} already: remove or rename "
            "it, then install"
        )
    table[SERVER_NAME] = launch.server()
    made_dir = not settings_path.parent.exists()
    settings_path.parent.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"made_dir": made_dir, "files": {}}
    for path, raw, data, added in (
        (
            settings_path,
            settings_raw,
            settings,
            {"stop_hook": entry, "made": [made_hooks, made_stop]},
        ),
        (servers_path, servers_raw, servers, {"server": table[SERVER_NAME], "made": [made_table]}),
    ):
        if raw is not None:
            path.with_name(path.name + BACKUP).write_bytes(raw)
        _write(path, data)
        rel = str(path.relative_to(project))
        manifest["files"][rel] = {"existed": raw is not None, **added}
    _write(manifest_path, manifest)
    return [SETTINGS, SERVERS]


def uninstall(project: Path) -> list[str]:
    """Remove exactly what :func:`install` added to ``project``; returns the files restored.

    Raises:
        ConfigError: nothing is installed (no manifest), or a file is not valid JSON.
    """
    manifest_path = project / MANIFEST
    if not manifest_path.exists():
        raise ConfigError(f"reins is not installed in {project} (no {MANIFEST}): nothing to do")
    _, manifest = _read(manifest_path)
    files = manifest.get("files", {})
    done = []
    for rel, added in files.items():
        path = project / rel
        raw, data = _read(path)
        if raw is None:
            continue  # removed by hand since: nothing of ours is left in it
        if "stop_hook" in added:
            _remove_hook(data, added["stop_hook"], added["made"])
        if "server" in added:
            _remove_server(data, added["server"], added["made"])
        backup = path.with_name(path.name + BACKUP)
        original = _read(backup) if backup.exists() else (None, {})
        if original[0] is not None and original[1] == data:
            path.write_bytes(original[0])  # untouched since: the very bytes it had
        elif not added["existed"] and not data:
            path.unlink()
        else:
            _write(path, data)
        backup.unlink(missing_ok=True)
        done.append(rel)
    manifest_path.unlink()
    folder = project / ".claude"
    if manifest.get("made_dir") and folder.exists() and not any(folder.iterdir()):
        folder.rmdir()
    return done


def _remove_hook(data: dict[str, Any], entry: Any, made: list[bool]) -> None:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict) or not isinstance(hooks.get("Stop"), list):
        return
    stops: list[Any] = hooks["Stop"]
    for i in range(len(stops) - 1, -1, -1):
        if stops[i] == entry:
            del stops[i]
            break
    made_hooks, made_stop = [*made, False, False][:2]
    if made_stop and not stops:
        del hooks["Stop"]
    if made_hooks and not hooks:
        del data["hooks"]


def _remove_server(data: dict[str, Any], server: Any, made: list[bool]) -> None:
    table = data.get("mcpServers")
    if isinstance(table, dict) and table.get(SERVER_NAME) == server:
        del table[SERVER_NAME]
    if made and made[0] and isinstance(table, dict) and not table:
        del data["mcpServers"]
