"""The PostgreSQL engine: many hosts share one ledger on one server, one schema per quest run.

Open it with a URL: ``postgresql://user:password@host:5432/db?schema=NAME``. The schema is the
URL's ``schema`` parameter, else the ``schema`` argument (the quest's name), else ``reins``,
folded to a safe identifier (:func:`reins.store.postgres.target.schema_name`); every session
runs with it as its search path, so tables go unqualified and the invariant queries of
:mod:`reins.store.checks` run as they are. Other parameters go to libpq as usual (``sslmode``,
``options=-c lock_timeout=5s`` to change a timeout).

Each session gets server-side timeouts, so that a stuck client cannot hold a row lock for ever:
``idle_in_transaction_session_timeout`` 30 s, ``lock_timeout`` 10 s, ``statement_timeout``
60 s. Every store call is one short transaction on a connection from a small pool (at most
four, which is how many calls the loop makes at once). Leases are taken with ``SELECT … FOR
UPDATE SKIP LOCKED``, several in one statement for the loop, and commit without waiting for
the disk (:mod:`reins.store.postgres.leases` says why that is safe); a turn is one statement,
the server-side ``reins_turn``, which locks its item ``FOR UPDATE``, checks the claim and the
ratchet, and writes the attempt, the item and the counters, committing durably. Triggers
enforce the ratchet and keep the status counters as in SQLite. A connection lost in the
middle of a turn is retried once on a fresh connection with the same draft, whose nonce finds a
turn that did commit; failing that, the error names the server (never the password) and says
the turn is either wholly recorded or absent.

Needs ``psycopg[binary,pool]`` (the extra ``reins-quest[postgres]``).
"""

from __future__ import annotations

from reins.store.engine import EngineSQL, JobsSQL, PeopleSQL
from reins.store.ledger import Ledger
from reins.store.owner import Owner
from reins.store.postgres import counters, exports, items, leases, record
from reins.store.postgres.connection import Database
from reins.store.postgres.setup import Opened, open_schema
from reins.store.postgres.target import Target, parse


def _jobs() -> JobsSQL[Database]:
    from reins.store.postgres import jobs

    return jobs


def _people() -> PeopleSQL[Database]:
    from reins.store.postgres import people

    return people


SQL: EngineSQL[Database] = EngineSQL(items, leases, record, counters, exports, _jobs, _people)


class PostgresStore(Ledger[Database]):
    """A reins ledger in one schema of a PostgreSQL database. Open it with :meth:`open`."""

    def __init__(self, db: Database, opened: Opened) -> None:
        super().__init__(
            db, SQL, version=opened.version, owner=opened.owner, adopted=opened.adopted
        )

    @classmethod
    def open(
        cls,
        url: str,
        *,
        create: bool = False,
        schema: str | None = None,
        owner: Owner | None = None,
    ) -> PostgresStore:
        """Open the ledger at ``url`` for ``owner``; with ``create``, make its schema if it is
        missing. A new ledger records ``owner``; one that recorded none yet takes it (see
        :attr:`adopted`); one that recorded another is refused, untouched.

        Raises:
            ConfigError: the URL is malformed. NotFound: no ledger there and ``create`` is
            false. CorruptLedger: the schema holds something else, a newer ledger, or tables
            that are not those of its version. WrongQuest: the ledger belongs to another owner.
            LedgerError: the server cannot be reached; a migration failed (rolled back).
        """
        target = parse(url, schema)
        opened = open_schema(target, create=create, owner=owner)
        return cls(Database(target), opened)

    @property
    def target(self) -> Target:
        return self._db.target

    @property
    def schema(self) -> str:
        return self._db.target.schema
