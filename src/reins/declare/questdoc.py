"""quest.toml (with gate.md beside it) → a :class:`~reins.quest.Quest` every driver runs.

Nothing is scanned or judged until both documents load; every refusal names the file, the line
and what was expected. See ``docs/quests.md`` for the format.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reins.declare.founddoc import KEYS as FOUND_KEYS
from reins.declare.founddoc import read_found
from reins.declare.items import ItemSource
from reins.declare.template import Template
from reins.declare.workspacedoc import KEYS as WORKSPACE_KEYS
from reins.declare.workspacedoc import read_workspace
from reins.errors import ConfigError, DocumentError
from reins.gate import Context, Fact, Outcome, Rule, Verdict, excerpt
from reins.quest import RETRY_POLICIES, Example, Quest
from reins.retry import canonical_retry
from reins.store.model import Item
from reins.values import JSON

if TYPE_CHECKING:
    from reins.declare.gatedoc import GateDoc
    from reins.figures import FigureFunction

QUEST_FILE = "quest.toml"
OUTPUTS = ("json", "text")
JSON_RULE = "reins:json"
"""The rule id of the fact left when a ``json`` quest's submission is not JSON."""
JSON_COACHING = "Answer with the JSON value only: no prose before or after it, no code fence."

KNOWN: dict[str, tuple[str, ...]] = {
    "": (
        "name",
        "description",
        "extra",
        "items",
        "prompt",
        "judge",
        "examples",
        "workspace",
        "report",
        "land",
    ),
    "items": ("source", "key", "source_field", *FOUND_KEYS),
    "prompt": ("output", "manual", "manual_file", "template", "template_file"),
    "judge": ("gate", "max_tries", "retry", "escalate_on", "version", "allow_proposals"),
    "examples": ("input", "output", "key"),
    "workspace": WORKSPACE_KEYS,
    "report": ("figures",),
    "land": ("rules_file",),  # reins.declare.landdoc's KEYS, read only when there is a [land]
}
_KIND_NAMES = {
    str: "a string",
    int: "a whole number",
    bool: "true or false",
    list: "an array",
    dict: "a table",
}
_FENCE = re.compile(r"```[A-Za-z]*\n(.*?)\n?```", re.S)


@dataclass(frozen=True, slots=True)
class Decoder:
    """``prepare`` of a declarative quest: the submission decoded as its output format says."""

    output: str
    source_field: str

    def __call__(self, item: Item, raw: str) -> Context | Verdict:
        submission: JSON = raw
        if self.output == "json":
            import json

            text = raw.strip()
            fenced = _FENCE.fullmatch(text)
            try:
                submission = json.loads(fenced.group(1) if fenced else text)
            except (ValueError, RecursionError) as exc:  # the answer's fault, not the judge's
                reason = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
                fact = Fact(
                    rule=JSON_RULE,
                    where="submission",
                    expected=f"one JSON value ({reason})",
                    actual=excerpt(raw, 120),
                )
                return Verdict.short(Outcome.FAIL, fact)
        payload = item.payload
        source = ""
        if self.source_field and isinstance(payload, Mapping):
            value = payload.get(self.source_field, "")
            source = value if isinstance(value, str) else ""
        return Context(item.key, submission, payload, source, raw)


@dataclass(frozen=True, slots=True)
class Renderer:
    """``render`` of a declarative quest: the template with ``item`` and ``key``."""

    template: Template

    def __call__(self, item: Item) -> str:
        return self.template.render(item.key, item.payload)


def load_folder(ref: str | Path) -> Quest:
    """The quest in folder ``ref`` (or the folder of ``ref`` when it names quest.toml).

    Raises:
        DocumentError: a document that does not load, or an example that fails its gate.
        NotFound: no quest.toml there.
    """
    from reins.errors import NotFound

    path = Path(ref)
    toml_path = path if path.is_file() else path / QUEST_FILE
    if not toml_path.is_file():
        raise NotFound(f"quest {str(ref)!r}: no {QUEST_FILE} there")
    folder = toml_path.parent.resolve()
    doc = Doc(toml_path)
    quest = doc.quest(folder)
    if quest.examples:
        from reins.declare.examples import check_examples

        check_examples(quest, doc.example_line)
    return quest


class Doc:
    """quest.toml's text and data, with the line of each key for error messages."""

    def __init__(self, path: Path) -> None:
        import tomllib

        self.path = str(path)
        try:
            self.text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise DocumentError(self.path, 0, 0, f"cannot read: {exc}") from None
        try:
            self.data = tomllib.loads(self.text)
        except tomllib.TOMLDecodeError as exc:
            m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
            line, column = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
            reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
            raise DocumentError(self.path, line, column, f"not TOML: {reason}") from None
        self._check_keys()

    # -- positions -------------------------------------------------------------------------

    def line_of(self, table: str, key: str = "") -> int:
        """The line where ``key`` of ``[table]`` is written (0 when it cannot be found)."""
        lines = self.text.splitlines()
        start = 0
        if table:
            header = re.compile(rf"^\s*\[\[?\s*{re.escape(table)}\s*\]\]?")
            start = next((i for i, ln in enumerate(lines) if header.match(ln)), -1)
            if start < 0:
                return 0
            if not key:
                return start + 1
            start += 1
        pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
        for i in range(start, len(lines)):
            if table and re.match(r"^\s*\[", lines[i]):
                break
            if not table and re.match(r"^\s*\[", lines[i]):
                break
            if pattern.match(lines[i]):
                return i + 1
        return 0

    def example_line(self, index: int) -> tuple[str, int]:
        """Where example ``index`` starts: its ``[[examples]]`` header."""
        hits = [
            i + 1
            for i, ln in enumerate(self.text.splitlines())
            if re.match(r"^\s*\[\[\s*examples\s*\]\]", ln)
        ]
        return self.path, hits[index] if index < len(hits) else 0

    def error(self, table: str, key: str, message: str) -> DocumentError:
        line = self.line_of(table, key) or self.line_of(table)
        return DocumentError(self.path, line, 0, message)

    # -- reading ---------------------------------------------------------------------------

    def _check_keys(self) -> None:
        for table, known in KNOWN.items():
            if table == "examples":
                raw = self.data.get("examples", [])
                if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
                    raise self.error("", "examples", "examples must be [[examples]] tables")
                entries: list[dict[str, Any]] = raw
            else:
                value = self.data if not table else self.data.get(table, {})
                if not isinstance(value, dict):
                    raise self.error("", table, f"[{table}] must be a table")
                entries = [value]
            for i, entry in enumerate(entries):
                for key in entry:
                    if key not in known:
                        line = self.example_line(i)[1] if table == "examples" else 0
                        err = self.error(table, key, "")
                        raise DocumentError(
                            self.path,
                            line or err.line,
                            0,
                            f"unknown key {key!r}"
                            + (f" in [{table}]" if table else "")
                            + f"; expected one of {', '.join(known)}",
                        )

    def get(self, table: str, key: str, kind: type | tuple[type, ...], default: Any) -> Any:
        holder = self.data.get(table, {}) if table else self.data
        if key not in holder:
            return default
        value = holder[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        wrong = isinstance(value, bool) and bool not in kinds  # TOML true is not the number 1
        if wrong or not isinstance(value, kind):
            names = " or ".join(_KIND_NAMES.get(k, k.__name__) for k in kinds)
            raise self.error(table, key, f"{key} must be {names}, not {value!r:.60}")
        return value

    def quest(self, folder: Path) -> Quest:
        name = self.get("", "name", str, "")
        if not name:
            raise DocumentError(self.path, 1, 0, 'expected name = "a word" naming the quest')
        # Modules beside quest.toml (checks, grounds, items) import like scripts beside it do;
        # appended, so that a local file never shadows an installed module.
        if str(folder) not in sys.path:
            sys.path.append(str(folder))
        gate = self._gate(folder)
        output = self.get("prompt", "output", str, "json")
        if output not in OUTPUTS:
            raise self.error("prompt", "output", f'output must be "json" or "text", not {output!r}')
        manual = self._text_or_file(folder, "manual")
        examples = self._examples()
        template_text, template_path, template_line = self._template(folder)
        samples = [(ex.key or f"example-{i + 1}", ex.input) for i, ex in enumerate(examples)]
        template = Template(template_text, template_path, template_line, samples)
        max_tries, retry, escalate = self._judging({r.id for r in gate.rules})
        source = ItemSource.from_doc(self, folder)
        coaching = dict(gate.coaching)
        workspace = read_workspace(self, folder)
        found = read_found(self, self.data.get("items", {}))
        if found is not None and workspace is None:
            raise self.error("items", "from", "items found in a repository need a [workspace]")
        if workspace is not None and output != "text":
            raise self.error(
                "prompt",
                "output",
                'a quest with a [workspace] has output = "text": the '
                "submission is the agent's final message and its diff",
            )
        if output == "json":
            coaching.setdefault(JSON_RULE, JSON_COACHING)
        land_rules = self._land(folder, {r.id for r in gate.rules}, coaching, workspace)
        return Quest(
            name=name,
            description=self.get("", "description", str, ""),
            seed=source.seed,
            render=Renderer(template),
            prepare=Decoder(output, source.source_field),
            rules=gate.rules,
            manual=manual,
            coaching=coaching,
            max_tries=max_tries,
            gate=gate.gate(),
            escalate_on=escalate,
            retry=retry,
            gate_version=str(self.get("judge", "version", (str, int), "")),
            examples=examples,
            workspace=workspace,
            figures=self._figures(),
            found=found,
            land_rules=land_rules,
            extras=self._extras(),
        )

    def _land(
        self, folder: Path, gate_ids: set[str], coaching: dict[str, str], workspace: object
    ) -> tuple[Rule, ...]:
        """``[land]``'s rules (their coaching added to ``coaching``), only when it is there."""
        if "land" not in self.data:
            return ()
        from reins.declare.landdoc import read_land

        if workspace is None:
            raise self.error("land", "", "land rules judge the merges of coding items: [land] "
                             "needs a [workspace]")  # fmt: skip
        rules, coached = read_land(self, folder, gate_ids)
        coaching.update(coached)
        return rules

    def _extras(self) -> tuple[str, ...]:
        """``extra``: the reins-quest extra (or a list of them) the quest's checks import."""
        value = self.get("", "extra", (str, list), [])
        extras = tuple([value] if isinstance(value, str) else value)
        from reins.extras import EXTRAS  # a small table, read with the documents

        unknown = [e for e in extras if e not in EXTRAS]
        if unknown:
            message = f"no extra of reins-quest is named {unknown[0]!r:.60}. Known: "
            raise self.error("", "extra", message + ", ".join(EXTRAS))
        return extras

    def _figures(self) -> FigureFunction | None:
        """``[report] figures``, imported and checked (only when the table is there)."""
        if "report" not in self.data:
            return None
        from reins.declare.figuresdoc import read_figures

        return read_figures(self)

    def _gate(self, folder: Path) -> GateDoc:
        """gate.md (or the file ``[judge] gate`` names), loaded with ``folder`` as its base."""
        from reins.declare.gatedoc import load_gate

        gate_path = folder / self.get("judge", "gate", str, "gate.md")
        try:
            gate_text = gate_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise self.error("judge", "gate", f"cannot read {gate_path}: {exc}") from None
        return load_gate(gate_text, str(gate_path), here=str(folder))

    def _judging(self, ids: set[str]) -> tuple[int, str, frozenset[str]]:
        """``[judge]``'s max_tries, retry and escalate_on (rule ids of the gate, ``ids``)."""
        max_tries = self.get("judge", "max_tries", int, 3)
        if max_tries < 1:
            raise self.error("judge", "max_tries", "max_tries must be at least 1")
        retry = self.get("judge", "retry", str, "facts")
        try:
            retry = canonical_retry(retry)
        except ConfigError as exc:
            said = f"retry must be one of {', '.join(RETRY_POLICIES)} or a schedule of them: {exc}"
            raise self.error("judge", "retry", said) from None
        escalate = self.get("judge", "escalate_on", list, [])
        for rule_id in escalate:
            if not isinstance(rule_id, str) or rule_id not in ids:
                raise self.error(
                    "judge",
                    "escalate_on",
                    f"escalate_on names {rule_id!r:.60}, which gate.md has no rule for",
                )
        if self.get("judge", "allow_proposals", bool, False):
            raise self.error("judge", "allow_proposals", "allow_proposals = true is not supported")
        return max_tries, retry, frozenset(escalate)

    def _text_or_file(self, folder: Path, key: str) -> str:
        text = self.get("prompt", key, str, None)
        file = self.get("prompt", f"{key}_file", str, None)
        if text is not None and file is not None:
            raise self.error("prompt", f"{key}_file", f"give {key} or {key}_file, not both")
        if file is None:
            return str(text or "")
        try:
            return (folder / str(file)).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise self.error("prompt", f"{key}_file", f"cannot read {file}: {exc}") from None

    def _template(self, folder: Path) -> tuple[str, str, int]:
        text = self.get("prompt", "template", str, None)
        file = self.get("prompt", "template_file", str, None)
        if text is not None and file is not None:
            raise self.error("prompt", "template_file", "give template or template_file, not both")
        if file is not None:
            try:
                return (folder / file).read_text(encoding="utf-8"), str(folder / file), 1
            except (OSError, UnicodeDecodeError) as exc:
                raise self.error("prompt", "template_file", f"cannot read {file}: {exc}") from None
        if text is None:
            raise self.error("prompt", "", "[prompt] needs a template (or template_file)")
        return text, self.path, self.line_of("prompt", "template")

    def _examples(self) -> tuple[Example, ...]:
        out = []
        for i, entry in enumerate(self.data.get("examples", [])):
            line = self.example_line(i)[1]
            if "input" not in entry or "output" not in entry:
                raise DocumentError(self.path, line, 0, "an example needs input and output")
            output = entry["output"]
            if not isinstance(output, str):
                raise DocumentError(
                    self.path, line, 0, "an example's output is the submission as text (a string)"
                )
            key = entry.get("key", "")
            if not isinstance(key, str):
                raise DocumentError(self.path, line, 0, "an example's key must be a string")
            out.append(Example(entry["input"], output, key))
        return tuple(out)
