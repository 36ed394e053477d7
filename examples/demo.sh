#!/usr/bin/env bash
# `make demo`: the main job, for real. A sample of IFEval prompts (the `ifeval` pack, judged by
# Google's official checkers) is worked unattended by a small language model that runs in this
# process (SmolLM2-135M-Instruct through llama.cpp); the gate, never the model, decides what is
# done. Answer 1 is what a one-shot run of the same model gets; answers 2 and 3 are what the
# ratchet bought, by sending the gate's facts back. Everything happens in a temporary folder.
#
#   DEMO_MODEL=SPEC  another model spec (default below), e.g. openai:…?base_url=…
#   DEMO_ITEMS=N     how many prompts, at most 30 (default 30: about 3 minutes on 2 cores)
#   KEEP=1           keep the temporary folder and say where it is
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${REINS_BIN:-$ROOT/.venv/bin}"
# 80 tokens is enough for the short prompts of the sample, and keeps three tries of 30 prompts
# within the demo's time on two cores.
MODEL="${DEMO_MODEL:-local:smollm2?temperature=0.4&max_output_tokens=80}"
ITEMS="${DEMO_ITEMS:-30}"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/reins-demo.XXXXXX")"
if [[ -n "${KEEP:-}" ]]; then
  trap 'echo; echo "kept: $WORK"' EXIT
else
  trap 'rm -rf "$WORK"' EXIT
fi
cd "$WORK"

if [[ -t 1 ]]; then BOLD=$'\e[1m' DIM=$'\e[2m' OFF=$'\e[0m'; else BOLD="" DIM="" OFF=""; fi
say() { printf '\n%s%s%s\n' "$DIM" "$*" "$OFF"; }
# show a command as a user types it, then run it with this checkout's reins
run() {
  printf '\n%s$ %s%s\n' "$BOLD" "$*" "$OFF"
  "$BIN/$1" "${@:2}"
}

# The fixed sample shipped with the pack (sample.jsonl, beside its items.jsonl): the first 30
# prompts of the pack, in its own order, that are shorter than 300 characters and ask for
# nothing longer than the output cap allows (no "at least N words/sentences/paragraphs" or
# repeat-the-prompt instructions). Chosen by rule, not by result. DEMO_ITEMS=N takes its first N.
SAMPLE=sample.jsonl
if [[ "$ITEMS" != 30 ]]; then
  "$BIN/python" -c 'import sys; from reins.packs import folder
lines = (folder("ifeval") / "sample.jsonl").read_text(encoding="utf-8").splitlines(True)
sys.stdout.write("".join(lines[: int(sys.argv[1])]))' "$ITEMS" > first.jsonl
  SAMPLE=first.jsonl
fi

started=$SECONDS
say "In $WORK: $ITEMS short IFEval prompts from the ifeval pack (reins packs lists the others)."
run reins -q ifeval scan "$SAMPLE"

say "The gate has one rule per IFEval instruction, run by Google's official checkers (reins -q ifeval rules)."
say "The unattended loop: the model answers, the gate judges, the ledger records each turn."
say "A FAIL's facts go back into the next prompt; after 3 failed answers an item is DONE, unsolved."
code=0
run reins -q ifeval loop --model "$MODEL" --concurrency 1 --no-export || code=$?
if [[ $code -ne 0 ]]; then
  echo "the loop stopped with exit code $code" >&2
  exit "$code"
fi

say "What the ratchet bought: passes on each answer. Answer 1 is a one-shot run of the same model."
run reins -q ifeval report
run reins -q ifeval status

# One item that passed after a FAIL: what the gate said, and what the model answered next. (The
# gate checks what its rules say and nothing else: IFEval's checkers read the instructions
# followed, not whether the answer is any good.)
# Through the CLI's --json, the surface programs are given, not the library's inner modules.
key="$("$BIN/reins" -q ifeval items --state PASS --limit 10000 --json | "$BIN/python" -c '
import json, sys
print(next((i["key"] for i in json.load(sys.stdin)["items"] if i["failures_used"] > 0), ""))
')"
if [[ -n "$key" ]]; then
  run reins -q ifeval log "$key"
fi

say "demo finished in $((SECONDS - started)) s"
