"""Talks MCP to the wasm server fixtures without toolport's host, through run_component.py.

Why: when a host test of the `wasm` server type fails, this tells whether the guest itself still
speaks MCP over stdio and misbehaves exactly as the host tests expect. Each check spawns the
component, sends one request at a time and waits for its answer (so a server that read all of
stdin before answering would fail here).

    python3 tests/wasm/smoke.py [TARGET_DIR]      (default: target/ beside tests/)

Needs TARGET_DIR/wasm-peers/wasmtime-py (`pip install --target … wasmtime`),
TARGET_DIR/wasm-peers/python_server.wasm (tests/wasm/build-python.sh) and
TARGET_DIR/plugins/wasm32-wasip2/release/server_hostile.wasm (the guest workspace's build).
A missing one is a failure. Ends with "N passed, N failed".
"""

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "target"))
PEERS = os.path.join(TARGET, "wasm-peers")
PYTHON_SERVER = os.path.join(PEERS, "python_server.wasm")
HOSTILE = os.path.join(TARGET, "plugins", "wasm32-wasip2", "release", "server_hostile.wasm")
REPLY_TIMEOUT = 30.0


class Server:
    """One component under run_component.py, with its stdout lines on a queue."""

    def __init__(self, component, args=(), runner_opts=()):
        env = dict(os.environ, PYTHONPATH=os.path.join(PEERS, "wasmtime-py"))
        compiled = os.path.join(PEERS, os.path.basename(component) + ".cwasm")
        cmd = [sys.executable, os.path.join(HERE, "run_component.py"), "--compiled", compiled,
               *runner_opts, component, *args]
        self.stderr = tempfile.TemporaryFile()
        self.started = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, env=env)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 1

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params=None, timeout=REPLY_TIMEOUT):
        """The reply to one request, or None when none came within `timeout` (or stdout closed)."""
        msg_id = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {}})
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if line is None:
                return None
            reply = json.loads(line)
            if reply.get("id") == msg_id:
                return reply

    def handshake(self):
        discover = self.request("server/discover")
        assert discover and discover["error"]["code"] == -32601, f"server/discover: {discover}"
        init = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                           "clientInfo": {"name": "smoke", "version": "0"}})
        assert init and init["result"]["protocolVersion"] == "2025-06-18", f"initialize: {init}"
        self.startup = time.monotonic() - self.started
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return init["result"]

    def tools(self):
        return [t["name"] for t in self.request("tools/list")["result"]["tools"]]

    def call(self, name, arguments=None, timeout=REPLY_TIMEOUT):
        """(text, isError) of a tools/call, or None when it got no answer."""
        reply = self.request("tools/call", {"name": name, "arguments": arguments or {}}, timeout)
        if reply is None:
            return None
        assert "result" in reply, f"tools/call {name}: {reply}"
        return reply["result"]["content"][0]["text"], reply["result"]["isError"]

    def close(self):
        """Ends stdin, waits briefly, kills a server that is still busy; returns (status, stderr)."""
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            status = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            status = self.proc.wait()
        self.stderr.seek(0)
        return status, self.stderr.read()


def hostile(mode, *args, runner_opts=()):
    server = Server(HOSTILE, (mode, *args), runner_opts)
    info = server.handshake()
    assert info["serverInfo"]["name"] == "hostile", info
    return server


def check_python():
    server = Server(PYTHON_SERVER)
    info = server.handshake()
    assert info["serverInfo"]["name"] == "python-wasm", info
    assert server.tools() == ["add", "reverse"], server.tools()
    assert server.call("add", {"a": 2, "b": 40}) == ("42", False)
    assert server.call("add", {"a": 1.5, "b": "x"}) == ("add needs numbers a and b", True)
    assert server.call("reverse", {"text": "héllo wasm"}) == ("msaw olléh", False)
    status, _ = server.close()
    assert status == 0, status
    return f"python_server.wasm: startup to initialize answered {server.startup * 1000:.0f} ms"


def check_healthy():
    server = hostile("healthy")
    assert server.tools() == ["echo"]
    assert server.call("echo", {"text": "hi"}) == ("hi", False)
    assert server.request("resources/list")["error"]["code"] == -32601
    assert server.request("ping")["result"] == {}
    status, _ = server.close()
    assert status == 0, status
    return f"server_hostile.wasm healthy: startup {server.startup * 1000:.0f} ms"


def check_env():
    bare = hostile("env", "TOOLPORT_TEST_SECRET")
    assert bare.call("env") == ("TOOLPORT_TEST_SECRET is not set\nvisible: (none)", False)
    bare.close()
    granted = hostile("env", "TOOLPORT_TEST_SECRET",
                      runner_opts=["--env", "TOOLPORT_TEST_SECRET=s3cret", "--env", "OTHER=1"])
    text = granted.call("env")
    assert text == ("value: s3cret\nvisible: OTHER, TOOLPORT_TEST_SECRET", False), text
    granted.close()


def check_dir():
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "note.txt")
        with open(path, "w") as f:
            f.write("inside")
        denied = hostile("dir")
        text, is_error = denied.call("dir", {"path": path})
        assert is_error and text.startswith(f"cannot read {path}: "), text
        denied.close()
        granted = hostile("dir", runner_opts=["--dir", folder])
        assert granted.call("dir", {"path": path}) == ("inside", False)
        granted.close()


def check_alloc():
    graceful = hostile("alloc", runner_opts=["--memory-mb", "64"])
    text, is_error = graceful.call("alloc", {"how": "try_reserve"})
    assert is_error and text.startswith("cannot allocate 1073741824 bytes: "), text
    assert graceful.call("alloc", {"how": "try_reserve"})[1], "still serving after the refusal"
    graceful.close()
    aborting = hostile("alloc", runner_opts=["--memory-mb", "64"])
    assert aborting.call("alloc") is None, "vec! must abort, not answer"
    status, stderr = aborting.close()
    assert status == 3 and b"memory allocation of 1073741824 bytes failed" in stderr, (status, stderr)


def check_spin():
    server = hostile("spin")
    assert server.call("spin", timeout=2.0) is None, "spin answered"
    assert server.proc.poll() is None, "spin exited instead of spinning"
    server.proc.kill()
    server.close()


def check_stderr():
    server = hostile("stderr")
    assert server.call("stderr") == ("done", False)
    _, stderr = server.close()
    lines = stderr.splitlines()
    assert len(stderr) == 50_000_000 and len(lines) == 500_000, (len(stderr), len(lines))
    assert lines[-1].startswith(b"stderr flood line 500000 ."), lines[-1][:40]


def check_sockets():
    # run_component.py grants no network (the PyPI wasmtime has no socket switch): every one of
    # the 100 000 attempts is refused, and the tool says so instead of failing.
    server = hostile("sockets", "127.0.0.1:9")
    text, is_error = server.call("sockets")
    assert not is_error and text.startswith(
        "opened 0 of 100000 connections to 127.0.0.1:9; first error: "), text
    server.close()
    bare = hostile("sockets")
    assert bare.call("sockets") == ("sockets needs an address as args[2]", True)
    bare.close()


def main():
    missing = [p for p in (os.path.join(PEERS, "wasmtime-py"), PYTHON_SERVER, HOSTILE) if not os.path.exists(p)]
    if missing:
        print("smoke.py: missing " + ", ".join(missing), file=sys.stderr)
        print("0 passed, 1 failed")
        sys.exit(1)
    checks = [check_python, check_healthy, check_env, check_dir, check_alloc, check_spin,
              check_stderr, check_sockets]
    passed = failed = 0
    for check in checks:
        started = time.monotonic()
        try:
            note = check()
        except Exception as e:  # report every check, not just the first failure
            failed += 1
            print(f"FAIL {check.__name__}: {type(e).__name__}: {e}")
            continue
        passed += 1
        extra = f" ({note})" if note else ""
        print(f"ok   {check.__name__} {time.monotonic() - started:.2f}s{extra}")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
