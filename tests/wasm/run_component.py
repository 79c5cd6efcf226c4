"""Runs a wasi:cli/command component with this process's stdin, stdout and stderr: a stand-in for
`wasmtime run` built on the PyPI `wasmtime` package (its `wasmtime.component` API and WASI p2).

Why it exists: it checks the wasm MCP servers (tests/wasm/, plugins/fixtures/server-hostile)
speak MCP over stdio without toolport's host, so a host test failure can be told apart from a
broken guest. Sandbox like the host's: no environment, files or sockets unless given here.

    PYTHONPATH=target/wasm-peers/wasmtime-py python3 tests/wasm/run_component.py \
        [--env NAME=VALUE]... [--dir HOST_PATH]... [--memory-mb N] [--compiled FILE] \
        COMPONENT [ARGS...]

ARGS follow the program name (args[0] is the component's file name). --dir preopens a folder
read-only at its own absolute path. Exit status: the component's own (0 for `ok`, 1 for `err`
or an exit(1)), 3 when it trapped or could not start (printed on stderr). --compiled keeps the compiled
code in FILE and reuses it while it is newer than COMPONENT: compiling the 18 MB Python component
takes seconds, loading it milliseconds.
"""

import argparse
import os
import sys

try:
    import wasmtime
    from wasmtime import component
except ImportError as e:
    sys.exit(
        f"run_component.py: cannot import wasmtime ({e}); install it with "
        "`pip install --target target/wasm-peers/wasmtime-py wasmtime` and set PYTHONPATH"
    )


def run_export_name(comp, engine):
    """The component's `wasi:cli/run@0.2.x` export: the minor version differs per toolchain."""
    names = [n for n in comp.type.exports(engine) if n.startswith("wasi:cli/run@0.2.")]
    if not names:
        sys.exit("run_component.py: the component exports no wasi:cli/run@0.2.x")
    return names[0]


def load(engine, path, compiled):
    """The component, compiled once per change when `compiled` names a cache file."""
    if compiled and os.path.exists(compiled) and os.path.getmtime(compiled) > os.path.getmtime(path):
        try:
            with open(compiled, "rb") as f:
                return component.Component.deserialize(engine, f.read())
        except wasmtime.WasmtimeError:
            pass  # compiled by another wasmtime version: compile again
    comp = component.Component.from_file(engine, path)
    if compiled:
        with open(compiled + ".tmp", "wb") as f:
            f.write(comp.serialize())
        os.replace(compiled + ".tmp", compiled)
    return comp


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--dir", action="append", default=[], metavar="HOST_PATH")
    parser.add_argument("--memory-mb", type=int, default=None)
    parser.add_argument("--compiled", default=None, metavar="FILE")
    parser.add_argument("component")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    opts = parser.parse_args()

    engine = wasmtime.Engine()
    comp = load(engine, opts.component, opts.compiled)
    linker = component.Linker(engine)
    linker.add_wasip2()

    wasi = wasmtime.WasiConfig()
    wasi.argv = [os.path.basename(opts.component), *opts.args]
    wasi.env = [pair.split("=", 1) for pair in opts.env]
    wasi.inherit_stdin()
    wasi.inherit_stdout()
    wasi.inherit_stderr()
    for path in opts.dir:
        path = os.path.abspath(path)
        wasi.preopen_dir(path, path, fs_mutable=False)

    store = wasmtime.Store(engine)
    store.set_wasi(wasi)
    if opts.memory_mb is not None:
        store.set_limits(memory_size=opts.memory_mb << 20)

    try:
        instance = linker.instantiate(store, comp)
    except (wasmtime.Trap, wasmtime.WasmtimeError) as e:
        print(f"run_component.py: cannot instantiate {opts.component}: {e}", file=sys.stderr)
        sys.exit(3)
    interface = instance.get_export_index(store, run_export_name(comp, engine))
    run = instance.get_func(store, instance.get_export_index(store, "run", interface))
    try:
        result = run(store)
    except wasmtime.ExitTrap as e:
        sys.exit(e.code)
    except (wasmtime.Trap, wasmtime.WasmtimeError) as e:
        print(f"run_component.py: the component trapped: {e}", file=sys.stderr)
        sys.exit(3)
    # `run: func() -> result` comes back as Variant(tag='ok' | 'err').
    sys.exit(0 if getattr(result, "tag", None) == "ok" else 1)


if __name__ == "__main__":
    main()
