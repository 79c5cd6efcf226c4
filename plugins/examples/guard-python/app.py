"""A guard a database team might ship, in Python (componentize-py, world `guard`).

Before a `tools/call` is sent: when its arguments have a `query` that is text and holds a
destructive SQL statement (`DROP …` or `TRUNCATE …`, in any case, outside quoted strings and
comments), the call is refused with a reason the model and the person both see. Every other
request, and every answer, passes unchanged.

It logs one line per refusal through the contract's `log` import: the host writes it to its log
tagged with the plugin's name.
"""

import json
import re

from wit_world import exports
from wit_world.exports.hooks import (
    Context,
    Decision,
    Decision_Deny,
    Decision_Pass,
    RequestKind,
)
from wit_world.imports import log

# What is not code in SQL: quoted strings and identifiers, `--` and `/* */` comments. They are
# blanked before the check, so `select 'drop table x'` is a query about a string, not a drop.
NOT_CODE = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/", re.DOTALL)
DESTRUCTIVE = re.compile(r"\b(DROP|TRUNCATE)\b", re.IGNORECASE)


def destructive(query: str) -> str | None:
    """The destructive keyword `query` uses, upper case, or None."""
    found = DESTRUCTIVE.search(NOT_CODE.sub(" ", query))
    return found.group(1).upper() if found else None


class Hooks(exports.Hooks):
    def on_request(self, context: Context, params: str) -> Decision:
        if context.kind != RequestKind.TOOLS_CALL:
            return Decision_Pass()
        arguments = json.loads(params).get("arguments") or {}
        query = arguments.get("query") if isinstance(arguments, dict) else None
        if not isinstance(query, str):
            return Decision_Pass()
        keyword = destructive(query)
        if keyword is None:
            return Decision_Pass()
        log.log(log.Level.INFO, f"refused {context.target} on {context.server}: SQL {keyword}")
        return Decision_Deny(f"{keyword} statements are not allowed through {context.target}; ask a person to run it")

    def on_response(self, context: Context, params: str, answer: str) -> Decision:
        return Decision_Pass()
