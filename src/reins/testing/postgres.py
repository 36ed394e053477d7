"""A throwaway PostgreSQL server and the conformance harness of the PostgreSQL engine.

:class:`TempCluster` makes a cluster in a temporary folder with ``initdb`` (trust
authentication, listening on 127.0.0.1 only, on a free port, no Unix socket, ``fsync=off``),
starts it with ``pg_ctl`` and removes it again. PostgreSQL refuses to run as root, so as root the
cluster belongs to the ``postgres`` user (else ``nobody``) and its commands run through
``runuser``. The binaries are found on ``PATH`` or in ``/usr/lib/postgresql/*/bin``.

:class:`PostgresHarness` is the :class:`~reins.testing.harness.StoreHarness` of
:mod:`reins.store.postgres`: every ledger is a schema of its own on one server.
"""

from __future__ import annotations

import glob
import hashlib
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from reins.store.owner import Owner
from reins.store.protocol import Store

STARTUP_TIMEOUT = 60.0


def postgres_bin(name: str = "initdb") -> Path | None:
    """The PostgreSQL program ``name`` (newest major version first), or None."""
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=_major, reverse=True):
        if (Path(folder) / name).exists():
            return Path(folder) / name
    found = shutil.which(name)
    return Path(found) if found else None


def _major(folder: str) -> int:
    try:
        return int(Path(folder).parent.name)
    except ValueError:
        return 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TempCluster:
    """A PostgreSQL server of its own in a temporary folder. Use as a context manager.

    Raises:
        FileNotFoundError: PostgreSQL's binaries are not installed.
        RuntimeError: the server did not start (its log is in the message).
    """

    def __init__(self, *, settings: dict[str, str] | None = None) -> None:
        initdb = postgres_bin("initdb")
        if initdb is None:
            raise FileNotFoundError("initdb not found on PATH or in /usr/lib/postgresql/*/bin")
        self.bin = initdb.parent
        self.settings = {"fsync": "off", "full_page_writes": "off", **(settings or {})}
        self.user: str | None = None
        if os.geteuid() == 0:
            self.user = next(u for u in ("postgres", "nobody") if _has_user(u))
        self.dir = Path(tempfile.mkdtemp(prefix="reins-pg-"))
        self.port = 0
        self.started = False

    @property
    def url(self) -> str:
        """The server's base URL (database ``postgres``, superuser ``postgres``)."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bin / argv[0]), *argv[1:]]
        if self.user is not None:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        return subprocess.run(
            cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False
        )

    def start(self) -> TempCluster:
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)
        data = str(self.dir / "data")
        done = self._run(
            "initdb", "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C"
        )
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed: {done.stderr.strip() or done.stdout.strip()}")
        log = self.dir / "server.log"
        for _ in range(5):  # a port found free may be taken before the server binds it
            self.port = _free_port()
            opts = {
                "listen_addresses": "127.0.0.1",
                "port": str(self.port),
                "unix_socket_directories": "''",
                **self.settings,
            }
            options = " ".join(f"-c {k}={v}" for k, v in opts.items())
            done = self._run(
                "pg_ctl", "-D", data, "-l", str(log), "-o", options, "-w", "-t", "60", "start"
            )
            if done.returncode == 0:
                self.started = True
                self._wait()
                return self
        text = log.read_text(errors="replace")[-2000:] if log.exists() else done.stderr
        self.stop()
        raise RuntimeError(f"PostgreSQL did not start: {text}")

    def _wait(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1.0):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stop(self) -> None:
        if self.started:
            self._run("pg_ctl", "-D", str(self.dir / "data"), "-m", "immediate", "-w", "stop")
            self.started = False
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> TempCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


class PostgresHarness:
    """The harness of the PostgreSQL engine: each ledger is a fresh schema on one server.

    ``url`` is the server's base URL (no ``schema`` parameter); locations are that URL with
    ``?schema=NAME``.
    """

    name = "postgres"
    earlier_versions: tuple[int, ...] = (0, 1, 2, 3, 4)

    def __init__(self, url: str) -> None:
        self.url = url
        self._tag = os.urandom(4).hex()
        self._names = itertools.count()

    def _fresh(self) -> str:
        return f"{self.url}{'&' if '?' in self.url else '?'}schema=h{self._tag}_{next(self._names)}"

    @staticmethod
    def _schema(location: str) -> str:
        from reins.store.postgres.target import parse

        return parse(location).schema

    def _connect(self, location: str | None = None) -> Any:
        import psycopg

        if location is None:
            return psycopg.connect(self.url, autocommit=True)
        from reins.store.postgres.target import parse

        return psycopg.connect(parse(location).conninfo, autocommit=True)

    def create(self) -> str:
        location = self._fresh()
        self.open(location, create=True).close()
        return location

    def missing(self) -> str:
        return self._fresh()

    def open(self, location: str, *, create: bool = False, owner: Owner | None = None) -> Store:
        from reins.store.postgres import PostgresStore

        return PostgresStore.open(location, create=create, owner=owner)

    def fingerprint(self, location: str) -> str:
        """Every row of every table in the schema, and the catalog's tables and triggers."""
        from psycopg import sql

        schema = self._schema(location)
        h = hashlib.sha256()
        with self._connect() as conn:
            catalog = conn.execute(
                "SELECT c.relname, c.relkind::text, "
                "coalesce((SELECT string_agg(t.tgname || ':' || t.tgenabled::text, ',' "
                "ORDER BY t.tgname) FROM pg_trigger t WHERE t.tgrelid = c.oid), '') "
                "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = %s ORDER BY c.relname",
                (schema,),
            ).fetchall()
            h.update(repr(catalog).encode())
            for relname, relkind, _ in catalog:
                if relkind != "r":
                    continue
                table = sql.Identifier(schema, relname)
                rows = conn.execute(
                    sql.SQL("SELECT t::text FROM {} t ORDER BY 1").format(table)
                ).fetchall()
                h.update(relname.encode() + b"\0" + repr(rows).encode() + b"\0")
        return h.hexdigest()

    def make_foreign(self) -> str:
        from psycopg import sql

        location = self._fresh()
        name = sql.Identifier(self._schema(location))
        with self._connect() as conn:
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(name))
            conn.execute(sql.SQL("CREATE TABLE {}.notes (body text)").format(name))
            conn.execute(sql.SQL("INSERT INTO {}.notes VALUES ('mine, not a ledger')").format(name))
        return location

    def make_newer(self) -> str:
        from reins.store.postgres.schema import SCHEMA_VERSION

        location = self.create()
        with self._connect(location) as conn:
            conn.execute("UPDATE reins_schema SET version = %s", (SCHEMA_VERSION + 1,))
        return location

    def make_damaged(self) -> str | None:
        """A ledger whose log table is gone (dropped by hand: no trigger can stop that)."""
        location = self.create()
        with self._connect(location) as conn:
            conn.execute("DROP TABLE attempts")
        return location

    def make_mislabelled(self) -> str | None:
        location = self.create()
        with self._connect(location) as conn:
            conn.execute("UPDATE reins_schema SET version = 2")
        return location

    def make_unmigratable(self) -> str | None:
        location = self.make_at_version(2)
        self.execute(
            location,
            "CREATE FUNCTION mine() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'usage_shards is mine'; END $$; "
            "CREATE TRIGGER mine BEFORE UPDATE ON usage_shards FOR EACH ROW "
            "EXECUTE FUNCTION mine()",
        )
        return location

    def make_at_version(self, version: int) -> str:
        from psycopg import sql

        from reins.store.postgres.schema import MARKER, MIGRATIONS

        location = self._fresh()
        with self._connect() as conn:
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(self._schema(location))))
        with self._connect(location) as conn, conn.transaction():
            conn.execute(MARKER.encode())
            for v in range(1, version + 1):
                conn.execute(MIGRATIONS[v].encode())
            conn.execute("UPDATE reins_schema SET version = %s", (version,))
            if version >= 1:
                _seed_v1(conn)
            if version >= 2:  # what v2 keeps beside the log: each item's last root cause
                conn.execute("UPDATE items SET root_cause = 'not-bad' WHERE key = 'b'")
            if version >= 3:  # what v3 counts beside the log: the attempts per kind
                conn.execute("UPDATE usage_shards SET judged = 2 WHERE shard = 0")
        return location

    def execute(self, location: str, statement: str) -> None:
        with self._connect(location) as conn, conn.transaction():
            conn.execute(statement.encode())


def _seed_v1(conn: Any) -> None:
    """Items a, b, c at schema v1: a locked PASS, b with one judged FAIL (root not-bad)."""
    stamp = "2026-01-01T00:00:00.000Z"
    for key, state, tries, turns in (("a", "PASS", 0, 1), ("b", "TODO", 1, 1), ("c", "TODO", 0, 0)):
        conn.execute(
            "INSERT INTO items (key, state, tries, turns, payload, created_at, updated_at, "
            "locked_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (key, state, tries, turns, f'{{"word":"{key}"}}', stamp, stamp,
             stamp if state != "TODO" else None),
        )  # fmt: skip
    conn.execute(
        "INSERT INTO attempts (item_id, turn, kind, driver, state_after, tries_after, outcome, "
        "recorded_at) VALUES (1, 1, 'judged', 'old', 'PASS', 0, 'PASS', %s)",
        (stamp,),
    )
    conn.execute(
        "INSERT INTO attempts (item_id, turn, kind, driver, state_after, tries_after, outcome, "
        "root_cause, facts, recorded_at) VALUES (2, 1, 'judged', 'old', 'TODO', 1, 'FAIL', "
        "'not-bad', %s, %s)",
        ('[{"rule":"not-bad","where":"answer","expected":"good","actual":"bad"}]', stamp),
    )
    conn.execute("UPDATE usage_shards SET attempts = 2 WHERE shard = 0")
    conn.execute(
        "INSERT INTO rule_count_shards (shard, rule, fired, root) VALUES (0, 'not-bad', 1, 1)"
    )
