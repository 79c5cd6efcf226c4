#!/usr/bin/env bash
# The person's browser for the conformance suite's OAuth scenarios ($BROWSER while
# adapter.sh runs toolport): opens the authorization URL, where the suite's authorization
# server answers at once with a redirect (nobody to log in), and follows that redirect to
# toolport's loopback callback, the way a browser would.
#
#   browser.sh <authorization-url>
set -uo pipefail

url="${1:?usage: browser.sh <authorization-url>}"
location="$(curl -s -o /dev/null -w '%{redirect_url}' "$url")"
if [[ -z "$location" ]]; then
  echo "browser.sh: the authorization server did not redirect" >&2
  exit 1
fi
curl -s -o /dev/null "$location"
