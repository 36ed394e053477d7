"""The Jinja2 environment both the server and the report render with: autoescape always on.

Everything a generator wrote (submissions, facts, keys, notes) is hostile input; the templates
never mark any of it safe.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from reins.web.desk import clock, visible
from reins.web.listing import link
from reins.web.words import ago, exact, of, standing, state_text

HERE = Path(__file__).parent
STATIC = HERE / "static"


def _when(stamp: str, now: float | None) -> Markup:
    """A stamp as "3 min ago", the exact time on hover (``Markup.format`` escapes each part);
    with no ``now`` (a snapshot, read later: the report), the exact time itself."""
    if now is None:
        return Markup('<time datetime="{}">{}</time>').format(stamp, exact(stamp))
    return Markup('<time datetime="{}" title="{}">{}</time>').format(
        stamp, exact(stamp), ago(stamp, now)
    )


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.4f}"


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every template, whatever its name
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["q"] = lambda s: quote(str(s), safe="")
    env.filters["number"] = _number
    env.filters["link"] = link
    env.filters["state"] = state_text
    env.filters["of"] = of
    env.filters["standing"] = standing
    env.filters["exact"] = exact
    env.filters["when"] = _when
    env.filters["clock"] = clock
    env.filters["visible"] = visible  # hidden characters as markers (reins.web.desk)
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)


def static_text(name: str) -> str:
    """A static file's text, for the report to inline."""
    return (STATIC / name).read_text(encoding="utf-8")
