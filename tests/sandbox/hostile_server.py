#!/usr/bin/env python3
"""A hostile MCP stdio server for the tests of sandboxed stdio servers (`"sandbox": true`,
tests/it/sandbox/hostile.rs): one tool per attack on the machine it runs on, the test giving
the paths, ports and process ids to aim at.

Built on the official Python MCP SDK (PyPI `mcp`, pinned in tests/peers/install_clients.sh;
run it with that venv's python):

    hostile_server.py

Every tool answers one short line:
  refused: <errno name or exception>   the attack failed (what a confined server must say)
  ESCAPED: <what it got>               the attack worked; the test expects it only for what it
                                       granted (its controls), so an unconfined run of this
                                       server says ESCAPED for every attack but the datagram
  sent: <n> bytes                      `connect` over UDP: sending works on any network; whether
                                       the datagram arrived is for the test's listener to say
Each catches its own exceptions. Attacks that change the process itself (a namespace, a mount,
ptrace, a raw syscall) run in a forked child, so a success does not change the server, and so
the process is single-threaded where the kernel asks it to be (unshare(CLONE_NEWUSER)).

Tools:
  info()                          HOME, TMPDIR, the proxy variables, uid and pid, as JSON
  getenv(name)                    the value of an environment variable
  read(path)                      the first bytes of a file
  write(path)                     creates or appends to a file
  connect(host, port, proto)      a TCP connection (tcp) or a datagram (udp), IPv4 or IPv6
  abstract_connect(name)          a unix socket in the abstract namespace (`\\0name`)
  unix_connect(path)              a unix socket bound to a path
  proxy_request(target, host)     `GET <target>` with `Host: <host>` sent to $HTTP_PROXY
  proxy_connect(host, port)       `CONNECT host:port` sent to $HTTP_PROXY, then a GET inside
  inherited_fds()                 descriptors it was started with beyond 0, 1 and 2 (a socket or a
                                  file that leaked through exec), and what a file one holds
  signal(pid, sig)                os.kill(pid, sig)
  ptrace(pid)                     PTRACE_ATTACH, then PTRACE_SEIZE (pid 0: a child of its own)
  setsid_child(secret, marker, token)
                                  fork, setsid, fork again: the grandchild reads `secret` and
                                  writes `marker`, says so through a pipe, then (with a token)
                                  lives on as `python -c <sleep 120> <token>`, for the test to
                                  look for once the server is gone
  new_userns()                    unshare(2) of a user, mount and network namespace, and
                                  clone(2) and clone3(2) of a new user namespace
  mount(target)                   mount(2) a tmpfs over `target`
  forbidden_syscalls()            keyctl, bpf, io_uring_setup, ptrace(TRACEME)
  symlink_out(granted_dir, target)   a symbolic link in `granted_dir` to `target`, read through
  hardlink_out(granted_dir, target)  link(2) of `target` into `granted_dir`, read
  eat_memory(mb)                  allocates and touches `mb` MiB, 16 MiB at a time
  fork_bomb(n)                    forks `n` sleeping children (stops at the first failure),
                                  then kills them all
  open_files(n)                   opens /dev/null `n` times (stops at the first failure)
"""

import ctypes
import errno
import json
import os
import platform
import signal as signals
import socket
import sys
import time
from urllib.parse import urlsplit

from mcp.server.mcpserver import MCPServer

app = MCPServer("hostile")
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
libc.unshare.argtypes = [ctypes.c_int]

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
PTRACE_TRACEME, PTRACE_ATTACH, PTRACE_DETACH, PTRACE_SEIZE = 0, 16, 17, 0x4206
SYSCALLS = {
    "x86_64": {"clone": 56, "keyctl": 250, "bpf": 321, "io_uring_setup": 425, "clone3": 435},
    "aarch64": {"clone": 220, "keyctl": 219, "bpf": 280, "io_uring_setup": 425, "clone3": 435},
}[platform.machine()]
CHILD_SECONDS = 10


def why(e: BaseException) -> str:
    """An exception as its errno name (`EACCES`), else its type and words."""
    if isinstance(e, OSError) and e.errno:
        return errno.errorcode.get(e.errno, str(e.errno))
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def errno_name() -> str:
    """The errno a failed ctypes call left."""
    code = ctypes.get_errno()
    return errno.errorcode.get(code, str(code))


def shown(data: bytes) -> str:
    """Bytes that escaped, as one short line (the test looks for a planted secret in it)."""
    return data[:200].decode("utf-8", "backslashreplace").replace("\n", "\\n")


def in_child(attempt) -> str:
    """Runs `attempt()` (which returns its line) in a forked child and returns that line."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            line = attempt()
        except BaseException as e:  # noqa: BLE001: the child must always answer
            line = f"refused: {why(e)}"
        os.write(w, line.encode()[:4000])
        os._exit(0)
    os.close(w)
    return read_answer(r, pid)


def read_answer(r: int, pid: int) -> str:
    """What a child wrote to the pipe `r` until it closed it (at most CHILD_SECONDS)."""
    deadline = time.monotonic() + CHILD_SECONDS
    data = b""
    os.set_blocking(r, False)
    while time.monotonic() < deadline:
        try:
            chunk = os.read(r, 4096)
        except BlockingIOError:
            time.sleep(0.01)
            continue
        if not chunk:
            break
        data += chunk
    os.close(r)
    try:
        os.kill(pid, signals.SIGKILL)
    except OSError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    return data.decode("utf-8", "replace") or "refused: the child said nothing"


@app.tool(structured_output=False)
def info() -> str:
    """Where the server thinks it is."""
    names = ["HOME", "TMPDIR", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NODE_USE_ENV_PROXY", "PATH"]
    seen = {name: os.environ.get(name) for name in names}
    seen.update(uid=os.getuid(), pid=os.getpid(), cwd=os.getcwd(), env=sorted(os.environ))
    return json.dumps(seen, sort_keys=True)


@app.tool(structured_output=False)
def getenv(name: str) -> str:
    """The value of an environment variable."""
    value = os.environ.get(name)
    return "refused: not set" if value is None else f"ESCAPED: {name}={value}"


@app.tool(structured_output=False)
def read(path: str) -> str:
    """The first bytes of a file."""
    try:
        with open(path, "rb") as f:
            data = f.read(4096)
    except Exception as e:  # noqa: BLE001
        return f"refused: {why(e)}"
    return f"ESCAPED: read {len(data)} bytes: {shown(data)}"


@app.tool(structured_output=False)
def write(path: str) -> str:
    """Creates `path`, or appends to it."""
    words = b"written by hostile_server.py\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            n = os.write(fd, words)
        finally:
            os.close(fd)
    except Exception as e:  # noqa: BLE001
        return f"refused: {why(e)}"
    return f"ESCAPED: wrote {n} bytes to {path}"


@app.tool(structured_output=False)
def connect(host: str, port: int, proto: str = "tcp") -> str:
    """A TCP connection to host:port, or a UDP datagram sent there; `host` is an IP address."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    kind = socket.SOCK_DGRAM if proto == "udp" else socket.SOCK_STREAM
    try:
        with socket.socket(family, kind) as s:
            s.settimeout(3)
            if kind == socket.SOCK_DGRAM:
                n = s.sendto(b"hostile datagram", (host, port))
                return f"sent: {n} bytes"
            s.connect((host, port))
            s.sendall(b"hostile stream\n")
            return f"ESCAPED: connected to {host} port {port}"
    except Exception as e:  # noqa: BLE001
        return f"refused: {why(e)}"


@app.tool(structured_output=False)
def abstract_connect(name: str) -> str:
    """A connection to the abstract unix socket `\\0name`."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(3)
            s.connect("\0" + name)
            s.sendall(b"hostile stream\n")
            return f"ESCAPED: connected to @{name}"
    except Exception as e:  # noqa: BLE001
        return f"refused: {why(e)}"


@app.tool(structured_output=False)
def unix_connect(path: str) -> str:
    """A connection to the unix socket bound at `path`."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(3)
            s.connect(path)
            s.sendall(b"hostile stream\n")
            return f"ESCAPED: connected to {path}"
    except Exception as e:  # noqa: BLE001
        return f"refused: {why(e)}"


def proxy_socket() -> socket.socket:
    """A connection to the proxy $HTTP_PROXY names."""
    proxy = os.environ.get("HTTP_PROXY") or os.environ.get("http_proxy")
    if not proxy:
        raise LookupError("no HTTP_PROXY")
    url = urlsplit(proxy)
    if url.scheme != "http" or not url.hostname or not url.port:
        raise LookupError(f"HTTP_PROXY is not http://host:port: {proxy}")
    s = socket.create_connection((url.hostname, url.port), timeout=10)
    return s


def answer(s: socket.socket) -> bytes:
    """What the peer sends until it closes, at most 64 KiB."""
    data = b""
    try:
        while len(data) < 65536:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    return data


@app.tool(structured_output=False)
def proxy_request(target: str, host: str) -> str:
    """`GET <target> HTTP/1.1` with `Host: <host>` sent to the proxy, as written."""
    try:
        with proxy_socket() as s:
            s.sendall(f"GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            data = answer(s)
    except Exception as e:  # noqa: BLE001
        return f"refused: {why(e)}"
    status = data.split(b"\r\n", 1)[0]
    body = data.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in data else b""
    if status.split(b" ")[1:2] == [b"200"]:
        return f"ESCAPED: {shown(status)}: {shown(body)}"
    return f"refused: {shown(status)}: {shown(body)}"


@app.tool(structured_output=False)
def proxy_connect(host: str, port: int) -> str:
    """`CONNECT host:port` to the proxy; through an open tunnel, a plain GET."""
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        with proxy_socket() as s:
            s.sendall(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 65536:
                chunk = s.recv(4096)
                if not chunk:
                    break
                head += chunk
            status = head.split(b"\r\n", 1)[0]
            if status.split(b" ")[1:2] != [b"200"]:
                return f"refused: {shown(status)}"
            s.sendall(f"GET / HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n".encode())
            return f"ESCAPED: tunnel to {authority}: {shown(answer(s))}"
    except Exception as e:  # noqa: BLE001
        return f"refused: {why(e)}"


@app.tool(structured_output=False)
def inherited_fds() -> str:
    """Descriptors beyond stdin, stdout and stderr the server was started with: those without
    close-on-exec (every descriptor Python opens has it, PEP 446), with what each leads to and,
    for a file, what it holds (read through the descriptor: no path is opened)."""
    found = []
    for name in sorted(os.listdir("/proc/self/fd"), key=int):
        fd = int(name)
        if fd <= 2:
            continue
        try:
            with open(f"/proc/self/fdinfo/{fd}") as f:
                flags = next(int(line.split()[1], 8) for line in f if line.startswith("flags:"))
            if flags & os.O_CLOEXEC:
                continue
            said = f"{fd} -> {os.readlink(f'/proc/self/fd/{fd}')}"
            try:
                said += f" holding {shown(os.pread(fd, 200, 0))}"
            except OSError:
                pass
            found.append(said)
        except (OSError, StopIteration):
            continue
    return f"ESCAPED: {'; '.join(found)}" if found else "refused: none"


@app.tool(structured_output=False)
def signal(pid: int, sig: int = 0) -> str:
    """os.kill(pid, sig)."""
    try:
        os.kill(pid, sig)
    except Exception as e:  # noqa: BLE001
        return f"refused: {why(e)}"
    return f"ESCAPED: signal {sig} delivered to {pid}"


def attach(pid: int) -> str:
    """PTRACE_ATTACH, then PTRACE_SEIZE, each detached at once when it works."""
    said = []
    for name, request in (("PTRACE_ATTACH", PTRACE_ATTACH), ("PTRACE_SEIZE", PTRACE_SEIZE)):
        if libc.ptrace(request, pid, None, None) == 0:
            if request == PTRACE_ATTACH:
                os.waitpid(pid, os.WNOHANG if pid <= 0 else 0)
            libc.ptrace(PTRACE_DETACH, pid, None, None)
            return f"ESCAPED: {name} of {pid} worked"
        said.append(f"{name} {errno_name()}")
    return "refused: " + ", ".join(said)


@app.tool(structured_output=False)
def ptrace(pid: int) -> str:
    """Attaches to `pid` as a debugger; pid 0 is a child of the server's own (seccomp alone)."""

    def attempt() -> str:
        if pid != 0:
            return attach(pid)
        child = os.fork()
        if child == 0:
            time.sleep(CHILD_SECONDS)
            os._exit(0)
        try:
            return attach(child)
        finally:
            os.kill(child, signals.SIGKILL)
            os.waitpid(child, 0)

    return in_child(attempt)


@app.tool(structured_output=False)
def setsid_child(secret: str, marker: str, token: str = "") -> str:
    """A grandchild in a session of its own reads `secret` and writes `marker`."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.setsid()
            if os.fork() != 0:
                os._exit(0)
            said = [f"setsid grandchild {os.getpid()}"]
            try:
                with open(secret, "rb") as f:
                    said.append(f"ESCAPED read {shown(f.read(4096))}")
            except Exception as e:  # noqa: BLE001
                said.append(f"read {why(e)}")
            try:
                fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
                os.write(fd, b"written by a grandchild of hostile_server.py\n")
                os.close(fd)
                said.append(f"ESCAPED wrote {marker}")
            except Exception as e:  # noqa: BLE001
                said.append(f"write {why(e)}")
            line = "; ".join(said)
            verdict = "ESCAPED" if "ESCAPED" in line else "refused"
            os.write(w, f"{verdict}: {line}".encode())
            os.close(w)
            if token:
                sleeper = "import time; time.sleep(120)"
                os.execv(sys.executable, [sys.executable, "-c", sleeper, token])
        except BaseException as e:  # noqa: BLE001
            os.write(w, f"refused: {why(e)}".encode())
        os._exit(0)
    os.close(w)
    return read_answer(r, pid)


def clone_new_user(number: int, args: bytes | None) -> str:
    """clone(2) (`args` None) or clone3(2) of a new user namespace, fork-like: no new stack."""
    r, w = os.pipe()
    if args is None:
        pid = libc.syscall(number, ctypes.c_ulong(CLONE_NEWUSER | signals.SIGCHLD), None, None, None, None)
    else:
        buf = ctypes.create_string_buffer(args, len(args))
        pid = libc.syscall(number, buf, ctypes.c_size_t(len(args)))
    if pid == 0:
        os.write(w, b"in")
        os._exit(0)
    if pid < 0:
        os.close(r)
        os.close(w)
        return errno_name()
    os.close(w)
    got = os.read(r, 2)
    os.close(r)
    os.waitpid(pid, 0)
    return "ESCAPED" if got == b"in" else "no word from the child"


@app.tool(structured_output=False)
def new_userns() -> str:
    """New namespaces: unshare(2) of each kind, clone(2) and clone3(2) of a user namespace."""
    said = []
    for name, flag in (("CLONE_NEWUSER", CLONE_NEWUSER), ("CLONE_NEWNS", CLONE_NEWNS), ("CLONE_NEWNET", CLONE_NEWNET)):

        def attempt(flag=flag, name=name) -> str:
            if libc.unshare(flag) == 0:
                return f"ESCAPED unshare({name})"
            return f"unshare({name}) {errno_name()}"

        said.append(in_child(attempt))
    said.append(in_child(lambda: f"clone(CLONE_NEWUSER) {clone_new_user(SYSCALLS['clone'], None)}"))
    # struct clone_args, CLONE_ARGS_SIZE_VER0: flags, pidfd, child_tid, parent_tid,
    # exit_signal, stack, stack_size, tls.
    args = b"".join(v.to_bytes(8, "little") for v in (CLONE_NEWUSER, 0, 0, 0, signals.SIGCHLD, 0, 0, 0))
    said.append(in_child(lambda: f"clone3(CLONE_NEWUSER) {clone_new_user(SYSCALLS['clone3'], args)}"))
    line = "; ".join(said)
    return f"ESCAPED: {line}" if "ESCAPED" in line else f"refused: {line}"


@app.tool(structured_output=False)
def mount(target: str) -> str:
    """mount(2) of a tmpfs over `target` (unmounted at once when it works)."""

    def attempt() -> str:
        if libc.mount(b"hostile", target.encode(), b"tmpfs", 0, None) == 0:
            libc.umount2(target.encode(), 2)
            return f"ESCAPED: mounted a tmpfs on {target}"
        return f"refused: {errno_name()}"

    return in_child(attempt)


@app.tool(structured_output=False)
def forbidden_syscalls() -> str:
    """keyctl(2) (the session keyring), bpf(2) (a map), io_uring_setup(2), ptrace(TRACEME)."""

    def attempt() -> str:
        said = []
        # keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, create)
        r = libc.syscall(SYSCALLS["keyctl"], ctypes.c_long(0), ctypes.c_long(-3), ctypes.c_long(1))
        said.append("ESCAPED keyctl" if r >= 0 else f"keyctl {errno_name()}")
        # bpf(BPF_MAP_CREATE, {BPF_MAP_TYPE_ARRAY, key 4, value 4, 1 entry}, size)
        attr = ctypes.create_string_buffer(b"".join(v.to_bytes(4, "little") for v in (2, 4, 4, 1)), 128)
        r = libc.syscall(SYSCALLS["bpf"], ctypes.c_long(0), attr, ctypes.c_long(128))
        said.append("ESCAPED bpf" if r >= 0 else f"bpf {errno_name()}")
        if r >= 0:
            os.close(r)
        params = ctypes.create_string_buffer(120)
        r = libc.syscall(SYSCALLS["io_uring_setup"], ctypes.c_long(4), params)
        said.append("ESCAPED io_uring_setup" if r >= 0 else f"io_uring_setup {errno_name()}")
        if r >= 0:
            os.close(r)
        r = libc.ptrace(PTRACE_TRACEME, 0, None, None)
        said.append("ESCAPED ptrace(TRACEME)" if r == 0 else f"ptrace(TRACEME) {errno_name()}")
        line = "; ".join(said)
        return f"ESCAPED: {line}" if "ESCAPED" in line else f"refused: {line}"

    return in_child(attempt)


@app.tool(structured_output=False)
def symlink_out(granted_dir: str, target: str) -> str:
    """A symbolic link in `granted_dir` to `target`, and a read through it."""
    link = os.path.join(granted_dir, f"hostile-symlink-{os.getpid()}")
    try:
        os.symlink(target, link)
    except Exception as e:  # noqa: BLE001
        return f"refused: symlink {why(e)}"
    try:
        with open(link, "rb") as f:
            data = f.read(4096)
    except Exception as e:  # noqa: BLE001
        return f"refused: read through the link {why(e)}"
    finally:
        try:
            os.unlink(link)
        except OSError:
            pass
    return f"ESCAPED: read {len(data)} bytes through {link}: {shown(data)}"


@app.tool(structured_output=False)
def hardlink_out(granted_dir: str, target: str) -> str:
    """link(2) of `target` into `granted_dir`, and a read of the new name."""
    link = os.path.join(granted_dir, f"hostile-hardlink-{os.getpid()}")
    try:
        os.link(target, link)
    except Exception as e:  # noqa: BLE001
        return f"refused: link {why(e)}"
    try:
        with open(link, "rb") as f:
            data = f.read(4096)
    except Exception as e:  # noqa: BLE001
        return f"refused: read the link {why(e)} (but link(2) worked)"
    finally:
        try:
            os.unlink(link)
        except OSError:
            pass
    return f"ESCAPED: read {len(data)} bytes through {link}: {shown(data)}"


@app.tool(structured_output=False)
def eat_memory(mb: int) -> str:
    """Allocates and touches `mb` MiB, 16 MiB at a time; lets go of it all before answering."""
    held = []
    step = 16
    try:
        while len(held) * step < mb:
            held.append(b"\x01" * (step << 20))
    except MemoryError:
        got = len(held) * step
        held.clear()
        return f"refused: MemoryError after {got} MiB"
    got = len(held) * step
    held.clear()
    return f"ESCAPED: held {got} MiB"


@app.tool(structured_output=False)
def fork_bomb(n: int) -> str:
    """Forks `n` children that sleep; stops at the first failure; kills and reaps them all."""
    children = []
    failure = None
    try:
        for _ in range(n):
            pid = os.fork()
            if pid == 0:
                time.sleep(CHILD_SECONDS * 3)
                os._exit(0)
            children.append(pid)
    except Exception as e:  # noqa: BLE001
        failure = why(e)
    finally:
        for pid in children:
            try:
                os.kill(pid, signals.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
    if failure:
        return f"refused: {failure} after {len(children)} children"
    return f"ESCAPED: forked {len(children)} children"


@app.tool(structured_output=False)
def open_files(n: int) -> str:
    """Opens /dev/null `n` times (stops at the first failure), then closes them all."""
    fds = []
    failure = None
    try:
        for _ in range(n):
            fds.append(os.open("/dev/null", os.O_RDONLY))
    except Exception as e:  # noqa: BLE001
        failure = why(e)
    finally:
        for fd in fds:
            os.close(fd)
    if failure:
        return f"refused: {failure} after {len(fds)} more files"
    return f"ESCAPED: opened {len(fds)} files"


if __name__ == "__main__":
    app.run()
