#!/usr/bin/env bash
# Fetches the SARIF 2.1.0 JSON schema (the final, rtm.5 one) that `toolport scan --sarif` is
# validated against (tests/it/trust/), from a registry package that ships it: npm
# `@microsoft/jest-sarif` (Microsoft's SARIF SDK for JavaScript), unpacked with `npm pack`
# (no install, no dependencies) into <target>/sarif, once.
#
#   tests/trust/install_sarif_schema.sh [TARGET_DIR]     prints the schema file's path on success
#
# Idempotent and safe from several tests at once, as tests/peers/once.sh (an exclusive `flock`,
# a stamp written last), with the Node of tests/peers/install.sh; its own lock and stamp, since
# this script prints a file, not the folder.
set -euo pipefail

PACKAGE_VERSION="${JEST_SARIF_VERSION:-1.0.0-beta.0}"
SCHEMA="package/lib/schemas/sarif-2.1.0-rtm.5.json"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
target="${1:-${CARGO_TARGET_DIR:-$here/../../target}}"
peers="$(bash "$here/../peers/install.sh" "$target")"
mkdir -p "$target/sarif"
dir="$(cd "$target/sarif" && pwd)"
stamp="$dir/.installed-$PACKAGE_VERSION"
exec 9>"$dir/.lock"
flock 9
if [[ ! -f "$stamp" ]]; then
  rm -rf "$dir/package" "$dir"/*.tgz
  (cd "$dir" && PATH="$peers/bin:$PATH" npm pack --silent "@microsoft/jest-sarif@$PACKAGE_VERSION" >/dev/null)
  tar -xzf "$dir"/microsoft-jest-sarif-*.tgz -C "$dir" "$SCHEMA"
  grep -q '"version"' "$dir/$SCHEMA" \
    || { echo "install_sarif_schema.sh: $SCHEMA is not in the package" >&2; exit 1; }
  touch "$stamp"
fi
echo "$dir/$SCHEMA"
