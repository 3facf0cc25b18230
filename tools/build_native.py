"""Compile engine/ to C extensions with mypyc, in place: engine/**/*.so beside the sources.

The same source stays the pure engine: nothing here changes a ``.py``.  The extensions and the
stamp (``engine/_native.stamp``, the hash of the sources they were built from) are ignored by git;
``engine/_native.py`` loads them only while the stamp matches the sources.

Without a C compiler (or without mypyc) this removes any old build and exits 0 silently, so that
``make`` goes on with the pure engine; a failed compile says so in one line and exits 0 too;
``--require`` (CI, the image) makes either an error instead.

usage: python tools/build_native.py [--require] [--clean]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pathlib
import shutil
import sys
import sysconfig
import time
from types import ModuleType

ROOT = pathlib.Path(__file__).resolve().parent.parent


def load_native() -> ModuleType:
    """engine/_native.py on its own: importing the package would load the build being replaced."""
    spec = importlib.util.spec_from_file_location("_cinq_native", ROOT / "engine" / "_native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def clean() -> None:
    """Remove every compiled engine module and the stamp.

    Unlinking (rather than overwriting) leaves a process that has the old build loaded unharmed.
    """
    for path in (ROOT / "engine").rglob("*.so"):
        path.unlink()
    (ROOT / "engine" / "_native.stamp").unlink(missing_ok=True)


def compiler() -> str | None:
    """The C compiler Python's build would call (``$CC`` first, as setuptools), if it is installed."""
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(cc)


def build(native: ModuleType) -> None:
    """Run mypyc and the C compiler; the extensions land beside their sources."""
    from mypyc.build import mypycify
    from setuptools import setup

    digest = native.sources_digest()
    paths = [str(p.relative_to(ROOT)) for p in native.compiled_sources()]
    # one shared library inside the package (engine/_native__mypyc*.so): calls between engine
    # modules stay C calls, and nothing is installed outside engine/
    setup(name="cinq-engine-native", script_args=["-q", "build_ext", "--inplace"],
          ext_modules=mypycify(paths, group_name="engine._native", opt_level="3"))
    native.STAMP.write_text(digest + "\n")


def main() -> int:
    """Build (or clean) and say what happened; the exit code is 0 unless ``--require`` failed."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--require", action="store_true", help="fail when the engine cannot be compiled")
    ap.add_argument("--clean", action="store_true", help="only remove the compiled build")
    args = ap.parse_args()
    os.chdir(ROOT)
    clean()
    if args.clean:
        return 0
    why = None
    if compiler() is None or importlib.util.find_spec("mypyc") is None:
        # the quick start on a machine without a compiler: the pure engine, without a word
        why = "no C compiler" if compiler() is None else "mypyc is not installed"
        if not args.require:
            return 0
    else:
        t0 = time.perf_counter()
        try:
            build(load_native())
        except (Exception, SystemExit) as exc:  # setuptools reports a failed compile by exiting
            clean()
            why = f"the build failed ({exc})"
        else:
            print(f"compiled engine built in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
            return 0
    print(f"engine not compiled: {why}; the pure-Python engine runs", file=sys.stderr)
    return 1 if args.require else 0


if __name__ == "__main__":
    sys.exit(main())
