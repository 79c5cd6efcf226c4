"""What the serve benches share (bench/serve.py, bench/observe.py, bench/replicas.py, bench/scaling.py): a temporary home that
enables demo-server, and `toolport serve --http` started on a free loopback port."""

import json
import os
import re
import subprocess
import sys
import tempfile
import threading


def demo_home(toolport, prefix, **settings):
    """A temporary home + workspace enabling demo-server; `settings` go into the workspace
    file beside `enabledMcpServers` (e.g. `audit={"enabled": False}`). Returns the home and
    the `serve` command line for it."""
    root = tempfile.mkdtemp(prefix=prefix)
    home_dir, workspace = os.path.join(root, "home"), os.path.join(root, "ws")
    os.makedirs(os.path.join(workspace, ".toolport"))
    os.makedirs(home_dir)
    defs = {"demo": {"type": "stdio", "command": toolport, "args": ["demo-server"]}}
    json.dump({"mcpServers": defs}, open(os.path.join(home_dir, "mcp.json"), "w"))
    json.dump({"enabledMcpServers": list(defs), **settings},
              open(os.path.join(workspace, ".toolport", "workspace.json"), "w"))
    return home_dir, [toolport, "--home", home_dir, "--workspace", workspace, "serve"]


class ServeHttp:
    """`CMD --http 127.0.0.1:0 EXTRA…` until stopped: `url` (`http://127.0.0.1:PORT/mcp`) and
    `authority` (`127.0.0.1:PORT`) from its listening line, and, when `until` (a compiled
    pattern) is given, once a later line matches it too; stderr drained after that, so a
    chatty serve never blocks on a full pipe."""

    def __init__(self, cmd, env, extra=(), until=None):
        self.proc = subprocess.Popen([*cmd, "--http", "127.0.0.1:0", *extra], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        self.url, seen = None, []
        while True:
            line = self.proc.stderr.readline()
            if not line:
                break
            seen.append(line)
            m = re.match(r"toolport serve: listening on (http://(\S+)/mcp)", line)
            if m:
                self.url, self.authority = m.group(1), m.group(2)
            if self.url is not None and (until is None or until.search(line)):
                threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()
                return
        self.proc.kill()
        waited = "no listening line" if self.url is None else f"no line matching {until.pattern!r}"
        sys.exit(f"serve --http printed {waited}:\n" + "".join(seen)[-2000:])

    def cpu_seconds(self):
        """serve's own CPU time so far (user + system; not its servers')."""
        fields = open(f"/proc/{self.proc.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def status(self, field):
        """A field of /proc/PID/status in kB (`VmHWM`, `VmRSS`), 0 when absent."""
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith(field + ":"):
                return int(line.split()[1])
        return 0

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
