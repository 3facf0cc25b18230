"""Fail when engine/ imports anything outside the standard library (or service/, adapters/).

import-linter checks the direction between our packages; this checks the engine's third-party
imports, which import-linter does not see.  Run from the repository root.
"""

from __future__ import annotations

import ast
import pathlib
import sys

FORBIDDEN_STDLIB = {"asyncio", "time", "datetime", "socket", "threading", "subprocess", "os", "secrets"}
# engine/_native.py chooses, once at import, between the compiled and the pure modules: it reads
# CINQ_PURE_ENGINE and hashes the sources (os, files).  No game code runs there, and it imports
# no other engine module.
CHOOSER = pathlib.Path("engine/_native.py")


def main() -> int:
    """Print every bad import in engine/ and return 1 if there was one."""
    allowed = set(sys.stdlib_module_names) - FORBIDDEN_STDLIB
    bad = []
    for path in sorted(pathlib.Path("engine").rglob("*.py")):
        if path == CHOOSER:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            # a seeded random.Random(seed) instance is fine; the module's global generator is not
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == "random" and node.attr != "Random"):
                bad.append(f"{path}:{node.lineno}: uses the global generator random.{node.attr}")
                continue
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top != "engine" and top not in allowed:
                    bad.append(f"{path}:{node.lineno}: imports {name}")
    for line in bad:
        print(line)
    if not bad:
        print("engine/ is pure: standard library only, no clock, IO or global randomness")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
