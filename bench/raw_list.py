"""The raw client of bench/mcp_list_exit.py: starts a stdio MCP server (the command line given),
sends initialize, notifications/initialized and tools/list as bare JSON-RPC lines, prints how
many tools it listed, closes the server's stdin and waits for it to exit."""
import json, subprocess, sys

server = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def send(message):
    server.stdin.write((json.dumps(message) + "\n").encode())
    server.stdin.flush()
def answer(id):
    for line in server.stdout:
        message = json.loads(line)
        if message.get("id") == id:
            return message["result"]
    sys.exit("the server closed stdout")
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
      "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
answer(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
print(len(answer(2)["tools"]), "tools")
server.stdin.close()
server.wait()
