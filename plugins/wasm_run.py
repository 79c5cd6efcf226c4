#!/usr/bin/env python3
"""Runs a wasi:cli/command component under wasmtime (the PyPI `wasmtime` package, whose C API
has WASIp2 and wasi:http) with this process's stdin/stdout/stderr: the guest servers' smoke
tests without the toolport host. The `wasmtime` CLI is not on PyPI; this is its few lines we need.

    python3 plugins/wasm_run.py [--dir HOST::GUEST[:ro]]... [--http] COMPONENT.wasm [ARG]...

`--dir` preopens HOST as GUEST, read-write unless it ends in `:ro` (read-only preopen, as the
host grants it). `--http` links wasi:http/outgoing-handler (every destination allowed: the
host's grant filter is not here). Exit code: the guest's (0 when `run` returns ok).
"""

import argparse
import sys

try:
    import wasmtime
    import wasmtime.component as component
except ImportError:
    sys.exit("wasm_run.py needs the PyPI package: pip install 'wasmtime==48.*'")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", action="append", default=[], metavar="HOST::GUEST[:ro]")
    parser.add_argument("--http", action="store_true")
    parser.add_argument("component")
    parser.add_argument("args", nargs="*")
    opts = parser.parse_args()

    engine = wasmtime.Engine()
    comp = component.Component.from_file(engine, opts.component)
    linker = component.Linker(engine)
    linker.add_wasip2()
    if opts.http:
        linker.add_wasi_http()

    wasi = wasmtime.WasiConfig()
    wasi.argv = [opts.component, *opts.args]
    wasi.inherit_stdin()
    wasi.inherit_stdout()
    wasi.inherit_stderr()
    for spec in opts.dir:
        mutable = not spec.endswith(":ro")
        spec = spec[:-3] if not mutable else spec
        host, sep, guest = spec.partition("::")
        wasi.preopen_dir(host, guest if sep else host, fs_mutable=mutable)

    store = wasmtime.Store(engine)
    store.set_wasi(wasi)
    if opts.http:
        store.set_wasi_http()
    instance = linker.instantiate(store, comp)
    run_iface = next(name for name in comp.type.exports(engine) if name.startswith("wasi:cli/run@"))
    iface = instance.get_export_index(store, run_iface)
    run = instance.get_func(store, instance.get_export_index(store, "run", iface))
    try:
        result = run(store)
    except wasmtime.ExitTrap as exit_trap:
        return exit_trap.code
    except wasmtime.WasmtimeError as trap:
        # A panic (panic = "abort") or another trap: the guest's message is already on stderr.
        print(f"wasm_run.py: the component trapped: {str(trap).splitlines()[0]}", file=sys.stderr)
        return 134
    run.post_return(store)
    # `run` returns `result<_, _>`: a `Variant` tagged "ok" or "err" (std's `main` exits through
    # wasi:cli/exit instead when its code is not 0).
    return 0 if getattr(result, "tag", None) == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
