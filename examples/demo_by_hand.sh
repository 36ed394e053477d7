#!/usr/bin/env bash
# The hand-driven demo: a driver takes an item with `next`, answers badly, reads the facts,
# answers again, and the gate locks it. Runs in a temporary folder; leaves nothing behind.
set -euo pipefail
REINS="${REINS:-$(cd "$(dirname "$0")/.." && pwd)/.venv/bin/reins}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export REINS_QUEST=emails REINS_DRIVER=demo
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

say reins scan
"$REINS" scan

say reins next
"$REINS" next

say "echo '{\"addresses\": [\"priya.raman@northwind-labs.example\", \"bob@example.org\"]}' | reins submit --key 01-meeting"
echo '{"addresses": ["priya.raman@northwind-labs.example", "bob@example.org"]}' \
  | "$REINS" submit --key 01-meeting || echo "(exit $?: FAIL with tries left — the facts above go into the next prompt)"

say "reins next   # same item, now with the facts of the FAIL"
"$REINS" next | tail -n 14

say "echo '{\"addresses\": [\"priya.raman@northwind-labs.example\", \"facilities@northwind-labs.example\"]}' | reins submit --key 01-meeting"
echo '{"addresses": ["priya.raman@northwind-labs.example", "facilities@northwind-labs.example"]}' \
  | "$REINS" submit --key 01-meeting

say "echo '{\"addresses\": [\"marisol_ortega77@yahoo.com\", \"tier2-support@helpdesk.example\"]}' | reins submit --key 07-support"
echo '{"addresses": ["marisol_ortega77@yahoo.com", "tier2-support@helpdesk.example"]}' \
  | "$REINS" submit --key 07-support || echo "(exit $?: locked REVIEW, not a pass — a person decides)"

say "reins resolve 07-support --accept --note 'the customer wrote from that address'"
"$REINS" resolve 07-support --accept --note "the customer wrote from that address"

say "echo '{\"addresses\": []}' | reins submit --key 01-meeting   # locked: refused"
echo '{"addresses": []}' | "$REINS" submit --key 01-meeting || echo "(exit $?: the item is locked for good)"

say reins status
"$REINS" status

say "reins status --todo"
"$REINS" status --todo

say reins export
"$REINS" export
say "head -c 300 emails-results.jsonl"
head -c 300 emails-results.jsonl; echo
