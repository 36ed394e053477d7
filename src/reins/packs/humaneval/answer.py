"""How the humaneval pack reads an answer: the code in it, and the program that code makes.

The rule (the pack's README says it to users and the manual to the model):

1. **The code.** If the answer has fenced blocks (```` ```python ````, ```` ```py ````, or a bare
   ```` ``` ````), the code is the first block that defines the function (``def NAME(``), else
   the first block tagged Python or untagged, else the first block; a block whose closing
   fence is missing runs to the end of the answer. Without a fence the whole answer is the code.
2. **Its form.** Code with a line ``def NAME(`` (or ``async def NAME(``) at its outermost
   indentation is a **definition**: the program is the problem's prompt, a blank line, and the
   code, so the answer's function replaces the prompt's (whose body is only the docstring)
   and the prompt's imports and helpers stay defined. Any other code is a **body**: the
   program is the prompt followed by the code, exactly as the official harness joins a
   completion (``prompt + completion``); when that does not compile, the same code dedented
   and indented by four spaces is tried (a body written at the margin).

Nothing is compiled or parsed here: the answer's own process compiles the program (the first
of :attr:`Program.texts` that compiles), so no text of the answer's is parsed by the judge.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

__all__ = ["Program", "code_of", "read_answer"]

_FENCE = re.compile(r"^[ \t]*```[ \t]*([^\n`]*)\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)", re.S | re.M)
_PYTHON_TAGS = ("", "python", "py", "python3", "py3")


@dataclass(frozen=True, slots=True)
class Program:
    """The program the answer's process runs, in the forms to try in order.

    Args:
        texts: the program (the prompt and the code): one form, or for a body the code as
            written and then re-indented.
        offset: how many lines of the program come before the answer's code.
        code: the answer's code, as read from the answer.
        form: ``"definition"`` or ``"body"``.
        fenced: whether the code came from a fenced block.
    """

    texts: tuple[str, ...]
    offset: int
    code: str
    form: str
    fenced: bool


def code_of(answer: str, entry_point: str) -> tuple[str, bool]:
    """The code of ``answer`` (rule 1) and whether it came from a fenced block."""
    blocks = [(m.group(1).strip().lower(), m.group(2)) for m in _FENCE.finditer(answer)]
    if not blocks:
        return answer, False
    defines = _definition(entry_point)
    for _, body in blocks:
        if defines.search(textwrap.dedent(body)):
            return body, True
    for tag, body in blocks:
        if (tag.split()[0] if tag else "") in _PYTHON_TAGS:
            return body, True
    return blocks[0][1], True


def read_answer(prompt: str, entry_point: str, answer: str) -> Program:
    """The program of ``answer`` to the problem whose prompt is ``prompt`` (rule 2)."""
    code, fenced = code_of(answer, entry_point)
    dedented = textwrap.dedent(code)
    if _definition(entry_point).search(dedented):
        text = f"{prompt}\n{dedented.rstrip()}\n"
        return Program((text,), _lines(prompt) + 1, dedented, "definition", fenced)
    texts = [prompt + code.rstrip() + "\n"]
    margin = textwrap.indent(dedented, "    ").rstrip() + "\n"
    if prompt + margin not in texts:
        texts.append(prompt + margin)
    return Program(tuple(texts), _lines(prompt), code, "body", fenced)


def _lines(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def _definition(name: str) -> re.Pattern[str]:
    return re.compile(rf"^(?:async[ \t]+)?def[ \t]+{re.escape(name)}[ \t]*\(", re.M)
