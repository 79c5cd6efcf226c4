"""Calls through `toolport serve --http` with the official Python SDK's default `mcp.Client`
(2026-07-28, as users run it), from a chosen loopback address, so a test can be two callers
without tokens: serve tells callers without a token's subject apart by address. Prints one JSON
object for tests/it/team/limits.rs: what each call gave, never a verdict.

    limits_client.py --url http://127.0.0.1:PORT/mcp [--from 127.0.0.2] --call TOOL=JSON ...
                     [--until-refused]

Each --call is made in order in one client; a refused call is recorded as its error's text.
With --until-refused the calls stop at the first error.
"""

import argparse
import json

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from outcome import print_outcome


def texts(result):
    return [c.text for c in result.content if getattr(c, "type", None) == "text"]


async def run(args):
    calls = []
    for spec in args.call:
        tool, _, arguments = spec.partition("=")
        calls.append((tool, json.loads(arguments or "{}")))
    # The SDK's own timeouts, with the socket bound to --from.
    http = httpx2.AsyncClient(
        transport=httpx2.AsyncHTTPTransport(local_address=args.source),
        timeout=httpx2.Timeout(30.0, read=300.0),
    )
    seen = []
    try:
        async with http:
            async with Client(streamable_http_client(args.url, http_client=http)) as client:
                for tool, arguments in calls:
                    try:
                        result = await client.call_tool(tool, arguments)
                        seen.append({"tool": tool, "is_error": bool(result.is_error), "texts": texts(result)})
                    except Exception as e:  # the refusal, as the SDK raises it
                        seen.append({"tool": tool, "error": str(e)})
                        if args.until_refused:
                            break
    except Exception as e:  # refused before any call (the client's own first requests)
        return {"calls": seen, "client_error": f"{type(e).__name__}: {e}"}
    return {"calls": seen}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True)
    p.add_argument("--from", dest="source", default="127.0.0.1", help="the local address to call from")
    p.add_argument("--call", action="append", default=[], help="TOOL=JSON arguments; repeatable")
    p.add_argument("--until-refused", action="store_true")
    p.add_argument("--timeout", type=float, default=60.0)
    args = p.parse_args()

    print_outcome(run, args, error_key="client_error")


if __name__ == "__main__":
    main()
