"""Which engine runs: the mypyc-compiled modules when they are built and current, else the source.

``make`` compiles engine/ in place with mypyc (``tools/build_native.py``): one ``.so`` per module
beside its ``.py``, plus the shared library ``engine/_native__mypyc*.so`` and a stamp holding the
hash of the sources it was built from.  Python's importer prefers an extension to a source file,
so nothing has to be done to load the compiled build; this module only decides when *not* to:

- ``CINQ_PURE_ENGINE=1`` asks for the pure-Python engine (the reference, and the second test run);
- a build whose stamp does not match the sources is stale (a ``.py`` was edited since): running
  it would test old code, so the source runs instead, with a warning saying how to rebuild.

In both cases a finder placed first on ``sys.meta_path`` resolves every ``engine.*`` module from
its ``.py`` only, so the compiled and the pure modules never mix in one process.

This is the engine's one module that reads the environment and files, once, at import; it is never
compiled itself (nor is any package ``__init__``, nor ``rng.py``: see :data:`NOT_COMPILED`).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import os
import pathlib
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

PURE_ENV = "CINQ_PURE_ENGINE"
ROOT = pathlib.Path(__file__).resolve().parent
STAMP = ROOT / "_native.stamp"
SHARED_LIB = "_native__mypyc"
#: the modules that are never compiled, relative to engine/ (besides every package ``__init__``,
#: which only gathers names): this one decides; rng.py is all 64-bit arithmetic, which the compiled
#: code does on boxed ints and measured slower than the interpreter (a 40-card shuffle 88 us
#: against 58 us), so it stays interpreted
NOT_COMPILED = ("_native.py", "rng.py")


def compiled_sources(root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    """The engine's source files that the build compiles (every module but those above and inits)."""
    return sorted(p for p in root.rglob("*.py")
                  if p.name != "__init__.py" and p.relative_to(root).as_posix() not in NOT_COMPILED)


def sources_digest(root: pathlib.Path = ROOT) -> str:
    """A hash of the compiled sources' paths and contents: what the stamp must hold to be current."""
    h = hashlib.sha256()
    for path in compiled_sources(root):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def built(root: pathlib.Path = ROOT) -> bool:
    """Whether a compiled build (the shared library) is present, current or not."""
    return any((root / (SHARED_LIB + suffix)).exists()
               for suffix in importlib.machinery.EXTENSION_SUFFIXES)


class PureFinder:
    """Finds ``engine`` submodules among source files only, so that no extension is loaded."""

    _loaders = ((importlib.machinery.SourceFileLoader, importlib.machinery.SOURCE_SUFFIXES),)

    def find_spec(self, name: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        """The source spec of an ``engine.*`` module; None (ask the next finder) for the rest."""
        if not name.startswith("engine.") or path is None:
            return None
        for entry in path:
            spec = importlib.machinery.FileFinder(entry, *self._loaders).find_spec(name, target)
            if spec is not None:
                return spec
        return None


def select() -> bool:
    """Choose the engine before its modules are imported; True when the compiled one will load."""
    if not built():
        return False  # no compiler, or never built: the source is the engine, silently
    reason = None
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        reason = "asked"
    elif not STAMP.exists() or STAMP.read_text().strip() != sources_digest():
        reason = "stale"
        warnings.warn("the compiled engine is older than engine/*.py, so the pure engine runs: "
                      "`make native` rebuilds it", RuntimeWarning, stacklevel=2)
    if reason is None:
        return True
    if not any(isinstance(f, PureFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, PureFinder())
    return False


def is_extension(module: ModuleType) -> bool:
    """Whether ``module`` was loaded from a compiled extension rather than from its source."""
    return str(getattr(module, "__file__", "")).endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
