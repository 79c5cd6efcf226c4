#!/usr/bin/env bash
# A stand-in for a web browser, for `BROWSER=tests/auth/browser.sh toolport mcp login NAME`
# (tests/it/auth/login.rs). It does what a person's browser does with the authorization URL:
# GET it, take the authorization server's redirect (`Location`, never followed by curl itself)
# and GET that, which is toolport's loopback callback.
#
#   browser.sh [ARG…] URL          the URL is the last argument, as toolport passes it
#
# Like a real browser launcher it returns at once and does the fetching in the background, so
# a program that waits for its browser to exit before serving the callback is not deadlocked.
# What it did goes to $AUTH_BROWSER_LOG (default /dev/null): the test shows it on failure.
set -uo pipefail

url="${!#}"
log="${AUTH_BROWSER_LOG:-/dev/null}"

(
  echo "browser.sh: GET $url"
  location="$(curl --silent --show-error --max-time 30 --output /dev/null --write-out '%{redirect_url}' "$url")" \
    || { echo "browser.sh: the authorization URL failed"; exit 1; }
  if [[ -z "$location" ]]; then
    echo "browser.sh: the authorization server did not redirect"
    exit 1
  fi
  echo "browser.sh: redirected to $location"
  status="$(curl --silent --show-error --max-time 30 --output /dev/null --write-out '%{http_code}' "$location")" \
    || { echo "browser.sh: the callback failed"; exit 1; }
  echo "browser.sh: callback answered $status"
) >>"$log" 2>&1 </dev/null &

exit 0
