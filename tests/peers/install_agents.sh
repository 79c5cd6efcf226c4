#!/usr/bin/env bash
# Installs the real coding agents whose config files `toolport install` writes and
# `toolport mcp import` reads, into <target>/agents, once, so the tests ask the agent itself
# what it makes of a file:
#   - Claude Code (npm `@anthropic-ai/claude-code`): <agents>/node_modules/.bin/claude
#     (`claude mcp list` reads ~/.claude.json and .mcp.json, connects, and needs no sign-in);
#   - Gemini CLI (npm `@google/gemini-cli`): <agents>/node_modules/.bin/gemini
#     (`gemini mcp list` reads settings.json the way the agent does, and needs no sign-in);
#   - Codex (npm `@openai/codex`): <agents>/node_modules/.bin/codex
#     (`codex app-server` speaks the JSON-RPC its editor extensions speak, and lists and calls
#     MCP tools with no sign-in).
#
#   tests/peers/install_agents.sh [TARGET_DIR]     prints the agents folder on success
#
# Same shape as tests/peers/install_clients.sh (whose Node it uses): idempotent and locked
# (tests/peers/once.sh). Pinned to the versions issues 25 and 45 were found with.
set -euo pipefail

CLAUDE_CODE_VERSION="${CLAUDE_CODE_VERSION:-2.1.328}"
GEMINI_CLI_VERSION="${GEMINI_CLI_VERSION:-0.61.0}"
CODEX_VERSION="${CODEX_VERSION:-0.171.0}"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="${1:-${CARGO_TARGET_DIR:-$here/../../target}}"
peers="$(bash "$here/install.sh" "$target")"
source "$here/once.sh"
once_begin "$target/agents" "$CLAUDE_CODE_VERSION-$GEMINI_CLI_VERSION-$CODEX_VERSION"
agents="$once_dir"

PATH="$peers/bin:$PATH" npm install --silent --no-audit --no-fund --prefix "$agents" \
  "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "@google/gemini-cli@$GEMINI_CLI_VERSION" \
  "@openai/codex@$CODEX_VERSION" >&2
for bin in claude gemini codex; do
  [[ -x "$agents/node_modules/.bin/$bin" ]] \
    || { echo "install_agents.sh: no $bin after npm install" >&2; exit 1; }
done

once_done
