"""Print an APT source (deb822) for this Debian release's backports, on the mirror the machine's own
sources already use for the release (``.ci/run`` adds it to install Valkey, the server with
``WAITAOF``, which the release itself lacks).

usage: python3 tools/backports.py [SOURCES_DIR]   (default /etc/apt/sources.list.d)

Prints nothing and exits 1 when no stanza of a ``*.sources`` file serves the release's main suite.
"""

from __future__ import annotations

import sys
from pathlib import Path


def codename() -> str:
    """The release's codename (``bookworm``), from /etc/os-release."""
    for line in Path("/etc/os-release").read_text().splitlines():
        if line.startswith("VERSION_CODENAME="):
            return line.split("=", 1)[1].strip().strip('"')
    raise SystemExit("no VERSION_CODENAME in /etc/os-release")


def backports(sources_dir: Path, release: str) -> str | None:
    """The first stanza whose suites include ``release`` itself, with its suites set to the backports."""
    for path in sorted(sources_dir.glob("*.sources")):
        for stanza in path.read_text().split("\n\n"):
            lines = stanza.strip().splitlines()
            suites = next((ln.split(":", 1)[1].split() for ln in lines if ln.startswith("Suites:")), [])
            if release in suites:
                kept = [ln for ln in lines if not ln.startswith(("Suites:", "#"))]
                return "\n".join([*kept, f"Suites: {release}-backports"]) + "\n"
    return None


if __name__ == "__main__":
    found = backports(Path(sys.argv[1] if len(sys.argv) > 1 else "/etc/apt/sources.list.d"), codename())
    if found is None:
        sys.exit(1)
    sys.stdout.write(found)
