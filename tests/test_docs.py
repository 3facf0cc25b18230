"""The docs say what the project has: the rule book's ids are the ones the tests name, its options
are the engine's, and no doc points at a rule book or design page outside the repository."""

from __future__ import annotations

import argparse
import importlib
import os
import re
from importlib.metadata import entry_points
from pathlib import Path

from engine.cinquillo.options import KNOWN as CINQUILLO_OPTIONS
from engine.five35.options import KNOWN as FIVE35_OPTIONS
from service.ops import cli

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "docs" / "rules.md"
# A rule id as docs and tests write it: a game letter (D: the daily deal), a hyphen, a number.
_ID = re.compile(r"\b([CDFG])-(\d+)\b")
# A rule id in a test's name: test_C_3_..., test_c3_..., test_g1_...
_ID_IN_NAME = re.compile(r"\bdef test_([CDFGcdfg])_?(\d+)_")
# Where rules.md defines a rule: its id in bold at the start of a list item.
_DEFINED = re.compile(r"^- \*\*([CDFG])-(\d+)\b", re.MULTILINE)


def _ids(pattern: re.Pattern[str], text: str) -> set[str]:
    return {f"{letter.upper()}-{number}" for letter, number in pattern.findall(text)}


def _test_files() -> list[Path]:
    return [p for p in sorted((ROOT / "tests").rglob("*.py")) if p.name != Path(__file__).name]


def _named_by_tests() -> dict[str, list[str]]:
    named: dict[str, list[str]] = {}
    for path in _test_files():
        text = path.read_text(encoding="utf-8")
        for rule in _ids(_ID, text) | _ids(_ID_IN_NAME, text):
            named.setdefault(rule, []).append(str(path.relative_to(ROOT)))
    return named


def test_the_scans_find_something() -> None:
    # If a pattern broke, every comparison below would hold on empty sets.
    assert len(_ids(_DEFINED, RULES.read_text(encoding="utf-8"))) >= 30
    assert len(_named_by_tests()) >= 30


def test_every_rule_id_is_defined_once_and_every_mention_is_defined() -> None:
    text = RULES.read_text(encoding="utf-8")
    defined = [f"{a}-{b}" for a, b in _DEFINED.findall(text)]
    assert len(defined) == len(set(defined)), "a rule id is defined twice"
    assert _ids(_ID, text) <= set(defined), "rules.md mentions an id it does not define"


def test_every_rule_id_a_test_names_is_in_the_rule_book() -> None:
    defined = _ids(_DEFINED, RULES.read_text(encoding="utf-8"))
    unknown = {rule: files for rule, files in _named_by_tests().items() if rule not in defined}
    assert not unknown, f"tests name rule ids that docs/rules.md does not define: {unknown}"


def test_every_rule_in_the_rule_book_is_named_by_a_test() -> None:
    defined = _ids(_DEFINED, RULES.read_text(encoding="utf-8"))
    untested = sorted(defined - set(_named_by_tests()), key=lambda r: (r[0], int(r[2:])))
    assert not untested, f"no test names these rules: {untested}"


def test_every_option_the_rule_book_names_is_an_engine_option() -> None:
    text = RULES.read_text(encoding="utf-8")
    named = set(re.findall(r"[Oo]ptions?\s+`(\w+)`", text)) | set(re.findall(r"`(\w+)=", text))
    assert {"preset", "chips", "cabron", "target", "runs_low_beats_high", "hand_size"} <= named
    known = set(CINQUILLO_OPTIONS) | set(FIVE35_OPTIONS) | {"players"}
    # "jugadores" and "objetivo": the chat's Spanish spellings of players and target; `key=value`
    # stands for any option, and `seat=None` is engine.view's argument
    assert named - known <= {"jugadores", "objetivo", "key", "seat"}, named - known


def test_no_doc_cites_a_rule_book_or_design_outside_the_repository() -> None:
    docs = [ROOT / "README.md", *sorted(ROOT.glob("docs/*.md")), *sorted(ROOT.glob("deploy/*.md")),
            *sorted(ROOT.glob("adapters/*/README.md"))]
    assert len(docs) >= 4
    citing = [str(p.relative_to(ROOT)) for p in docs
              if re.search(r"\b(RULES|DESIGN)\.md\b", p.read_text(encoding="utf-8"))]
    assert not citing, f"these docs cite RULES.md or DESIGN.md, not docs/rules.md or docs/design.md: {citing}"


_REDIS_WRITE = re.compile(r"\.redis\.(set|hset|hsetnx|sadd|srem|zadd|zrem|xadd|xack|delete|unlink|expire|incr"
                          r"|incrby|hincrby|lpush|rpush|eval|evalsha|register_script|execute_command)\(")


def test_adapters_write_redis_only_where_architecture_md_says() -> None:
    # docs/architecture.md: adapters keep their Redis state through the service's modules, except
    # the terminal's language preference.  A new direct write must be documented (and listed here).
    writes = sorted(f"{p.relative_to(ROOT)}:{m.group(1)}" for p in sorted((ROOT / "adapters").rglob("*.py"))
                    for m in _REDIS_WRITE.finditer(p.read_text(encoding="utf-8")))
    assert writes == ["adapters/terminal/play.py:hset"]
    architecture = " ".join((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").split())
    assert "the terminal writes its player's language preference" in architecture


# Every doc that tells a reader where things are: the README, docs/, and the READMEs of adapters,
# bridges and deploy.
_DOCS = [ROOT / "README.md", *sorted(ROOT.glob("docs/*.md")), *sorted(ROOT.glob("adapters/*/README.md")),
         *sorted(ROOT.glob("bridges/*/README.md")), ROOT / "deploy" / "README.md"]
# A path as docs write it, in backquotes: with a slash (`service/store/keys.py`, `tests/faults/`), or
# a file name with a source or doc ending (`append.lua`).
_PATH = re.compile(r"`(\.{0,2}/?[\w.-]+/[\w./-]*"
                   r"|[\w-]+\.(?:py|md|txt|toml|ya?ml|conf|lua|po|json|html|js|css|sh))`")
# Paths docs name that are not files of the repository: made by the build or a run (git ignores
# them), or media types; and the shared folder beside the repository (../shared/) is not checked.
_NOT_FILES = {"engine/_native.stamp", ".cache/synapse-venv", "application/json", "text/plain"}
_SKIP_DIRS = {".git", ".venv", ".cache", "build", "dist", "__pycache__", ".mypy_cache", ".ruff_cache",
              ".pytest_cache", ".hypothesis", ".import_linter_cache"}


def _repository_paths() -> set[str]:
    """Every file and folder of the working tree (folders with a trailing slash), relative to ROOT."""
    paths: set[str] = set()
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.endswith(".egg-info")]
        here = Path(folder).relative_to(ROOT).as_posix()
        prefix = "" if here == "." else here + "/"
        paths.update(prefix + d + "/" for d in dirs)
        paths.update(prefix + f for f in files)
    return paths


def _exists(doc: Path, path: str, paths: set[str]) -> bool:
    """Whether a doc's path names a file or folder: from the repository's root or the doc's folder,
    or, as docs write a module inside the part they describe (`write/gateway.py`, `lua/trim.lua`,
    `sender.py`), the end of a path in the repository; `store/leases.hold` names a module's function."""
    wanted = [path]
    module, _, name = path.rpartition(".")
    if module and "/" in module and name.isidentifier() and not path.endswith("/"):
        wanted.append(module + ".py")
    for w in wanted:
        folder = w.endswith("/")
        ends = [p for p in paths if p == w or p.endswith("/" + w)] if folder else \
            [p for p in paths if p in (w, w + "/") or p.endswith(("/" + w, "/" + w + "/"))]
        local = (doc.parent / w).resolve()
        if ends or (local.is_relative_to(ROOT) and local.exists()):
            return True
    return False


def _doc_paths() -> list[tuple[Path, str]]:
    found = []
    for doc in _DOCS:
        for m in _PATH.finditer(doc.read_text(encoding="utf-8")):
            path = m.group(1)
            # placeholders (`CINQ_ARCHIVE_DIR/cinq-archive-YYYY-MM-DD.jsonl`) are not paths
            outside = path in _NOT_FILES or path.startswith(("/", "../shared/"))
            if outside or re.search(r"[A-Z]{4,}_|YYYY", path):
                continue
            found.append((doc, path))
    return found


def test_every_path_a_doc_names_exists() -> None:
    named = _doc_paths()
    assert len(named) >= 200, "the path pattern broke"
    paths = _repository_paths()
    missing = sorted({f"{doc.relative_to(ROOT)}: {path}" for doc, path in named
                      if not _exists(doc, path, paths)})
    assert not missing, f"docs name paths that do not exist: {missing}"


def test_every_make_target_a_doc_names_exists() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([\w-]+):", makefile, re.MULTILINE))
    # `make x` in the text, and a line that starts with make in a code block or in .ci/run
    named = {(doc, m.group(1)) for doc in _DOCS
             for m in re.finditer(r"`make ([a-z][\w-]*)", doc.read_text(encoding="utf-8"))}
    for doc in [*_DOCS, ROOT / ".ci" / "run"]:
        text = doc.read_text(encoding="utf-8")
        code = "\n".join(re.findall(r"^```\w*\n(.*?)^```", text, re.MULTILINE | re.DOTALL)) \
            if doc.suffix == ".md" else text
        named |= {(doc, t) for t in re.findall(r"^make ([a-z][\w-]*)", code, re.MULTILINE)}
    assert {"play", "test", "test-failover", "lint"} <= {t for _, t in named}
    unknown = sorted(f"{doc.relative_to(ROOT)}: make {t}" for doc, t in named if t not in targets)
    assert not unknown, f"docs name make targets the Makefile does not have: {unknown}"


def test_every_cinq_command_a_doc_names_exists() -> None:
    subcommands = [a for a in cli._parser()._actions if isinstance(a, argparse._SubParsersAction)]
    commands = set(subcommands[0].choices)
    # the adapters' own commands (entry points of the group cinq.adapters)
    commands |= {ep.name for ep in entry_points(group="cinq.adapters")}
    named = {(doc, m.group(1)) for doc in _DOCS
             for m in re.finditer(r"`(?:\.venv/bin/)?cinq ([a-z][\w-]*)", doc.read_text(encoding="utf-8"))}
    assert {"serve", "worker", "trim"} <= {c for _, c in named}
    unknown = sorted(f"{doc.relative_to(ROOT)}: cinq {c}" for doc, c in named if c not in commands)
    assert not unknown, f"docs name cinq commands that do not exist: {unknown}"


def test_every_module_a_doc_names_in_dotted_form_exists() -> None:
    # `service.store.keys.Keys`, `engine.ai.hard.HARD`: the module, then its attributes
    named = {(doc, m.group(1)) for doc in _DOCS
             for m in re.finditer(r"`((?:engine|service|adapters)(?:\.\w+)+)",
                                  doc.read_text(encoding="utf-8"))
             if not m.group(1).endswith(".md")}
    assert len(named) >= 15, "the pattern broke"
    wrong = []
    for doc, dotted in sorted(named):
        parts = dotted.split(".")
        found = next((i for i in range(len(parts), 0, -1)
                      if ROOT.joinpath(*parts[:i]).with_suffix(".py").exists()
                      or ROOT.joinpath(*parts[:i], "__init__.py").exists()), 0)
        if not found:
            wrong.append(f"{doc.relative_to(ROOT)}: {dotted}")
            continue
        obj = importlib.import_module(".".join(parts[:found]))
        for attribute in parts[found:]:
            if not hasattr(obj, attribute):
                wrong.append(f"{doc.relative_to(ROOT)}: {dotted}")
                break
            obj = getattr(obj, attribute)
    assert not wrong, f"docs name modules or attributes that do not exist: {wrong}"
