"""Paired comparison of two tournament rows on the same duplicate deals (``--scores`` files).

usage: python bench/paired.py SCORES.json [MORE.json ...] ROW_A ROW_B
       python bench/paired.py SCORES.json [MORE.json ...] ROW
       (a row is named "GAME LEVEL:OPPONENT", as in the file; with no rows, the names are listed)

With two rows: the mean per-deal difference A - B and its 95 % interval over the deals both rows
played: the deal's luck cancels out of the difference, so variants are told apart with far fewer
deals.  With one row: that row pooled over every file (each file a run on its own seed, so its
deals are other deals), its mean and 95 % interval over all their deals.
"""

from __future__ import annotations

import json
import math
import sys


def main() -> None:
    """Load the files, print the names or the paired difference of two rows."""
    files = [a for a in sys.argv[1:] if a.endswith(".json")]
    rows = [a for a in sys.argv[1:] if not a.endswith(".json")]
    data: dict[str, dict[str, float]] = {}
    pooled: list[float] = []
    for f in files:
        with open(f) as fh:
            loaded = json.load(fh)
        data.update(loaded)
        if len(rows) == 1 and rows[0] in loaded:
            pooled.extend(loaded[rows[0]].values())
    if len(rows) == 1:
        print(_pooled(rows[0], pooled, len(files)))
        return
    if len(rows) != 2:
        print("\n".join(f"{k} ({len(v)} deals)" for k, v in data.items()))
        return
    a, b = data[rows[0]], data[rows[1]]
    common = sorted(set(a) & set(b), key=int)
    diffs = [a[d] - b[d] for d in common]
    n = len(diffs)
    mean = sum(diffs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in diffs) / (n - 1)) if n > 1 else 0.0
    half = 1.96 * sd / math.sqrt(n)
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
