"""Paired comparison of two tournament rows on the same duplicate deals (``--scores`` or ``--log`` files).

usage: python bench/paired.py FILE [FILE ...] ROW_A ROW_B
       python bench/paired.py FILE [FILE ...] ROW
       (a row is named "GAME LEVEL:OPPONENT", as in the file; with no rows, the names are listed)

FILE is a ``--scores`` JSON file (one run: per row, deal -> score) or a ``--log`` file (``.jsonl``:
a line per deal, or per batch in older logs, with its seed, so one file may hold runs on several
seeds; rows of other budgets are not told apart here: ``bench/league_report.py`` does).  With two rows: the
mean per-deal difference A - B and its 95 % interval over the deals both rows played (the same
seed and deal): the deal's luck cancels out of the difference, so variants are told apart with far
fewer deals.  With one row: that row pooled over every file and seed, its mean and 95 % interval.
"""

from __future__ import annotations

import json
import math
import sys


def load(files: list[str]) -> tuple[dict[str, dict[str, float]], dict[str, list[float]]]:
    """Per row, deal key -> score (a later ``.json`` file's row replaces an earlier one's; a log's
    deals are keyed by seed and deal), and per row every score of every file, for pooling."""
    data: dict[str, dict[str, float]] = {}
    pooled: dict[str, list[float]] = {}
    for f in files:
        with open(f) as fh:
            if f.endswith(".jsonl"):
                for line in fh:
                    batch = json.loads(line)
                    if "deal" in batch:  # a deal's line (bench/league/runlog.py)
                        batch = {"row": batch["row"], "seed": batch["seed"],
                                 "scores": {batch["deal"]: batch["score"]}}
                    row = data.setdefault(batch["row"], {})
                    for deal, score in batch["scores"].items():
                        row[f"{batch['seed']}:{deal}"] = score
                        pooled.setdefault(batch["row"], []).append(score)
                continue
            for name, scores in json.load(fh).items():
                data[name] = scores
                pooled.setdefault(name, []).extend(scores.values())
    return data, pooled


def paired(a: dict[str, float], b: dict[str, float]) -> tuple[float, float, int]:
    """The mean difference a - b over the deals both played, its 95 % half-width, and their number."""
    common = sorted(set(a) & set(b))
    diffs = [a[d] - b[d] for d in common]
    n = len(diffs)
    if n == 0:
        return 0.0, 0.0, 0
    mean = sum(diffs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in diffs) / (n - 1)) if n > 1 else 0.0
    return mean, 1.96 * sd / math.sqrt(n), n


def main() -> None:
    """Load the files, print the names, one pooled row or the paired difference of two rows."""
    files = [a for a in sys.argv[1:] if a.endswith((".json", ".jsonl"))]
    rows = [a for a in sys.argv[1:] if not a.endswith((".json", ".jsonl"))]
    data, pooled = load(files)
    if len(rows) == 1:
        print(_pooled(rows[0], pooled.get(rows[0], []), len(files)))
        return
    if len(rows) != 2:
        print("\n".join(f"{k} ({len(v)} deals)" for k, v in data.items()))
        return
    mean, half, n = paired(data[rows[0]], data[rows[1]])
    print(f"{rows[0]} - {rows[1]}: {100 * mean:+.1f} points [{100 * (mean - half):+.1f}, "
          f"{100 * (mean + half):+.1f}] over {n} deals")


def _pooled(row: str, scores: list[float], files: int) -> str:
    """One row's mean per-deal score over several runs, with its normal 95 % interval."""
    n = len(scores)
    if n < 2:
        return f"{row}: {n} deals, too few for an interval"
    mean = sum(scores) / n
    half = 1.96 * math.sqrt(sum((x - mean) ** 2 for x in scores) / (n - 1) / n)
    return (f"{row}: {100 * mean:.1f}% [{100 * (mean - half):.1f}%, {100 * (mean + half):.1f}%] "
            f"over {n} deals ({files} files)")


if __name__ == "__main__":
    main()
