#!/usr/bin/env bash
# The conformance suite's client under test: drives the built `toolport` binary the way a person
# would, against the scenario's server.
#
#   adapter.sh <server-url>        (run by `conformance client --command`)
#
# The suite sets MCP_CONFORMANCE_SCENARIO (and MCP_CONFORMANCE_CONTEXT for some scenarios);
# run.sh sets TOOLPORT_BIN (the binary under test) and CONFORMANCE_NODE (a Node to read JSON
# with). Each run gets its own temporary home and workspace, so nothing leaks between scenarios
# or into the user's own store. What each scenario expects a client to do comes from the suite's
# reference client (examples/clients/typescript/everything-client.ts in its repository).
set -uo pipefail

url="${1:?usage: adapter.sh <server-url>}"
scenario="${MCP_CONFORMANCE_SCENARIO:?MCP_CONFORMANCE_SCENARIO is not set}"
bin="${TOOLPORT_BIN:?TOOLPORT_BIN is not set}"
node="${CONFORMANCE_NODE:?CONFORMANCE_NODE is not set}"

home="$(mktemp -d)"
workspace="$(mktemp -d)"
trap 'rm -rf "$home" "$workspace"' EXIT

tp() { "$bin" --home "$home" --workspace "$workspace" "$@"; }

# Prints a JSON value read with Node: `json EXPR` evaluates EXPR with `input` bound to stdin's
# parsed JSON and prints the result as JSON (strings included).
json() {
  "$node" -e '
    let text = "";
    process.stdin.on("data", (d) => (text += d));
    process.stdin.on("end", () => {
      const input = JSON.parse(text);
      const value = new Function("input", "return (" + process.argv[1] + ")")(input);
      process.stdout.write(JSON.stringify(value ?? null));
    });' "$1"
}

failed=0
# `call TOOL [ARGS]`: one `toolport call`; a failure is remembered, not fatal, so the scenario
# sees every call it expects.
call() {
  echo "+ toolport call $*" >&2
  tp call "$@" || failed=1
}

context="${MCP_CONFORMANCE_CONTEXT:-{\}}"

if [[ "$scenario" == auth/* ]]; then
  # OAuth, as a person does it: the definition carries what the scenario hands out (a
  # pre-registered client, client credentials, a client metadata document), `mcp login` signs
  # in with $BROWSER playing the browser, then the tools are listed and called. A command that
  # says "authorization required" after a successful sign-in (the server moved to another
  # authorization server, or wants more scope: no command signs in by itself) gets what its
  # message asks for: one more `mcp login`, then again.
  export BROWSER="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/browser.sh"
  oauth="$(printf '%s' "$context" | json '(() => {
    const o = {};
    if (input.client_id) o.clientId = input.client_id;
    if (input.client_secret) o.clientSecret = input.client_secret;
    if (input.private_key_pem) { o.privateKey = input.private_key_pem; o.privateKeyJwt = input.signing_algorithm || "ES256"; }
    if (input.name && input.name.startsWith("auth/client-credentials")) o.grant = "client_credentials";
    if (input.valid_jwt) {
      o.grant = "jwt_bearer"; o.assertion = input.valid_jwt;
      // A jwt_bearer definition pins the authorization server it trusts with the token; the
      // scenario names it only as the audience the platform issued the token for, so the
      // issuer an operator would write is taken from there.
      const aud = JSON.parse(Buffer.from(input.valid_jwt.split(".")[1], "base64url").toString()).aud;
      o.issuer = Array.isArray(aud) ? aud[0] : aud;
    }
    if (input.idp_id_token) {
      o.grant = "enterprise";
      o.idp = { issuer: input.idp_issuer, tokenEndpoint: input.idp_token_endpoint,
                clientId: input.idp_client_id, idToken: input.idp_id_token };
    }
    o.clientMetadataUrl = "https://conformance-test.local/client-metadata.json";
    return o;
  })()')"
  tp mcp add-json conformance "{\"type\": \"http\", \"url\": \"$url\", \"oauth\": $oauth}" >&2 || exit 1
  tp mcp enable conformance >&2 || exit 1
  signed_in=0
  # Machine-to-machine grants sign in by themselves on connect; nobody logs in or calls.
  machine=0
  case "$scenario" in
    auth/client-credentials-* | auth/wif-* | auth/enterprise-managed-*) machine=1 ;;
  esac
  if (( ! machine )); then
    echo "+ toolport mcp login conformance" >&2
    tp mcp login conformance >&2 && signed_in=1 || failed=1
  fi
  if [[ "$scenario" == auth/dpop* ]] && (( signed_in )); then
    # The token is bound to the sign-in's key, and `mcp get` says so (the key itself never shows).
    got="$(tp mcp get conformance 2>&1)"
    printf '%s\n' "$got" >&2
    grep -q 'bound to a DPoP key' <<<"$got" || { echo "adapter.sh: mcp get does not say the token is DPoP-bound" >&2; failed=1; }
  fi
  # `again CMD…`: CMD, and once more after a new sign-in if it asked for one.
  again() {
    local out status
    out="$("$@" 2>&1)"; status=$?
    printf '%s\n' "$out" >&2
    if (( status != 0 && signed_in )) && grep -q 'authorization required' <<<"$out"; then
      echo "+ toolport mcp login conformance (asked for again)" >&2
      tp mcp login conformance >&2 || return 1
      "$@"; return $?
    fi
    return "$status"
  }
  again tp tools --json >/dev/null || failed=1
  if (( ! machine )); then
    echo "+ toolport call test-tool {}" >&2
    again tp call test-tool '{}' || failed=1
  fi
  exit "$failed"
fi

tp mcp add --transport http conformance "$url" >&2 || exit 1
tp mcp enable conformance >&2 || exit 1
tools="$(tp tools --json)" || exit 1

case "$scenario" in
  initialize | json-schema-ref-no-deref | sep-2640-*)
    # Connecting and listing is the whole scenario.
    ;;
  tools_call)
    call add_numbers '{"a": 2, "b": 3}'
    ;;
  json-schema-2020-12-preservation)
    # Echo the schema exactly as `tools --json` shows it: the server compares it with its own.
    schema="$(printf '%s' "$tools" | json \
      'input.find((t) => t.function.name === "json_schema_2020_12_tool").function.parameters')"
    call json_schema_echo "{\"schema\": $schema}"
    ;;
  request-metadata | http-standard-headers | http-invalid-tool-headers)
    # Call every tool toolport offers, with no arguments: the scenario checks what goes on the
    # wire (and, for invalid headers, that the bad tools are not offered at all).
    for name in $(printf '%s' "$tools" | json 'input.map((t) => t.function.name).join(" ")' | tr -d '"'); do
      call "$name" '{}'
    done
    ;;
  http-custom-headers)
    # The scenario names the calls it wants in MCP_CONFORMANCE_CONTEXT.
    count="$(printf '%s' "$context" | json '(input.toolCalls || []).length')"
    for ((i = 0; i < count; i++)); do
      name="$(printf '%s' "$context" | json "input.toolCalls[$i].name" | tr -d '"')"
      args="$(printf '%s' "$context" | json "input.toolCalls[$i].arguments")"
      call "$name" "$args"
    done
    ;;
  sse-retry)
    call test_reconnection '{}'
    ;;
  elicitation-sep1034-client-defaults)
    # No terminal here: the person's answer is "accept, with the schema's defaults".
    call test_client_elicitation_defaults '{}' --elicit accept-defaults
    ;;
  sep-2322-client-request-state)
    call test_mrtr_echo_state '{}' --elicit accept-defaults
    call test_mrtr_no_state '{}' --elicit accept-defaults
    call test_mrtr_no_result_type '{}' --elicit accept-defaults
    # A call of its own after the rounds: it must carry none of their answers or state.
    call test_mrtr_unrelated '{}' --elicit accept-defaults
    ;;
  *)
    echo "adapter.sh: no steps for scenario $scenario; add them here" >&2
    exit 2
    ;;
esac
exit "$failed"
