"""``reins.cli.for_quest``: the whole reins CLI as a console script of one quest's own."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reins.quest import Quest


def for_quest(quest: Quest | str, *, name: str | None = None) -> Callable[[], None]:
    """A console-script entry point running the whole reins CLI for one quest.

    In your package: ``main = reins.cli.for_quest("mypkg.quest:quest")``, then
    ``[project.scripts] myquest = "mypkg:main"``. ``-q REF`` on its command line runs another
    quest (on that quest's own ledger unless ``--ledger`` is given); ``REINS_QUEST`` does not.
    """

    def main() -> None:
        from reins.cli.app import make_group
        from reins.errors import ReinsError
        from reins.quests.find import load_quest

        try:
            q = load_quest(quest) if isinstance(quest, str) else quest
        except ReinsError as exc:
            from reins.cli.failures import fail, fail_as_json, wants_json

            if wants_json(sys.argv[1:]):
                fail_as_json(exc)
            fail(str(exc), exc.exit_code)
        origin = quest if isinstance(quest, str) else None
        make_group(q, name or q.name, origin)(prog_name=name or q.name)

    return main
