#!/usr/bin/env bash
# The main job. Until the unattended loop runs on a local model, the hand-driven demo.
exec "$(dirname "$0")/demo_by_hand.sh"
