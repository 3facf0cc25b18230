"""The image installs what was reviewed, not what a registry serves on the day (issue 32 #8: "there is
no lock file: the image resolves versions at build time").

``deploy/requirements.lock`` (from ``pyproject.toml``) and ``deploy/build-requirements.lock`` (mypyc
and the build backend) pin every package with its hashes; ``deploy/Dockerfile`` installs from them
with ``--require-hashes``.  This is CI's check that the locks are current: every dependency of
``pyproject.toml`` is pinned, at a version its range allows, with the extras it asks for.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "deploy" / "requirements.lock"
BUILD_LOCK = ROOT / "deploy" / "build-requirements.lock"
BUILD_IN = ROOT / "deploy" / "build-requirements.in"
HOW = ("regenerate it: pip-compile --generate-hashes --allow-unsafe --no-strip-extras --no-emit-index-url "
       "--no-emit-find-links --output-file deploy/requirements.lock pyproject.toml (deploy/README.md)")

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^\s\\;]+)")


def pinned(lock: Path) -> dict[str, tuple[str, set[str], int]]:
    """Each package of a lock: its version, extras and number of hashes."""
    found: dict[str, tuple[str, set[str], int]] = {}
    name = None
    for line in lock.read_text().splitlines():
        m = _PIN.match(line)
        if m:
            name = canonicalize_name(m.group(1))
            extras = {e.strip() for e in (m.group(2) or "[]")[1:-1].split(",") if e.strip()}
            found[name] = (m.group(3), extras, 0)
        elif name is not None and line.strip().startswith("--hash=sha256:"):
            version, extras, hashes = found[name]
            found[name] = (version, extras, hashes + 1)
    return found


def _unmet(requirements: list[str], lock: Path) -> list[str]:
    locked = pinned(lock)
    problems = []
    for raw in requirements:
        req = Requirement(raw)
        if req.marker is not None and not req.marker.evaluate():
            continue
        got = locked.get(canonicalize_name(req.name))
        if got is None:
            problems.append(f"{req.name} is not in {lock.name}")
            continue
        version, extras, _ = got
        if not req.specifier.contains(version, prereleases=True):
            problems.append(f"{req.name}=={version} is outside {req.specifier}")
        if not set(req.extras) <= extras:
            problems.append(f"{req.name} is locked without its extras {sorted(set(req.extras) - extras)}")
    return problems


def test_every_dependency_of_pyproject_is_locked_within_its_range():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    problems = _unmet(deps, LOCK)
    assert not problems, f"deploy/requirements.lock is not current: {'; '.join(problems)}; {HOW}"


def test_the_build_tools_are_locked_within_their_ranges():
    wanted = [line for line in BUILD_IN.read_text().splitlines() if line.strip() and not line.startswith("#")]
    assert {canonicalize_name(Requirement(w).name) for w in wanted} == {"mypy", "setuptools"}
    assert not _unmet(wanted, BUILD_LOCK), _unmet(wanted, BUILD_LOCK)


def test_every_locked_package_has_a_hash_and_no_machine_of_ours_is_named():
    for lock in (LOCK, BUILD_LOCK):
        locked = pinned(lock)
        assert len(locked) >= 5, lock
        assert all(hashes >= 1 for _, _, hashes in locked.values()), \
            [n for n, (_, _, h) in locked.items() if not h]
        text = lock.read_text()
        # only the public registry: no index, mirror or path of the machine that made it
        assert "--index-url" not in text and "--find-links" not in text and "file://" not in text


def test_the_image_installs_from_the_locks_with_hashes_and_nothing_else():
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    installs = re.findall(r"pip install[^\n]*", dockerfile)
    assert installs, "no pip install in the Dockerfile"
    for line in installs:
        # every install is a lock with hashes, or the project's own wheel without dependencies
        assert ("--require-hashes" in line and "-r deploy/" in line) or \
            ("--no-deps" in line and "/wheels/cinq-" in line), line
    assert "--no-build-isolation" in dockerfile  # the wheel is built with the locked backend
