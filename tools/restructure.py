"""Rewrite references to the old flat ``service/`` modules to the sub-packages (issue 18).

Run from the repository root: ``python tools/restructure.py [files...]`` (default: every file git
tracks).  Other branches can run it on their own work after merging the structure move: it rewrites
dotted module names (``service.worker`` -> ``service.write.worker``), ``from service import x``
lines, and paths (``service/worker.py`` -> ``service/write/worker.py``).  Idempotent: a new name is
never rewritten again.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

MAP = {
    # domain: who plays, what they ask, what happened, the table aggregate (pure)
    "service.identities": "service.domain.identities",
    "service.chats": "service.domain.chats",
    "service.commands": "service.domain.commands",
    "service.events": "service.domain.events",
    "service.tokens": "service.domain.tokens",
    "service.tables.repository": "service.store.repository",
    "service.tables": "service.domain.tables",
    # protocol: chat text in, words out
    "service.protocol": "service.protocol.parse",
    "service.text": "service.protocol.text",
    "service.i18n": "service.protocol.i18n",
    # store: Redis
    "service.keys": "service.store.keys",
    "service.decoding": "service.store.decoding",
    "service.streams": "service.store.streams",
    "service.groups": "service.store.groups",
    "service.leases": "service.store.leases",
    "service.packing": "service.store.packing",
    "service.store": "service.store.event_store",
    "service.lua": "service.store.lua",
    # write path: command in -> events and outbox
    "service.gateway": "service.write.gateway",
    "service.worker": "service.write.worker",
    "service.planning": "service.write.planning",
    "service.projection": "service.write.projection",
    "service.reindex": "service.write.reindex",
    "service.timers": "service.write.timers",
    "service.bots": "service.write.bots",
    # platform side: outbox -> chats
    "service.outbox": "service.platform.outbox",
    "service.delivery": "service.platform.delivery",
    "service.doorbell": "service.platform.doorbell",
    "service.platform_state": "service.platform.platform_state",
    "service.inbound": "service.platform.inbound",
    # operations
    "service.cli": "service.ops.cli",
    "service.operator": "service.ops.operator",
    "service.runtime": "service.ops.runtime",
    "service.settings": "service.ops.settings",
    "service.health": "service.ops.health",
    "service.logs": "service.ops.logs",
    "service.metrics": "service.ops.metrics",
    "service.archive": "service.ops.archive",
    "service.retention": "service.ops.retention",
    "service.capacity": "service.ops.capacity",
}
NEW_PACKAGES = ("domain", "protocol", "store", "write", "platform", "ops")

_DOTTED = re.compile(r"(?<![\w./])service((?:\.[A-Za-z_]\w*)+)")
_PATH = re.compile(r"(?<![\w./-])service((?:/[A-Za-z_][\w]*)+)(\.py)?")
_FROM = re.compile(r"^(?P<indent>[ \t]*)from service import (?P<names>[\w, ]+)$", re.M)


def _is_new(parts: list[str]) -> bool:
    """Whether ``service.<parts>`` names the new layout already (``service.protocol`` and
    ``service.store`` were modules before and are packages now: their new children tell)."""
    if not parts or parts[0] not in NEW_PACKAGES:
        return False
    if parts[0] not in ("protocol", "store"):
        return True
    children = {v.split(".")[2] for v in MAP.values() if v.split(".")[1] == parts[0]}
    if len(parts) > 1 and parts[1] in children:
        return True
    # a module added to the package since the move (service/protocol/moves.py...)
    here = Path("service", *parts[:2])
    return len(parts) > 1 and (here.with_suffix(".py").is_file() or here.is_dir())


def _new_dotted(parts: list[str]) -> list[str] | None:
    """The new dotted name for ``service.<parts>``, or None when it is new already or unknown."""
    if _is_new(parts):
        return None
    for n in range(len(parts), 0, -1):
        old = "service." + ".".join(parts[:n])
        if old in MAP:
            return MAP[old].split(".")[1:] + parts[n:]
    return None


def _dotted(m: re.Match[str]) -> str:
    parts = m.group(1)[1:].split(".")
    imported = re.match(r"\s+import\s+(\w+)", m.string[m.end():])
    if imported and _is_new([*parts, imported.group(1)]):
        return m.group(0)  # ``from service.protocol import text``: the new package
    new = _new_dotted(parts)
    return m.group(0) if new is None else "service." + ".".join(new)


def _path(m: re.Match[str]) -> str:
    new = _new_dotted(m.group(1)[1:].split("/"))
    if new is None:
        return m.group(0)
    return "service/" + "/".join(new) + (m.group(2) or "")


def _from(m: re.Match[str]) -> str:
    by_parent: dict[str, list[str]] = {}
    for name in (n.strip() for n in m.group("names").split(",")):
        if not name:
            continue
        new = MAP.get(f"service.{name}")
        if new is None:
            if name in NEW_PACKAGES:
                by_parent.setdefault("service", []).append(name)
                continue
            raise SystemExit(f"unknown module service.{name}")
        parent, _, leaf = new.rpartition(".")
        if leaf != name:
            raise SystemExit(f"service.{name} is renamed to {new}: rewrite by hand")
        by_parent.setdefault(parent, []).append(name)
    return "\n".join(f"{m.group('indent')}from {p} import {', '.join(ns)}" for p, ns in by_parent.items())


_MAP_ROW = re.compile(r"^\| `service\.[\w.]+` \| `service\.[\w.]+` \|$")


def rewrite(text: str) -> str:
    """``text`` with every old module reference replaced by its new one (but the rows of the
    old -> new table in docs/architecture.md, which name the old modules on purpose)."""
    if "\n" in text.rstrip("\n"):
        return "".join(line if _MAP_ROW.match(line.rstrip("\n")) else rewrite(line)
                       for line in text.splitlines(keepends=True))
    # dotted names first: a rewritten ``from service import text`` reads ``from service.protocol
    # import text``, and ``service.protocol`` alone is the old module's name
    text = _DOTTED.sub(_dotted, text)
    text = _PATH.sub(_path, text)
    return _FROM.sub(_from, text)


def main(argv: list[str]) -> None:
    listed = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True)
    files = argv or listed.stdout.split()
    for name in files:
        path = Path(name)
        if path.suffix in {".so", ".png", ".gz"} or not path.is_file() or name == "tools/restructure.py":
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new = rewrite(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(name)


if __name__ == "__main__":
    main(sys.argv[1:])
