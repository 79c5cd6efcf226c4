"""A name policy a platform team might ship, in Python (componentize-py, world `name-policy`).

For every server it is given, tool by tool:

- hide: tools that are not for models: the name starts with `internal_` or `debug_`, or the
  description says the tool is deprecated;
- keep: a name already namespaced: it starts with `<server>_` and is lower case, safe
  characters only;
- rename: anything else to `<server>_<tool>`, lower case, with every character outside
  `a-z`, `0-9` and `_` turned into `_` (so names from different servers never collide and all
  look alike).

It logs one line per review through the contract's `log` import: the host writes it to its log
tagged with the plugin's name.
"""

import re
from typing import List

from wit_world import exports
from wit_world.imports import log
from wit_world.imports.types import Server, Tool, Verdict, Verdict_Hide, Verdict_Keep, Verdict_Rename

HIDDEN_PREFIXES = ("internal_", "debug_")
NOT_A_NAME_CHAR = re.compile(r"[^a-z0-9_]")


def namespaced(server: str, tool: str) -> str:
    """`<server>_<tool>` in lower case, safe characters only."""
    return NOT_A_NAME_CHAR.sub("_", f"{server}_{tool}".lower())


def verdict(server: Server, tool: Tool) -> Verdict:
    if tool.name.startswith(HIDDEN_PREFIXES):
        return Verdict_Hide()
    if "deprecated" in (tool.description or "").lower():
        return Verdict_Hide()
    prefix = namespaced(server.name, "")
    if tool.name.startswith(prefix) and tool.name == namespaced("", tool.name)[1:]:
        return Verdict_Keep()
    return Verdict_Rename(namespaced(server.name, tool.name))


class Policy(exports.Policy):
    def review(self, server: Server, tools: List[Tool]) -> List[Verdict]:
        verdicts = [verdict(server, tool) for tool in tools]
        counts = {"keep": 0, "rename": 0, "hide": 0}
        for v in verdicts:
            if isinstance(v, Verdict_Keep):
                counts["keep"] += 1
            elif isinstance(v, Verdict_Rename):
                counts["rename"] += 1
            else:
                counts["hide"] += 1
        log.log(
            log.Level.INFO,
            f"reviewed {len(tools)} tools of {server.name}: "
            f"kept {counts['keep']}, renamed {counts['rename']}, hid {counts['hide']}",
        )
        return verdicts
