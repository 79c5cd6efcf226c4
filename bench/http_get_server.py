"""A stdio MCP server (Python SDK) with one tool, `get_many`, for bench/native_sandbox.py: N
plain HTTP GETs of one page over raw sockets, timed inside the server, so a figure holds the
network hop and nothing of a client library's set-up. Through `HTTP_PROXY` when it is set (the
sandbox sets it: absolute-form to toolport's egress proxy), else straight to the page."""

import os
import socket
import statistics
import time
from urllib.parse import urlsplit

from mcp.server.mcpserver import MCPServer

app = MCPServer("http-get")


def get(host: str, port: int, path: str, proxy) -> int:
    target, address = (f"http://{host}:{port}{path}", proxy) if proxy else (path, (host, port))
    with socket.create_connection(address) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(f"GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
        size = 0
        while chunk := s.recv(65536):
            size += len(chunk)
    return size


@app.tool(structured_output=False)
def get_many(host: str, port: int, path: str, n: int) -> str:
    """N GETs of http://host:port/path; the median milliseconds of one, and the bytes of each."""
    proxy_url = os.environ.get("HTTP_PROXY")
    proxy = None
    if proxy_url:
        parts = urlsplit(proxy_url)
        proxy = (parts.hostname, parts.port)
    times, size = [], 0
    for _ in range(n):
        started = time.perf_counter()
        size = get(host, port, path, proxy)
        times.append(time.perf_counter() - started)
    return f"{statistics.median(times) * 1000:.4f} {size}"


if __name__ == "__main__":
    app.run()
