"""``reins serve``: the dashboard, a local web app over the ledger."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from reins.cli.app import Env, emit_json, pass_env, say_refused
from reins.cli.lane import by_option
from reins.cli.shapes.setup import Serving
from reins.cli.work import json_option

if TYPE_CHECKING:
    import socket

    from reins.web.security import Guard


def web_missing(exc: ImportError) -> Exception:
    """The error for a missing web dependency: what to install."""
    from reins.errors import ConfigError

    return ConfigError(f"the web dashboard needs: pip install 'reins-quest[web]' ({exc.name})")


def listen_hint(exc: OSError) -> str:
    """Why a listening socket could not be made, and what to do about it."""
    import errno
    import socket

    if isinstance(exc, socket.gaierror):
        return f"unknown host ({exc.strerror or exc}): give a name or address of this machine"
    if exc.errno == errno.EADDRINUSE:
        return (
            "the port is in use (is another `reins serve` running?). Stop it, or pick "
            "another port: --port 0 takes a free one"
        )
    if exc.errno == errno.EACCES:
        return f"{exc.strerror or exc}: ports below 1024 need privileges; use --port 0"
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"{exc.strerror or exc}: no interface of this machine has that address"
    return str(exc)


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host``:``port``.

    Raises:
        ConfigError: a port in use, an unknown host: the user's to fix, not a crash.
    """
    import socket

    from reins.errors import ConfigError

    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        raise ConfigError(f"serve: cannot listen on {host}:{port}: {listen_hint(exc)}") from None


def publisher(env: Env) -> Callable[[], object]:
    """What exports the locks an action made, as the CLI does after ``resolve``."""
    from reins.store.export import export

    store, results = env.ledger(), env.results_path
    return lambda: say_refused(export(store, results))


def links(host: str, port: int, guard: Guard, read_only: bool) -> Serving:
    """Where the dashboard listens, and the links to open: the one shared link, or each
    reviewer's own (the address alone then: no shared token admits anyone)."""
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}/"
    if not guard.people:
        return Serving(f"{base}?token={guard.token}", port, read_only, guard.token)
    own = {name: f"{base}?token={token}" for name, token in guard.people}
    return Serving(base, port, read_only, None, own)


def reviewer_tokens(
    env: Env, given: tuple[str, ...], *, renew: bool
) -> tuple[tuple[str, str], ...]:
    """Each reviewer named and their token, under the project's desk key (none named: none)."""
    from pathlib import Path

    from reins.errors import ConfigError
    from reins.web.people import names, roster, secret

    if not given:
        if renew:
            raise ConfigError("--new-links makes new links for reviewers: name them (--reviewer)")
        return ()
    folder = env.settings.project.folder or Path.cwd()
    return roster(secret(folder, renew=renew), names(given))


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on; 0 picks a free one (printed at start).",
)
@click.option("--read-only", is_flag=True, help="Show the ledger; offer no action.")
@click.option(
    "--token",
    "want_token",
    is_flag=True,
    help="Require the access token to read pages on loopback too (actions always need it).",
)
@click.option(
    "--reviewer",
    "reviewers",
    multiple=True,
    metavar="NAME",
    help="A person who reviews here (repeat for each): each gets a link of their own, and "
    "every action records the name their link is bound to; no name is typed.",
)
@click.option(
    "--new-links",
    is_flag=True,
    help="With --reviewer: make a new desk key, so every reviewer's link given before stops "
    "working.",
)
@by_option
@json_option
@pass_env
def serve(
    env: Env,
    host: str,
    port: int,
    read_only: bool,
    want_token: bool,
    reviewers: tuple[str, ...],
    new_links: bool,
    by: str,
    as_json: bool,
) -> None:
    """Serve the dashboard: board, items, timelines, review queue (127.0.0.1 by default).

    Board, items, each item's timeline and the review queue, live while loops record.
    Bound to 127.0.0.1 by default. Open the link printed at start once: it carries the access
    token (a cookie carries it on), which every action needs, and on any other address every
    page too. Every action a page posts carries a CSRF token as well. Accept and Reject record
    the same turns as `reins resolve`.

    \b
    Who acts:
      one person   one link, a new token at every start; actions record the
                   name typed under "by" on the page, else --by.
      --reviewer   (or reins.toml's reviewers = ["ann", "bob"]; flags win)
                   one link per person, each token bound to its name and kept
                   across restarts (the key is .reins/desk.key in the project,
                   0600); actions record that name, and only the person who
                   decided may undo it. --new-links ends every earlier link.
    """
    try:
        import uvicorn

        from reins.web.app import create_app
        from reins.web.security import Guard
    except ImportError as exc:
        raise web_missing(exc) from exc
    store = env.ledger()
    quest = env.quest_if_given()
    publish = publisher(env) if quest is not None and env.settings.auto_export else None
    people = reviewer_tokens(env, reviewers or env.settings.reviewers, renew=new_links)
    guard = Guard.for_host(host, token_to_read=want_token, people=people)
    app = create_app(store, quest, guard, read_only=read_only, by=by, publish=publish)
    sock = listen(host, port)
    serving = links(host, sock.getsockname()[1], guard, read_only)
    if as_json:
        emit_json(serving)
    else:
        mode = "read-only" if read_only else "actions on" if quest is not None else "no quest"
        click.echo(f"reins serve: {serving.url}  ({store.location}, {mode}; Ctrl-C stops)")
        for name, link in serving.reviewers.items():
            click.echo(f"  {name}: {link}")
    # No colours: their control sequences would reach the terminal escaped (printable_streams).
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="off", use_colors=False
    )
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
