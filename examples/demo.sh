#!/usr/bin/env bash
# `make demo`: the main job, for real. The example quest's sample texts are worked unattended by
# a small language model that runs in this process (SmolLM2-135M-Instruct through llama.cpp);
# the gate, never the model, decides what is done. Everything happens in a temporary folder.
#
#   DEMO_MODEL=SPEC  another model spec (default below), e.g. openai:…?base_url=…
#   KEEP=1           keep the temporary folder and say where it is
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${REINS_BIN:-$ROOT/.venv/bin}"
# The answer's JSON shape is forced by a grammar (json_schema); what goes in it is the model's,
# and the gate checks every address against the text.
MODEL="${DEMO_MODEL:-local:smollm2?json_schema=addresses.schema.json&temperature=0.4&max_output_tokens=160}"

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

cat > addresses.schema.json <<'JSON'
{"type": "object", "required": ["addresses"],
 "properties": {"addresses": {"type": "array", "maxItems": 8, "items": {"type": "string"}}}}
JSON

started=$SECONDS
say "In $WORK: one item per sample text of the example quest (e-mail addresses as JSON)."
run reins -q emails scan

say "The unattended loop: the model answers, the gate judges, the ledger records each turn."
say "A FAIL's facts go back into the next prompt; after 3 tries an item is DONE, unsolved."
code=0
run reins -q emails loop --model "$MODEL" --concurrency 1 --no-export || code=$?
if [[ $code -ne 0 ]]; then
  echo "the loop stopped with exit code $code" >&2
  exit "$code"
fi

run reins -q emails status

# Up to two items that needed more than one try (those that got to PASS first): what the
# gate said each time, and what the model answered next.
mapfile -t retried < <("$BIN/python" - <<'PY'
from reins import SQLiteStore
from reins.store.walk import iter_items

with SQLiteStore.open("emails.reins.db") as ledger:
    items = sorted(iter_items(ledger), key=lambda i: (i.state.value != "PASS", i.key))
    print("\n".join([i.key for i in items if i.turns > 1][:2]))
PY
)
for key in "${retried[@]}"; do
  [[ -n "$key" ]] && run reins -q emails log "$key"
done

say "Export: every locked item once, as JSON lines (the loop ran with --no-export)."
run reins -q emails export
say "emails-results.jsonl, in short:"
"$BIN/python" - <<'PY'
import json

with open("emails-results.jsonl", encoding="utf-8") as f:
    for line in f:
        r = json.loads(line)
        print(f"  {r['key']:<16} {r['state']:<7} tries {r['tries']}  {(r['submission'] or '')[:70]}")
PY

say "demo finished in $((SECONDS - started)) s"
