"""Example quest: extract the e-mail addresses of a text as JSON.

``reins --quest emails scan [FILE|DIR …]`` seeds one item per text file (the samples of the
``emails`` pack, which are this quest's too, when no argument is given). A submission is JSON:
``{"addresses": ["a@b.example", …]}`` (a bare list is accepted too). The gate checks syntax, that
every address is a mailbox of the text (whole, not a message id), that none of the text's
mailboxes is missing, and sends free-mail addresses to a human. What counts as a mailbox, and
when two are the same, is :mod:`reins.verify.mailaddr`'s to say (the ``emails`` pack judges with
it too, and leaves the same facts, :mod:`reins.verify.mailfacts`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from reins.errors import ConfigError
from reins.gate import Context, Fact, Level, Outcome, Verdict, excerpt, rule
from reins.packs import folder
from reins.quest import Quest, Seed
from reins.quests.emails.graph import build_graph
from reins.store.model import Item
from reins.values import JSON
from reins.verify import mailfacts as facts

SAMPLES = folder("emails") / "samples"  # one copy, the pack's: the two quests judge alike
MAX_TEXT = 64 * 1024

SHAPE = 'a JSON object {"addresses": ["name@domain", ...]}'

MANUAL = """\
You extract e-mail addresses from a text. Answer with JSON only, no prose and no code fence:
{"addresses": ["name@domain", ...]}
List every address that appears literally in the text, exactly as written, each once.
Do not invent, complete or de-obfuscate addresses. If there are none, answer {"addresses": []}."""

COACHING = {
    "address-syntax": "Each entry must be one complete address: local part, @, domain with a dot.",
    "address-in-source": "Copy addresses character for character from the text; never guess one.",
    "address-missing": "Read the whole text again, quoted replies and signatures included.",
    "json-shape": 'Answer with the JSON object only, e.g. {"addresses": ["a@b.example"]}.',
}


def seed(args: Sequence[str]) -> Iterator[Seed]:
    """One item per ``.txt`` file in the given files and folders (default: the samples)."""
    for arg in args or [str(SAMPLES)]:
        path = Path(arg)
        if path.is_dir():
            files = sorted(path.rglob("*.txt"))
        elif path.is_file():
            files = [path]
        else:
            raise ConfigError(f"emails quest: {arg} is neither a file nor a folder")
        for file in files:
            text = file.read_text(encoding="utf-8", errors="replace")
            if len(text) > MAX_TEXT:
                raise ConfigError(f"emails quest: {file} is larger than {MAX_TEXT} characters")
            key = file.relative_to(path).with_suffix("").as_posix() if path.is_dir() else file.stem
            yield Seed(key, {"file": file.name, "text": text})


def render(item: Item) -> str:
    return (
        f"Extract the e-mail addresses of the text {_field(item, 'file')!r}.\n\n"
        f"<text>\n{_field(item, 'text').rstrip()}\n</text>"
    )


def _field(item: Item, name: str) -> str:
    """A text field of an item's payload as :func:`seed` writes it: ``{"file", "text"}``."""
    value = item.payload.get(name) if isinstance(item.payload, dict) else None
    if not isinstance(value, str):
        raise TypeError(f"emails quest: item {item.key!r} has no {name!r} text in its payload")
    return value


def _decode(raw: str) -> JSON:
    text = raw.strip()
    fence = re.fullmatch(r"```[a-zA-Z]*\n(.*?)\n?```", text, re.S)
    if fence:
        text = fence.group(1).strip()
    data: JSON = json.loads(text)
    return data


def prepare(item: Item, raw: str) -> Context | Verdict:
    """Decode the answer; an answer that is not the wanted JSON is a FAIL with a fact."""
    try:
        data = _decode(raw)
    except (ValueError, RecursionError):  # deep nesting is the answer's fault, not the judge's
        data = None
    if isinstance(data, dict) and set(data) == {"addresses"}:
        data = data["addresses"]
    if not isinstance(data, list) or not all(isinstance(a, str) for a in data):
        fact = Fact(rule="json-shape", where="submission", expected=SHAPE, actual=excerpt(raw, 120))
        return Verdict.short(Outcome.FAIL, fact)
    given: list[JSON] = [a.strip() for a in data if isinstance(a, str)]
    return Context(key=item.key, submission=given, source=_field(item, "text"))


@rule("address-syntax", Level.FAIL, "every entry is a well-formed e-mail address")
def address_syntax(ctx: Context) -> list[Fact]:
    return facts.syntax(facts.addresses(ctx.submission), "addresses")


@rule("address-in-source", Level.FAIL, "every address is a mailbox written whole in the text")
def address_in_source(ctx: Context) -> list[Fact]:
    return facts.in_source(facts.addresses(ctx.submission), ctx.source, "addresses")


@rule("address-missing", Level.FAIL, "no address of the text is left out")
def address_missing(ctx: Context) -> Fact | None:
    return facts.missing(facts.addresses(ctx.submission), ctx.source, "addresses")


@rule("address-duplicate", Level.FAIL, "each address is listed once")
def address_duplicate(ctx: Context) -> list[Fact]:
    return facts.duplicate(facts.addresses(ctx.submission), "addresses")


@rule("free-mail", Level.REVIEW, "free-mail addresses are checked by a person")
def free_mail(ctx: Context) -> Fact | None:
    return facts.free_mail(facts.addresses(ctx.submission), "addresses")


RULES = (address_syntax, address_in_source, address_missing, address_duplicate, free_mail)

quest = Quest(
    name="emails",
    description="extract the e-mail addresses of a text as JSON",
    seed=seed,
    render=render,
    prepare=prepare,
    rules=RULES,
    manual=MANUAL,
    coaching=COACHING,
    gate=build_graph(RULES),
    # 2: mail read as old mail writes it (a dash after an address, *Message-Id fields, ids cut
    # short in References), and one fact per offending entry.
    gate_version="2",
)
