"""``reins report``: the run's figures as text or JSON, or as one self-contained HTML file."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import click

from reins.cli.app import Env, emit_json, pass_env
from reins.cli.inspect import NO_COST
from reins.cli.loop import RETRY
from reins.cli.shapes.figures import Compared, Figures, HtmlWritten
from reins.cli.work import json_option
from reins.store.walk import passes_by_try

if TYPE_CHECKING:
    from reins.figures import Figure
    from reins.quest import Quest
    from reins.store.protocol import Store
    from reins.web.board import Board
    from reins.web.spend import Spend

TOP_RULES = 10
DEFAULT_TRIES = 3  # the passes-by-try columns shown when no quest says its max_tries


@click.command()
@click.option(
    "--html",
    "html_path",
    metavar="FILE",
    help="Write a self-contained HTML report (board, charts, rule tables, review queue).",
)
@click.option(
    "--retry-compare",
    "policies",
    metavar="POLICY",
    multiple=True,
    type=RETRY,
    help="Run the ledger's items again under this retry policy or schedule (fresh,facts@0.8; "
    "repeat for several), each on a fresh temporary ledger, compare passes by answer and each "
    "policy against fresh item by item, and recommend one. Needs --model.",
)
@click.option(
    "--model",
    "-m",
    metavar="SPEC",
    envvar="REINS_MODEL",
    help="The backend every --retry-compare run uses (see `reins backends`).",
)
@click.option(
    "--items",
    "limit",
    type=click.IntRange(min=1),
    help="--retry-compare on the first N items of the ledger only.",
)
@click.option(
    "--concurrency",
    "-c",
    type=click.IntRange(1, 4096),
    default=1,
    show_default=True,
    help="Items in flight at once in each --retry-compare run.",
)
@json_option
@pass_env
def report(
    env: Env,
    html_path: str | None,
    policies: tuple[str, ...],
    model: str | None,
    limit: int | None,
    concurrency: int,
    as_json: bool,
) -> None:
    """The run's figures: counts, passes and locks by answer, rules; --html FILE for a page.

    Text (or --json) gives counts per state (DONE: out of tries, not passed), work remaining,
    how many items passed on each answer (answer 1 is what a one-shot run gets; the later
    answers are what the ratchet bought), the answer on which the gate locked each item, and
    the rules fired most; then the quest's own figures, when it declares some (the ifeval
    pack's prompt- and instruction-level accuracy, say; --json: under quest_figures). With
    --html FILE, a self-contained HTML page to mail or attach to a PR: it needs no network to
    view.

    With --retry-compare POLICY… --model SPEC, the same items run again under each policy on
    one backend, each on its own temporary ledger (yours is not touched), and the passes by
    answer are compared; then each policy against fresh (when it ran, else the first given),
    item by item: the items each alone solved, and a sign test on them. The policy that solved
    the most is recommended, with a word on whether these items tell it from fresh.
    """
    if policies:
        retry_compare(env, policies, model, limit, concurrency, as_json)
        return
    store, quest = env.ledger(), env.quest_if_given()
    if html_path is not None:
        _html(store, quest, html_path, as_json)
        return
    from reins.web.board import board

    b = board(store, quest)
    passes = passes_by_try(store, quest.max_tries if quest else DEFAULT_TRIES)
    b, passes, land = _land_apart(store, b, passes)
    own = quest_figures(store, quest)
    if as_json:
        emit_json(Figures.of(b, passes, TOP_RULES, own, land))
        return
    for line in _figure_lines(b, passes, land):
        click.echo(line)
    if quest is not None:
        for line in own_lines(quest.name, own):
            click.echo(line)


def quest_figures(store: Store, quest: Quest | None) -> tuple[Figure, ...]:
    """The quest's own figures (``Quest.figures``), or none."""
    if quest is None or quest.figures is None:
        return ()
    from reins.figures import compute

    return compute(quest.figures, store, quest.name)


def own_lines(name: str, figures: tuple[Figure, ...]) -> Iterator[str]:
    """The quest's figures after report's own lines: name, value as shown, label and note."""
    if not figures:
        return
    yield f"{name} figures"
    names = max(len(f.name) for f in figures)
    values = max(len(f.text) for f in figures)
    for f in figures:
        said = f.label + (f" ({f.note})" if f.label and f.note else f.note)
        yield f"  {f.name:<{names}}  {f.text:>{values}}" + (f"  {said}" if said else "")


def _html(store: Store, quest: Quest | None, path: str, as_json: bool) -> None:
    """``report --html FILE``: the self-contained page."""
    try:
        from reins.web.report import write_html
    except ImportError as exc:
        from reins.cli.serve import web_missing

        raise web_missing(exc) from exc
    written = write_html(store, quest, path)
    if as_json:
        emit_json(HtmlWritten(str(written)))
    else:
        click.echo(f"wrote {written}", err=True)  # a message: stdout stays for data


def _land_apart(
    store: Store, b: Board, passes: tuple[int, ...]
) -> tuple[Board, tuple[int, ...], dict[str, int]]:
    """The board's counts and the passes by try of the quest's own items, and the land items
    ``reins land`` added, by state, apart (none when it added none)."""
    from reins.cli.inspect import LAND_META

    if store.meta(LAND_META) is None:  # no `reins land` ran: it added no item
        return b, passes, {}
    import dataclasses
    from collections import Counter

    from reins.land.plan import land_items
    from reins.store.model import State

    found = land_items(store)
    if not found:
        return b, passes, {}
    states = Counter(i.state.value for i in found)
    passed = Counter(i.tries + 1 for i in found if i.state is State.PASS)
    total = b.total - len(found)
    counts = tuple(
        dataclasses.replace(c, n=c.n - states[c.state], share=(c.n - states[c.state]) / total
                            if total else 0.0)
        for c in b.counts
    )  # fmt: skip
    own = dataclasses.replace(b, counts=counts, total=total,
                              remaining=b.remaining - states[State.TODO.value])  # fmt: skip
    mine = tuple(n - passed[t] for t, n in enumerate(passes, start=1))
    return own, mine, {c.state: states[c.state] for c in b.counts}


def _figure_lines(
    b: Board, passes: tuple[int, ...], land: dict[str, int] | None = None
) -> Iterator[str]:
    """``report`` as text: counts (the land items apart), passes by try, tries to lock, the
    rules fired most."""
    from reins.gate.wording import state_short

    yield "  ".join(f"{state_short(c.state)} {c.n}" for c in b.counts)
    yield f"total {b.total}  remaining {b.remaining}  ({b.progress:.1f}% locked)"
    if land and any(land.values()):
        counted = "  ".join(f"{s} {n}" for s, n in land.items() if n)
        yield f"land items {sum(land.values())}, apart (`reins land` added them): {counted}"
    yield passes_line(passes, b.total)
    tries = {bar.label: bar.value for bar in b.tries_to_lock}
    if tries:
        note = " (estimated from a sample of the log)" if b.chart.sampled else ""
        yield "locked on answer  " + "  ".join(f"{k}: {v}" for k, v in tries.items()) + note
    rules = b.rules[:TOP_RULES]
    if rules:
        yield "rules fired most  (times fired / times root cause)"
        width = max(len(r.rule) for r in rules)
        for r in rules:
            yield f"  {r.rule:<{width}} {r.fired:>6} / {r.root}"
    yield from spend_lines(b.spend)


def spend_lines(s: Spend) -> Iterator[str]:
    """Tokens with the cache's share, then the cost beside the list price and the saving."""
    if not s.recorded:
        return
    cached = ""
    if s.cache_read_tokens or s.cache_write_tokens:
        rate = f" = {100 * (s.cache_hit_rate or 0):.1f}%"
        cached = f" (cache read {s.cache_read_tokens:,}{rate}, written {s.cache_write_tokens:,})"
    yield f"tokens  in {s.input_tokens:,}{cached}  out {s.output_tokens:,}"
    if s.list_cost or s.batch_cost:
        yield (
            f"cost  ${s.cost:.4f} (list price ${s.list_cost:.4f}; saved ${s.saved:.4f}:"
            f" cache ${s.saved_by_cache:.4f}, batch ${s.saved_by_batch:.4f})"
        )
    elif s.cost:
        yield f"cost  ${s.cost:.4f}"
    else:
        yield f"cost  {NO_COST}"


def passes_line(passes: tuple[int, ...], total: int) -> str:
    """``passes on answer  1: 11  2: 5  3: 4   (11 → 16 → 20 of 60)``: what each answer
    added."""
    cumulative, running = [], 0
    for n in passes:
        running += n
        cumulative.append(str(running))
    each = "  ".join(f"{t}: {n}" for t, n in enumerate(passes, start=1))
    return f"passes on answer  {each}   ({' → '.join(cumulative)} of {total})"


def retry_compare(
    env: Env,
    policies: tuple[str, ...],
    model: str | None,
    limit: int | None,
    concurrency: int,
    as_json: bool,
) -> None:
    """``report --retry-compare``: the ledger's items under each policy, on one backend."""
    import itertools

    from reins.loop import LoopOptions, choose_generator
    from reins.loop.compare import compare_retry
    from reins.store.walk import iter_items

    if not model:
        raise click.UsageError("--retry-compare needs --model SPEC (or REINS_MODEL)")
    quest = env.quest
    choose_generator(model, quest)  # a bad spec fails here, before any run
    items = [(i.key, i.payload) for i in itertools.islice(iter_items(env.ledger()), limit)]
    runs = compare_retry(
        quest,
        items,
        lambda: choose_generator(model, quest),
        policies,
        options=LoopOptions(concurrency=concurrency),
    )
    from reins.loop.paired import recommend

    advice = recommend(runs)
    if as_json:
        emit_json(Compared(model, tuple(runs), advice))
        return
    tries = max(len(r.passes) for r in runs)
    head = "".join(f"{'ans ' + str(t):>8}" for t in range(1, tries + 1))
    click.echo(f"{len(items)} item(s), model {model}: passes after each answer (DONE: unsolved)")
    click.echo(f"{'policy':<16}{head}{'REVIEW':>8}{'DONE':>6}{'turns':>7}")
    for r in runs:
        cells = "".join(f"{n:>8}" for n in r.cumulative)
        click.echo(f"{r.policy:<16}{cells}{r.review:>8}{r.done:>6}{r.turns:>7}")
        if r.stopped != "done":
            click.echo(f"  ({r.policy}: the run ended early: {r.stopped}: {r.message})")
    for p in advice.pairs:
        click.echo(
            f"{p.policy} against {p.baseline}, by answer {p.answers}: solved alone "
            f"{len(p.only_policy)} ({_keys(p.only_policy)}) against {len(p.only_baseline)} "
            f"({_keys(p.only_baseline)}), sign test p = {p.p_value:.3f}"
        )
    click.echo(advice.said)


def _keys(keys: tuple[str, ...], most: int = 8) -> str:
    shown = ", ".join(keys[:most])
    return (shown + f", … {len(keys) - most} more" if len(keys) > most else shown) or "none"
