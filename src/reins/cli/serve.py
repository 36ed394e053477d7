"""``reins serve``: the dashboard, a local web app over the ledger."""

from __future__ import annotations

import click

from reins.cli.app import Env, emit_json, pass_env, say_refused
from reins.cli.lane import by_option
from reins.cli.shapes.setup import Serving
from reins.cli.work import json_option


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
@by_option
@json_option
@pass_env
def serve(
    env: Env, host: str, port: int, read_only: bool, want_token: bool, by: str, as_json: bool
) -> None:
    """Serve the dashboard: board, items, timelines, review queue (127.0.0.1 by default).

    Board, items, each item's timeline and the review queue, live while loops record.
    Bound to 127.0.0.1 by default. Open the link printed at start once: it carries the access
    token (a cookie carries it on), which every action needs, and on any other address every
    page too. Every action a page posts carries a CSRF token as well. Accept and Reject record
    the same turns as `reins resolve`.
    """
    try:
        import uvicorn

        from reins.web.app import create_app
        from reins.web.security import Guard
    except ImportError as exc:
        raise web_missing(exc) from exc
    import socket

    from reins.errors import ConfigError

    store = env.ledger()
    quest = env.quest_if_given()
    publish = None
    if quest is not None and env.settings.auto_export:
        from reins.store.export import export

        results = env.results_path
        publish = lambda: say_refused(export(store, results))  # noqa: E731
    guard = Guard.for_host(host, token_to_read=want_token)
    app = create_app(store, quest, guard, read_only=read_only, by=by, publish=publish)
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.create_server((host, port), family=family)
    except OSError as exc:  # a port in use, an unknown host: the user's to fix, not a crash
        raise ConfigError(f"serve: cannot listen on {host}:{port}: {listen_hint(exc)}") from None
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}/?token={guard.token}"
    if as_json:
        emit_json(Serving(url, bound, read_only, guard.token))
    else:
        mode = "read-only" if read_only else "actions on" if quest is not None else "no quest"
        click.echo(f"reins serve: {url}  ({store.location}, {mode}; Ctrl-C stops)")
    # No colours: their control sequences would reach the terminal escaped (printable_streams).
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="off", use_colors=False
    )
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
