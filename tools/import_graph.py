"""Print the import graph of service/ in figures: imports that run back up a layer, import circles,
imports inside functions, and the largest modules; of the working tree, or of a commit (``--rev``).

The layers are the ones pyproject.toml's import-linter contract names for service/ (ops on top, the
foundation at the bottom), read from the working tree, so that an older commit is measured against
the layering the service has now.  Usage, from the repository root::

    python tools/import_graph.py                 # the working tree
    python tools/import_graph.py --rev 6e2021c^  # the commit before the layers were made

An import counts whether it runs at import time or inside a function (both are edges of the graph
the interpreter follows); an import under ``if TYPE_CHECKING:`` does not (it never runs).
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "service"


@dataclass(frozen=True)
class Edge:
    """One import of a service module by another (``inside``: written inside a function)."""

    source: str
    target: str
    inside: bool


def sources(rev: str | None) -> dict[str, str]:
    """The text of every ``service/**.py``: of the working tree, or of the commit ``rev``."""
    if rev is None:
        return {str(p): p.read_text(encoding="utf-8") for p in sorted(Path(PACKAGE).rglob("*.py"))}
    names = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, PACKAGE], check=True,
                           capture_output=True, text=True).stdout.split()
    return {n: subprocess.run(["git", "show", f"{rev}:{n}"], check=True, capture_output=True,
                              text=True).stdout for n in names if n.endswith(".py")}


def module_name(path: str) -> str:
    """service/store/keys.py -> service.store.keys; service/store/__init__.py -> service.store."""
    parts = list(Path(path).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, inside: bool = False) -> Iterable[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement that runs, and whether it is written inside a function."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking(node):
            yield from (x for child in node.orelse for x in _imports(ast.Module([child], []), inside))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, inside
        yield from _imports(node, inside or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef))


def edges(texts: dict[str, str]) -> list[Edge]:
    """The imports between service modules: ``from service.a import b`` is an edge to the module
    ``service.a.b`` when there is one, else to ``service.a``."""
    modules = {module_name(p) for p in texts}
    found: list[Edge] = []
    for path, text in texts.items():
        source = module_name(path)
        package = source if path.endswith("__init__.py") else source.rpartition(".")[0]
        for node, inside in _imports(ast.parse(text, path)):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[:len(anchor) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                while target and target not in modules:  # `import service.a.b` names a module's package
                    target = target.rpartition(".")[0]
                if target.startswith(PACKAGE + ".") and target != source:
                    found.append(Edge(source, target, inside))
    return sorted(set(found), key=lambda e: (e.source, e.target, e.inside))


def layers() -> list[set[str]]:
    """The layers of the service, top first, as pyproject.toml's contract for service/ names them."""
    config = tomllib.loads(Path("pyproject.toml").read_text(encoding="utf-8"))
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract.get("containers") == [PACKAGE]:
            return [{p.strip() for p in layer.split("|")} for layer in contract["layers"]]
    raise SystemExit("pyproject.toml has no layers contract for service/")


def level(module: str, order: list[set[str]]) -> int | None:
    """The layer of a module (0: the top), None for a package the contract does not name."""
    parts = module.split(".")
    if len(parts) < 2:
        return None
    return next((i for i, layer in enumerate(order) if parts[1] in layer), None)


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def report(rev: str | None, largest: int) -> list[str]:
    """The figures, as lines to print."""
    texts = sources(rev)
    found = edges(texts)
    order = layers()
    up = [e for e in found if (a := level(e.source, order)) is not None
          and (b := level(e.target, order)) is not None and b < a]
    unlayered = sorted({m.split(".")[1] for m in map(module_name, texts)
                        if "." in m and level(m, order) is None})
    graph: dict[str, set[str]] = {}
    for e in found:
        graph.setdefault(e.source, set()).add(e.target)
    packages: dict[str, set[str]] = {}
    for e in found:
        source, target = (".".join(m.split(".")[:2]) for m in (e.source, e.target))
        if source != target:
            packages.setdefault(source, set()).add(target)
    sizes = sorted(((len(t.splitlines()), p) for p, t in texts.items()), reverse=True)
    where = rev or "the working tree"
    lines = [f"service/ at {where}: {len(texts)} modules, {len(found)} imports between them",
             "layers (top first): " + " > ".join(" | ".join(sorted(layer)) for layer in order),
             f"packages outside the layers: {', '.join(unlayered) or 'none'}",
             f"imports that run back up a layer: {len(up)}"]
    lines += [f"  {e.source} -> {e.target}{' (inside a function)' if e.inside else ''}" for e in up]
    inside = [e for e in found if e.inside]
    lines.append(f"imports inside a function: {len(inside)}")
    lines += [f"  {e.source} -> {e.target}" for e in inside]
    module_circles = circles(graph)
    package_circles = circles(packages)
    lines.append(f"import circles between modules: {len(module_circles)}")
    lines += ["  " + " <-> ".join(c) for c in module_circles]
    lines.append(f"import circles between service's packages: {len(package_circles)}")
    lines += ["  " + " <-> ".join(c) for c in package_circles]
    over = sum(1 for n, _ in sizes if n > 300)
    lines.append(f"modules over 300 lines: {over}; the {largest} largest:")
    lines += [f"  {n:5d} {p}" for n, p in sizes[:largest]]
    return lines


def main(argv: list[str] | None = None) -> int:
    """Print the figures of the working tree or of ``--rev``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", help="a commit to measure instead of the working tree")
    parser.add_argument("--largest", type=int, default=10, help="how many of the largest modules to list")
    args = parser.parse_args(argv)
    print("\n".join(report(args.rev, args.largest)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
