"""How every team client ends (tests/team/*_client.py): run its scenario under --timeout and
print one JSON line, its result or the error it met, never a verdict (the tests judge)."""

import json

import anyio


def describe(e):
    """`e`, and the errors inside a task group's ExceptionGroup."""
    inner = getattr(e, "exceptions", None)
    if inner:
        return "; ".join(describe(x) for x in inner)
    return f"{type(e).__name__}: {e}"


def print_outcome(scenario, args, error_key="error"):
    """Runs `await scenario(args)` within `args.timeout` seconds and prints its JSON, or
    `{error_key: "<Type>: <message>"}` when it raised."""

    async def bounded():
        with anyio.fail_after(args.timeout):
            return await scenario(args)

    try:
        out = anyio.run(bounded)
    except Exception as e:  # reported, for the test to show
        out = {error_key: describe(e)}
    print(json.dumps(out), flush=True)
