#!/usr/bin/env bash
# serve's own CPU per tool call against the bare rmcp relay (issue 47, item 7): the start and
# end of each process left out (a run of --warm calls subtracted from one of --calls), rows
# interleaved over --rounds. Give other builds to compare as NAME=PATH. Run on an idle machine:
# a loaded one moves the figures more than the changes measured. Not run in CI.
#
#   bench/serve_cpu.sh [--no-build] [--calls N] [--warm N] [--rounds N] [NAME=TOOLPORT ...]
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/prelude.sh"

need_bare_relay

exec "$bench/venv/bin/python" "$here/serve_cpu.py" --bare "$bare" --demo "$toolport" \
  --python "$bench/venv/bin/python" "${extra[@]}" "serve=$toolport"
