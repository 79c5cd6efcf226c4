"""The official Python MCP SDK (PyPI `mcp`) doing toolport's job: connect to every server in a
JSON list over stdio, initialize, list all tools (following `nextCursor`), print the total.

    py_client.py SERVERS.json [--concurrent]

Prints the tool count and the milliseconds spent after the SDK's imports.
SERVERS.json: [{"name": ..., "command": ..., "args": [...]}, ...]. Without --concurrent the
servers are connected one after another (what a simple client does); with it, all at once
under one asyncio task group (a fair "best effort" peer for toolport's concurrent start).
"""

import time

STARTED = time.perf_counter()  # before the SDK's imports: its import cost is part of the job

import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.types import PaginatedRequestParams  # noqa: E402

IMPORTED = time.perf_counter()


async def list_one(server):
    params = StdioServerParameters(command=server["command"], args=server.get("args", []))
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                count, cursor = 0, None
                while True:
                    params = None if cursor is None else PaginatedRequestParams(cursor=cursor)
                    page = await session.list_tools(params=params)
                    count += len(page.tools)
                    cursor = page.next_cursor
                    if not cursor:
                        return count


async def main():
    servers = json.load(open(sys.argv[1]))
    if "--concurrent" in sys.argv[2:]:
        counts = await asyncio.gather(*(list_one(s) for s in servers))
    else:
        counts = [await list_one(s) for s in servers]
    done = time.perf_counter()
    # Tool count, then the milliseconds spent after the imports (connect + list only).
    print(sum(counts), round((done - IMPORTED) * 1000, 1))


if __name__ == "__main__":
    asyncio.run(main())
