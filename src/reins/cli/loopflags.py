"""``reins loop``'s options as click parsed them, and what they make: the run's options."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from reins.cli.app import Env

if TYPE_CHECKING:
    from reins.loop import Generator, LoopOptions
    from reins.quest import Quest


def worktrees_beside(env: Env) -> str:
    """The default folder of the worktrees: ``.reins-worktrees/<quest>`` beside the ledger."""
    from pathlib import Path

    from reins.store.engines import engine_of

    beside = engine_of(env.ledger_location).folder(env.ledger_location)
    folder = Path(beside if beside is not None else env.settings.place("."))
    return str((folder / ".reins-worktrees" / env.quest.name).resolve())


@dataclass(frozen=True, slots=True)
class LoopFlags:
    """``reins loop``'s options as click parsed them (each field is an option's name)."""

    model: str
    strong: str | None
    escalate_on: tuple[str, ...]
    concurrency: int
    max_items: int | None
    max_turns: int | None
    max_tokens: int | None
    max_cost: float | None
    retry: str | None
    breaker: int
    set_aside_after: int
    no_wait: bool
    judge_breaker: int
    driver: str | None
    timeout: float
    lease: float
    agent_idle: float
    agent_timeout: float
    max_item_tokens: int | None
    max_item_cost: float | None
    sandbox: str | None
    no_export: bool
    batch: bool
    round_size: int
    poll: float
    price: tuple[str, ...] = ()

    def prices(self, env: Env) -> dict[str, tuple[float, float]]:
        """The prices given to models: ``[prices]`` of reins.toml, then ``--price`` (``IN/OUT``
        prices ``--model``; ``SPEC=IN/OUT`` the model SPEC names).

        Raises:
            click.BadParameter: a ``--price`` that is no price.
        """
        from reins.backends.prices import read_rates

        prices = dict(env.settings.project.prices)
        for given in self.price:
            spec, _, rates = given.rpartition("=")
            try:
                prices[spec.strip() or self.model] = read_rates(rates)
            except ValueError as exc:
                raise click.BadParameter(str(exc), param_hint="'--price'") from None
        return prices

    def specs(self, env: Env) -> tuple[str, str | None]:
        """``--model`` and ``--strong``, each with the price given to it as its price options."""
        from reins.loop.pricing import priced_spec

        prices = self.prices(env)
        strong = priced_spec(self.strong, prices) if self.strong else None
        return priced_spec(self.model, prices), strong

    def generators(self, env: Env, quest: Quest) -> tuple[Generator, Generator | None]:
        """What ``--model`` and ``--strong`` name for ``quest``, each priced (:meth:`specs`)."""
        from reins.loop import choose_generator

        model, strong = self.specs(env)
        stronger = choose_generator(strong, quest) if strong else None
        return choose_generator(model, quest), stronger

    def rules(self) -> frozenset[str]:
        """The root causes ``--escalate-on`` names (repeated or comma-separated).

        Raises:
            click.UsageError: some are named, but no ``--strong`` model to escalate to.
        """
        named = (r.strip() for value in self.escalate_on for r in value.split(","))
        rules = frozenset(r for r in named if r)
        if rules and self.strong is None:
            raise click.UsageError("--escalate-on needs --strong: the model an item escalates to")
        return rules

    def check_batch(self, quest: Quest) -> None:
        """Refuse what a batch round cannot do.

        Raises:
            click.UsageError: ``--strong``: a round is one provider batch, to one model; a
                quest with a workspace: its items are worked by a coding agent, not a batch.
        """
        if quest.workspace is not None:
            raise click.UsageError(
                "--batch sends text prompts to a provider's batch API; a quest with a "
                "[workspace] is worked by a coding agent in a workspace per item (drop --batch)"
            )
        if self.strong is not None:
            raise click.UsageError(
                "--batch sends each round to one model: --strong (escalation) needs the loop "
                "without --batch"
            )

    def options(self, env: Env, rules: frozenset[str]) -> LoopOptions:
        from reins.loop import Budget, LoopOptions
        from reins.turn.drivers import DRIVERS

        budget = Budget(
            max_items=self.max_items,
            max_turns=self.max_turns,
            max_tokens=self.max_tokens,
            max_cost=self.max_cost,
            max_item_tokens=self.max_item_tokens,
            max_item_cost=self.max_item_cost,
        )
        export = not self.no_export and env.settings.auto_export
        return LoopOptions(
            concurrency=self.concurrency,
            budget=budget,
            breaker=self.breaker,
            set_aside_after=self.set_aside_after,
            judge_breaker=self.judge_breaker,
            wait=not self.no_wait,
            retry=self.retry,
            escalate_on=rules,
            driver=self.driver or DRIVERS["loop"].default_name,
            timeout=self.timeout,
            lease_ttl=self.lease,
            results=env.results_path if export else None,
            round_size=self.round_size,
            poll=self.poll,
            agent_idle=self.agent_idle,
            agent_timeout=self.agent_timeout,
            sandbox=self.sandbox,
            worktrees=worktrees_beside(env) if env.quest.workspace is not None else None,
        )


F = TypeVar("F", bound=Callable[..., Any])

AGENT_OPTIONS = (
    click.option(
        "--agent-idle",
        type=click.FloatRange(min=0, min_open=True),
        default=600.0,
        show_default=True,
        help="Coding agents: kill one that prints nothing this many seconds (allow its longest "
        "tool run).",
    ),
    click.option(
        "--agent-timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=1800.0,
        show_default=True,
        help="Coding agents: kill a run that takes longer than this many seconds.",
    ),
    click.option(
        "--sandbox",
        type=click.Choice(("bwrap", "none")),
        help="Coding agents: bwrap confines them to their workspace (the default); none runs them "
        "unconfined [default: the quest's, bwrap].",
    ),
)
"""The options of a run of coding agents: their watchdogs and the sandbox."""


def agent_options(command: F) -> F:
    """Add :data:`AGENT_OPTIONS` to a command (as ``json_option`` adds ``--json``)."""
    for option in reversed(AGENT_OPTIONS):
        command = option(command)
    return command
