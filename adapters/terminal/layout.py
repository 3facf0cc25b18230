"""Laying text out on the terminal's 80 columns (:mod:`adapters.terminal.screen` draws with these):
items side by side wrapped at a width, and long lines folded between words.  Widths are counted in
terminal cells (``rich``'s ``cell_len``: a suit's emoji takes two)."""

from __future__ import annotations

from rich.cells import cell_len

WIDTH = 80  # the screen is 80x24


def wrap(items: list[str], width: int = WIDTH - 2, indent: str = "  ", first: str = "",
         sep: str = "   ") -> list[str]:
    """Items side by side, ``sep`` between them, wrapped at ``width`` cells; the first line begins
    with ``first``."""
    lines: list[str] = []
    line = first + " " if first else indent
    for item in items:
        if cell_len(line) + cell_len(item) > width and line.strip() and line.strip() != first.strip():
            lines.append(line.rstrip())
            line = indent
        line += item + sep
    if line.strip():
        lines.append(line.rstrip())
    return lines


def fold(text: str, width: int = WIDTH) -> list[str]:
    """``text``'s lines, each longer than ``width`` cells folded between words (its indent kept on
    the lines it continues on): a terminal would cut words where the screen ends."""
    out: list[str] = []
    for line in text.splitlines() or [""]:
        if cell_len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip(" ")))
        words = line.split()
        current = indent + words[0]
        for word in words[1:]:
            if cell_len(current) + 1 + cell_len(word) > width:
                out.append(current)
                current = indent + "  " + word if indent else word
            else:
                current += " " + word
        out.append(current)
    return out
