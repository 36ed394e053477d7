"""The ``backends`` command: which generators are installed, and the options each one takes."""

from __future__ import annotations

import click

from reins.cli.app import emit_json
from reins.cli.shapes.setup import AgentRow, BackendRow, PriceRow
from reins.cli.work import json_option


def _summary(obj: object) -> str:
    doc = (getattr(obj, "__doc__", None) or "").strip()
    return doc.splitlines()[0].replace("``", "") if doc else ""


def describe() -> list[BackendRow]:
    """Each registered backend: name, entry point, one-line summary, options, or why it broke."""
    from reins.backends.registry import BACKENDS
    from reins.errors import ReinsError

    rows: list[BackendRow] = []
    for name in BACKENDS.names():
        target = BACKENDS.target(name)
        try:
            factory = BACKENDS.find(name)
        except ReinsError as exc:
            rows.append(BackendRow(name, target, "", {}, str(exc)))
        else:
            summary, options = _summary(factory), dict(factory.options)
            row = BackendRow(name, target, summary, options, None, _prices(factory))
            rows.append(_with_extra(row, getattr(factory, "extra", None)))
    return rows


def _with_extra(row: BackendRow, extra: object) -> BackendRow:
    """``row`` with the extra its backend runs on, and what of it is missing (see
    :mod:`reins.extras`); unchanged for a backend that names none."""
    import dataclasses

    from reins.extras import install_line, known, missing

    if not isinstance(extra, str) or not known(extra):
        return row
    gone = missing(extra)
    install = install_line([extra]) if gone else None
    return dataclasses.replace(row, extra=extra, missing=gone, install=install)


def _prices(factory: object) -> tuple[PriceRow, ...] | None:
    """The price table's models for a backend that names its provider (``prices``)."""
    provider = getattr(factory, "prices", None)
    if not isinstance(provider, str):
        return None
    from reins.backends.prices import PRICES

    return tuple(
        PriceRow(model, p.input, p.cache_read, p.cache_write, p.output, p.batch, p.date,
                 p.source, p.note)
        for model, p in sorted(PRICES.get(provider, {}).items())
    )  # fmt: skip


def _price_lines(prices: tuple[PriceRow, ...]) -> list[str]:
    """``reins backends``' price block: the table's models, or that it knows none."""
    from reins.backends.prices import TABLE_DATE

    head = f"  prices, USD per million tokens (a snapshot of {TABLE_DATE}; see docs/backends.md):"
    unknown = "other models report no cost unless ?price_in and ?price_out are given"
    if not prices:
        return [f"  prices: the table knows no model of this backend; {unknown}"]
    width = max(len(p.model) for p in prices)
    lines = [head]
    for p in prices:
        cached = "-" if p.cached_input is None else f"{p.cached_input:g}"
        write = "-" if p.cache_write is None else f"{p.cache_write:g}"
        lines.append(
            f"    {p.model.ljust(width)}  in {p.input:g} · cached {cached} · cache write {write}"
            f" · out {p.output:g} · batch ×{p.batch:g}"
        )
    lines.append(f"    {unknown}")
    return lines


def describe_agents() -> list[AgentRow]:
    """Each registered coding agent, as :func:`describe` gives a backend, and whether the
    program it runs is found (an adapter of a CLI says where, with a ``locate()``)."""
    from reins.coders.registry import CODERS
    from reins.errors import ReinsError

    rows: list[AgentRow] = []
    for name in CODERS.names():
        target = CODERS.target(name)
        try:
            factory = CODERS.find(name)
        except ReinsError as exc:
            rows.append(AgentRow(name, target, "", {}, str(exc)))
            continue
        locate = getattr(factory, "locate", None)
        program = locate() if callable(locate) else None
        found = None if not callable(locate) else program is not None
        summary, options = _summary(factory), dict(factory.options)
        rows.append(AgentRow(name, target, summary, options, None, program, found))
    return rows


@click.command()
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option(
    "--agents", is_flag=True, help="List the coding agents (for a quest with a [workspace])."
)
@json_option
def backends(names: tuple[str, ...], agents: bool, as_json: bool) -> None:
    """List the installed backends and the options of each.

    Choose one with a model spec, backend:model?key=value&…, for example
    'ollama:qwen2.5:0.5b?temperature=0.7', quoted (a shell reads ? and & itself). Give NAMEs to
    show only those. A backend on an extra not installed says what is missing. With --agents, list
    the coding agents instead: on a quest with a [workspace], --model names one of them
    (cmd:PROGRAM, say), which works in a git repository of its own per item.
    """
    rows: list[AgentRow | BackendRow] = [*(describe_agents() if agents else describe())]
    if names:
        from reins.backends.registry import BACKENDS
        from reins.coders.registry import CODERS

        for name in names:  # an unknown name fails here, listing the known ones
            CODERS.find(name) if agents else BACKENDS.find(name)
        rows = [r for r in rows if r.name in names]
    if as_json:
        emit_json(rows)
        return
    for i, row in enumerate(rows):
        if i:
            click.echo()
        head = f"{row.name}  ({row.target})"
        click.echo(f"{head}\n  {row.summary}" if row.summary else head)
        if row.error:
            click.echo(f"  unavailable: {row.error}")
            continue
        if isinstance(row, BackendRow) and row.install:
            click.echo(
                f"  not installed: needs reins-quest[{row.extra}] ({', '.join(row.missing)} "
                f"missing); {row.install}"
            )
        if isinstance(row, AgentRow) and row.found is not None:
            click.echo(
                f"  program: {row.program}"
                if row.found
                else "  program: not found on PATH nor in a node_modules/.bin (install it; ?bin=)"
            )
        options = row.options
        width = max((len(k) for k in options), default=0)
        for key in sorted(options):
            click.echo(f"  ?{key.ljust(width)}  {options[key]}")
        if isinstance(row, BackendRow) and row.prices is not None:
            for line in _price_lines(row.prices):
                click.echo(line)
    if not agents and not names:
        from reins.coders.registry import CODERS

        click.echo(
            f"\ncoding agents, for a quest with a [workspace]: {CODERS.known_text()} "
            "(reins backends --agents)"
        )


COMMANDS = (backends,)
