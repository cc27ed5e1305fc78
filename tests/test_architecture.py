"""The import graph points one way: each stage of ``knights`` imports only from the
stages before it, and no module imports itself back through a cycle.

The stages follow the one path data takes::

    board -> data -> features -> learn -> evaluate -> play -> web -> arena -> bench -> cli

``web`` (the browser front end) sits right after ``play``: it builds on the engine
and the evaluators, and only the command line (``cli``) starts it.

Imports are read with ``ast`` (nothing is imported), including those inside
functions, so a lazy import cannot hide a backward arrow.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "knights"
STAGES = ("board", "data", "features", "learn", "evaluate", "play", "web", "arena", "bench", "cli")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path, name: str, known: set[str]) -> set[str]:
    """Project modules ``path`` imports (``from pkg import mod`` counts as ``pkg.mod``)."""
    found: set[str] = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    out = set()
    for target in found:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name and target.startswith("knights"):
            out.add(target)
    return out


def stage_of(module: str) -> int | None:
    """Index in :data:`STAGES`; ``None`` for the package root ``knights``."""
    parts = module.split(".")
    if len(parts) == 1:
        return None
    if parts[1] not in STAGES:
        raise AssertionError(f"{module} belongs to no stage: put it in one of {', '.join(STAGES)}")
    return STAGES.index(parts[1])


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports_of(path, name, set(mods)) for name, path in mods.items()}


def test_every_module_belongs_to_a_stage():
    for name in modules():
        stage_of(name)


def test_no_import_runs_back_to_an_earlier_stage():
    backwards = []
    for module, targets in graph().items():
        here = stage_of(module)
        for target in targets:
            there = stage_of(target)
            if here is not None and there is not None and there > here:
                backwards.append(f"{module} ({STAGES[here]}) imports {target} ({STAGES[there]})")
    assert not backwards, "imports against the data flow:\n" + "\n".join(sorted(backwards))


def test_no_import_cycles():
    edges = graph()
    cycles = []
    state: dict[str, int] = {}   # 1 on the stack, 2 done

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join([*stack[stack.index(nxt):], nxt]))
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_ensemble_folder_holds_no_code():
    """``ensemble/`` keeps the learners' files and results; its code lives in the stages."""
    assert not list((ROOT / "ensemble").glob("*.py"))


def test_the_checker_catches_a_backward_import(tmp_path):
    """A planted backward import is reported (the check can fail)."""
    pkg = tmp_path / "knights"
    (pkg / "board").mkdir(parents=True)
    (pkg / "play").mkdir()
    for p in (pkg / "__init__.py", pkg / "board" / "__init__.py", pkg / "play" / "__init__.py",
              pkg / "play" / "engine.py"):
        p.write_text("")
    (pkg / "board" / "x.py").write_text("def f():\n    from knights.play import engine\n")
    known = {"knights", "knights.board", "knights.play", "knights.play.engine", "knights.board.x"}
    found = imports_of(pkg / "board" / "x.py", "knights.board.x", known)
    assert "knights.play.engine" in found
    assert stage_of("knights.play.engine") > stage_of("knights.board.x")
