"""The compiled engine (mypyc) and the pure one: which is loaded, and that both play the same.

CI builds the engine with ``--require`` and sets ``CINQ_EXPECT_COMPILED=1``: there the compiled
modules must really be the ones imported.  ``CINQ_PURE_ENGINE=1`` (the second CI run of the rule
and property tests) must load none of them.
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

import engine
from engine import _native

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXPECT_COMPILED = os.environ.get("CINQ_EXPECT_COMPILED") == "1"
PURE = os.environ.get(_native.PURE_ENV, "") not in ("", "0")


def engine_modules() -> dict[str, object]:
    return {name: mod for name, mod in sys.modules.items()
            if name == "engine" or name.startswith("engine.")}


def compiled_names() -> set[str]:
    """The module names the build compiles (from the same list the build uses)."""
    return {".".join(p.relative_to(ROOT).with_suffix("").parts) for p in _native.compiled_sources()}


def test_the_expected_engine_is_loaded() -> None:
    loaded = {name for name, mod in engine_modules().items()
              if _native.is_extension(mod)}  # type: ignore[arg-type]
    if PURE:
        assert not engine.COMPILED
        assert loaded == set()
        return
    if EXPECT_COMPILED:
        assert engine.COMPILED, "CI built the engine, yet the pure modules were imported"
    if engine.COMPILED:
        # every imported engine module that the build compiles is its extension, none is mixed in
        imported = compiled_names() & set(engine_modules())
        assert {"engine.rules", "engine.api", "engine.cinquillo.game", "engine.five35.game"} <= imported
        assert loaded == imported | {"engine." + _native.SHARED_LIB}
    else:
        assert loaded == set()
    assert engine.COMPILED is current_build()


def current_build() -> bool:
    """Whether engine/ holds a compiled build made from the sources as they are."""
    return (_native.built() and _native.STAMP.exists()
            and _native.STAMP.read_text().strip() == _native.sources_digest())


def _copy_engine(tmp: pathlib.Path) -> pathlib.Path:
    shutil.copytree(ROOT / "engine", tmp / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp / "engine"


def _probe(cwd: pathlib.Path, **env: str) -> tuple[dict[str, object], str]:
    code = textwrap.dedent("""
        import json, sys
        import engine
        from engine import _native
        ext = sorted(n for n, m in sys.modules.items()
                     if n.startswith("engine") and _native.is_extension(m))
        print(json.dumps({"compiled": engine.COMPILED, "extensions": ext,
                          "moves": engine.legal_moves(engine.new_game("535", players=3, seed=1))}))
    """)
    base = {k: v for k, v in os.environ.items() if k != _native.PURE_ENV}
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, env={**base, **env},
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout), out.stderr


def test_a_stale_or_refused_build_is_never_loaded(tmp_path: pathlib.Path) -> None:
    """A build whose stamp is not the sources' hash, or with CINQ_PURE_ENGINE=1, stays unloaded.

    With no real build, a shared library that is not a library at all stands in: loading it would
    fail, so the probe passing proves that nothing compiled was even tried.
    """
    pkg = _copy_engine(tmp_path)
    if not _native.built(pkg):
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        (pkg / (_native.SHARED_LIB + suffix)).write_text("not a library")
        (pkg / ("rules" + suffix)).write_text("not a library")
    (pkg / "_native.stamp").write_text("0" * 64 + "\n")
    got, err = _probe(tmp_path)
    assert got["compiled"] is False and got["extensions"] == []
    assert "make native" in err  # the warning says how to rebuild
    assert got["moves"]
    (pkg / "_native.stamp").write_text(_native.sources_digest(pkg) + "\n")
    got, err = _probe(tmp_path, CINQ_PURE_ENGINE="1")
    assert got["compiled"] is False and got["extensions"] == [] and "make native" not in err


def test_a_current_build_is_loaded_and_an_edit_makes_it_stale(tmp_path: pathlib.Path) -> None:
    if not current_build():
        if EXPECT_COMPILED:
            pytest.fail("CI expects the compiled engine, and there is no current build")
        pytest.skip("no compiled engine here (no C compiler, or not built): nothing to load")
    pkg = _copy_engine(tmp_path)
    got, _ = _probe(tmp_path)
    assert got["compiled"] is True and "engine.five35.game" in got["extensions"]
    edited = pkg / "rules.py"
    edited.write_text(edited.read_text() + "\n# edited\n")
    got, err = _probe(tmp_path)
    assert got["compiled"] is False and got["extensions"] == [] and "make native" in err


TRACE = textwrap.dedent("""
    import hashlib, json, random, sys
    import engine

    def trace(game, options, seed):
        h = hashlib.sha256()
        rng = random.Random(seed)
        s = engine.new_game(game, players=4, seed=seed, **options)
        while engine.to_move(s) is not None:
            legal = engine.legal_moves(s)
            h.update(json.dumps([legal, engine.views(s, [None, 0, 1, 2, 3])]).encode())
            s = engine.play(s, rng.choice(legal))
        try:
            engine.play(s, "pass")
        except engine.IllegalMove as exc:
            h.update(repr((exc.code, str(exc))).encode())
        h.update(json.dumps([engine.result(s), engine.snapshot(s)], sort_keys=True).encode())
        rules = engine.rules_for(game)
        f = rules.new(4, seed, None, dict(options))
        while rules.to_move(f) is not None:
            m = rng.choice(rules.legal(f))
            h.update(rules.encode(f, m).encode())
            rules.apply(f, m)
        h.update(json.dumps(rules.result(f)).encode())
        return h.hexdigest()

    CASES = [("cinquillo", {"preset": "tradicional", "chips": True}), ("cinquillo", {"cabron": True}),
             ("535", {})]
    print(json.dumps([trace(g, o, seed) for g, o in CASES for seed in range(3)]))
""")


def test_G_1_C_8_compiled_and_pure_engines_play_identically() -> None:
    """The same seeded matches through both engines: every legal list, view, refusal, result and
    snapshot is the same (G-1: the views; C-8: the deals from the seed)."""
    runs = {}
    for pure in ("0", "1"):
        env = {**os.environ, _native.PURE_ENV: pure}
        out = subprocess.run([sys.executable, "-c", TRACE], cwd=ROOT, env=env, capture_output=True,
                             text=True, check=True)
        runs[pure] = json.loads(out.stdout)
    assert len(runs["0"]) == 9 and len(set(runs["0"])) == 9
    assert runs["0"] == runs["1"]
