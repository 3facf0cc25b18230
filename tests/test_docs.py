"""The docs say what the project has: the rule book's ids are the ones the tests name, its options
are the engine's, and no doc points at a rule book or design page outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

from engine.cinquillo.options import KNOWN as CINQUILLO_OPTIONS
from engine.five35.options import KNOWN as FIVE35_OPTIONS

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
