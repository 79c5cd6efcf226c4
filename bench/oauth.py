"""The numbers behind bench/oauth.sh: what an OAuth sign-in adds to a one-shot CLI command.

    oauth.py --toolport BIN --server tests/auth/oauth_server.py --browser tests/auth/browser.sh
             --out DIR [--runs N] [--login-runs N] [--token-seconds S]

Against the OAuth fixture (`tests/auth/oauth_server.py`, the Python SDK's authorization and
resource server, run by this venv's python with a long --token-seconds so no run refreshes):

  (a) `toolport tools --json` (one process: connect, list, exit) to the server signed in with
      `mcp login`: every connect reads credentials.json (the tokens and the authorization
      server metadata the sign-in discovered) and sends the stored token;
  (b) the baseline: the same command to the same server through a definition with a static
      `"headers": {"Authorization": "Bearer <the same access token>"}` and no sign-in;
  (c) `toolport call echo {...}` the same two ways;
  (d) `toolport mcp login` itself, each in a fresh home (discovery, dynamic client
      registration, the browser stand-in's round trip, the code exchange, the save).

Each repetition runs (a), (b) and both calls of (c) once, in turn (every other repetition in the
reverse order), after one warm-up each, so a load spike on the shared machine hits both sides of
a ratio; medians. Every figure is measured on this run. The access token is read from
credentials.json into the baseline's definition in a temporary home and is never printed. Writes
DIR/oauth.md.
"""

import argparse
import http.client
import resource
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NAME = "remote"
ECHO_TEXT = "bench"
# The fixture's two tools: `whoami` and `echo`.
TOOLS = 2
# How long the fixture may take to print READY (the SDK's imports take a second or two here).
READY_SECONDS = 60
# Each toolport command is well under a second; this only stops a hang.
COMMAND_SECONDS = 120


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("RUST_LOG", "TOOLPORT_HOME")}
    env.update(extra)
    return env


class Fixture:
    """tests/auth/oauth_server.py --port 0, running until stopped."""

    def __init__(self, script, token_seconds):
        self.proc = subprocess.Popen(
            [sys.executable, script, "--port", "0", "--token-seconds", str(token_seconds)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        deadline = time.monotonic() + READY_SECONDS
        line = ""
        while time.monotonic() < deadline and not line:
            line = self.proc.stdout.readline()
            if self.proc.poll() is not None:
                break
        if not line.startswith("READY http://127.0.0.1:"):
            self.stop()
            sys.exit(f"oauth.py: oauth_server.py printed {line!r} instead of READY")
        self.url = line.split()[1]

    def stop(self):
        self.proc.kill()
        self.proc.wait(timeout=10)


class Home:
    """A temporary home and workspace for `toolport --home H --workspace W`."""

    def __init__(self, args, work, label):
        self.args = args
        self.home = Path(tempfile.mkdtemp(prefix=f"{label}-", dir=work))
        self.ws = self.home / "ws"
        self.ws.mkdir()

    def cmd(self, *words):
        return [self.args.toolport, "--home", str(self.home), "--workspace", str(self.ws), *words]

    def run(self, *words, env=None):
        """Runs toolport to the end; returns (wall seconds, stdout). A failure ends the bench."""
        started = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(self.cmd(*words), stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             env=env or clean_env(), timeout=COMMAND_SECONDS)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        # The process's own CPU time (user + system): far less sensitive to other load than wall.
        self.cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if out.returncode != 0:
            # stdout and stderr are toolport's own, which never print a token (tests/it/auth/login.rs).
            sys.exit(f"oauth.py: toolport {' '.join(words[:2])} exited {out.returncode}:\n{out.stdout}{out.stderr}")
        return wall, out.stdout

    def define(self, definition):
        self.run("mcp", "add-json", NAME, json.dumps(definition))
        self.run("mcp", "enable", NAME)

    def login(self):
        env = clean_env(BROWSER=self.args.browser, AUTH_BROWSER_LOG=os.devnull)
        return self.run("mcp", "login", NAME, env=env)[0]

    def access_token(self, url):
        """The stored access token of `url` (credentials.json, store.rs's layout)."""
        doc = json.loads((self.home / "credentials.json").read_text())
        entry = doc["servers"][url]
        return entry["issuers"][entry["current"]]["token"]["access_token"]


def tools(home):
    wall, out = home.run("tools", "--json")
    if len(json.loads(out)) != TOOLS:
        sys.exit(f"oauth.py: tools --json listed {len(json.loads(out))} tools, wanted {TOOLS}")
    return wall


def call(home):
    wall, out = home.run("call", "echo", json.dumps({"text": ECHO_TEXT}))
    if out != f"{ECHO_TEXT}\n":
        sys.exit(f"oauth.py: call echo answered {out!r}")
    return wall


def metadata_gets(url):
    """Two GETs of the fixture's authorization server metadata on one keep-alive connection,
    as rmcp's discovery sends them through reqwest's pool; returns (first, second) seconds. A
    diagnostic: it shows what the server itself takes on a fresh and on a reused connection."""
    origin = url.removesuffix("/mcp").removeprefix("http://")
    conn = http.client.HTTPConnection(origin, timeout=COMMAND_SECONDS)
    try:
        walls = []
        for _ in range(2):
            started = time.perf_counter()
            conn.request("GET", "/.well-known/oauth-authorization-server")
            answer = conn.getresponse()
            answer.read()
            walls.append(time.perf_counter() - started)
            if answer.status != 200:
                sys.exit(f"oauth.py: the fixture's metadata answered {answer.status}")
        return walls[0], walls[1]
    finally:
        conn.close()


def stats(samples):
    ms = [s * 1000 for s in samples]
    return {"median": statistics.median(ms), "min": min(ms), "max": max(ms), "n": len(ms)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--toolport", required=True)
    p.add_argument("--server", required=True, help="tests/auth/oauth_server.py")
    p.add_argument("--browser", required=True, help="tests/auth/browser.sh")
    p.add_argument("--out", required=True)
    p.add_argument("--runs", type=int, default=30, help="repetitions of (a), (b) and (c)")
    p.add_argument("--login-runs", type=int, default=10, help="repetitions of (d)")
    p.add_argument("--token-seconds", type=int, default=86400, help="long: no run may refresh")
    args = p.parse_args()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_before = os.getloadavg()

    work = tempfile.mkdtemp(prefix="toolport-oauth-bench-")
    fixture = Fixture(args.server, args.token_seconds)
    try:
        oauth = Home(args, work, "oauth")
        oauth.define({"type": "http", "url": fixture.url, "oauth": {}})
        oauth.login()
        header = Home(args, work, "header")
        bearer = f"Bearer {oauth.access_token(fixture.url)}"
        header.define({"type": "http", "url": fixture.url, "headers": {"Authorization": bearer}})

        fns = {
            "a": lambda: tools(oauth),
            "b": lambda: tools(header),
            "c": lambda: call(oauth),
            "c0": lambda: call(header),
        }
        first_get, reused_get = [], []
        samples = {k: [] for k in fns}
        cpu = {k: [] for k in fns}
        homes = {"a": oauth, "b": header, "c": oauth, "c0": header}
        for fn in fns.values():
            fn()  # warm-up: page cache, the fixture's first requests
        for i in range(args.runs):
            print(f"run {i + 1}/{args.runs} …", file=sys.stderr)
            # Every other repetition in reverse: neither side of a ratio always runs right after
            # the other (the fixture may still be finishing the previous command's session).
            order = list(fns.items()) if i % 2 == 0 else list(reversed(fns.items()))
            for key, fn in order:
                samples[key].append(fn())
                cpu[key].append(homes[key].cpu)
        # The diagnostic after the timed runs, not between them: the command right after its
        # stalled keep-alive GET ran a few ms late, and with (a) always next, that was most of
        # what (a) measured above (b).
        for _ in range(args.runs):
            first, second = metadata_gets(fixture.url)
            first_get.append(first)
            reused_get.append(second)

        logins = []
        for i in range(args.login_runs):
            print(f"login {i + 1}/{args.login_runs} …", file=sys.stderr)
            fresh = Home(args, work, "login")
            fresh.define({"type": "http", "url": fixture.url, "oauth": {}})
            logins.append(fresh.login())
    finally:
        fixture.stop()
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()

    s = {k: stats(v) for k, v in samples.items()}
    c = {k: stats(v) for k, v in cpu.items()}
    login = stats(logins)
    fresh_get, kept_get = stats(first_get), stats(reused_get)
    stall = kept_get["median"] - fresh_get["median"]
    ratio_list = s["a"]["median"] / s["b"]["median"]
    ratio_call = s["c"]["median"] / s["c0"]["median"]

    def row(what, key, base=None):
        r = s[key]
        vs = "1.00×" if base is None else f"**{r['median'] / s[base]['median']:.2f}×**"
        return f"| {what} | {r['median']:.1f} ms | {r['min']:.1f}–{r['max']:.1f} ms | {vs} |"

    lines = [
        "# toolport and OAuth: what a sign-in adds to a CLI command",
        "",
        f"Measured by `bench/oauth.sh` on {when}, {os.cpu_count()} cores (load average before "
        f"{load_before[0]:.1f}, after {load_after[0]:.1f}), release build `{args.toolport}`, against "
        f"`tests/auth/oauth_server.py` (Python SDK, loopback, tokens living {args.token_seconds} s: no refresh "
        "in any run). One process per command; wall time from spawn to exit.",
        "Medians; expect ±60% between runs on this machine.",
        "",
        f"## Connect and list, `toolport tools --json` ({args.runs} runs each, interleaved)",
        "",
        "| server reached | median | range | vs static header |",
        "|---|---|---|---|",
        row("(b) definition with a static `Authorization: Bearer …` header (baseline)", "b"),
        row("(a) signed in with `mcp login` (stored tokens)", "a", "b"),
        "",
        f"## One call, `toolport call echo '{{\"text\":\"{ECHO_TEXT}\"}}'` ({args.runs} runs each, interleaved)",
        "",
        "| server reached | median | range | vs static header |",
        "|---|---|---|---|",
        row("(c0) static header (baseline)", "c0"),
        row("(c) signed in with `mcp login`", "c", "c0"),
        "",
        f"## The sign-in, `toolport mcp login` ({args.login_runs} runs, each in a fresh home)",
        "",
        "| what | median | range |",
        "|---|---|---|",
        f"| (d) discovery, dynamic client registration, `tests/auth/browser.sh` (two curl GETs), "
        f"callback, code exchange, save | {login['median']:.1f} ms | {login['min']:.1f}–{login['max']:.1f} ms |",
        "",
        f"Ratios: a/b = **{ratio_list:.2f}×**, c/c0 = **{ratio_call:.2f}×**. Both sides send the same access "
        "token to the same server; the difference is the OAuth path's own work on every connect "
        "(credentials.json read once, a `stat` of it per request; rmcp's authorization manager is built only to refresh).",
        "",
        f"## CPU time of the same processes (user + system, from `getrusage`; {args.runs} runs each)",
        "",
        "| command | static header (baseline) | signed in | vs static header |",
        "|---|---|---|---|",
        f"| `tools --json` | {c['b']['median']:.1f} ms | {c['a']['median']:.1f} ms | "
        f"**{c['a']['median'] / c['b']['median']:.2f}×** |",
        f"| `call echo` | {c['c0']['median']:.1f} ms | {c['c']['median']:.1f} ms | "
        f"**{c['c']['median'] / c['c0']['median']:.2f}×** |",
        "",
        f"## Diagnostic: the fixture's own answer time ({args.runs} runs, Python `http.client`)",
        "",
        "| GET `/.well-known/oauth-authorization-server` | median | range |",
        "|---|---|---|",
        f"| first request on a fresh connection | {fresh_get['median']:.1f} ms | "
        f"{fresh_get['min']:.1f}–{fresh_get['max']:.1f} ms |",
        f"| second request on the same keep-alive connection | {kept_get['median']:.1f} ms | "
        f"{kept_get['min']:.1f}–{kept_get['max']:.1f} ms |",
        "",
        f"Why this row: a connect that rediscovered the authorization server's metadata (toolport before "
        f"the metadata was kept with the tokens) sent its metadata GETs on a pooled keep-alive connection, "
        f"and this server answers a reused connection {stall:.1f} ms late; a connect now sends no "
        f"discovery request at all, so the row only shows what each discovery would cost here "
        f"(a − b is {s['a']['median'] - s['b']['median']:.0f} ms in this run).",
        "",
    ]
    text = "\n".join(lines)
    (out_dir / "oauth.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
