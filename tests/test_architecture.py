"""The import graph has two layers: a core whose stages import only from the stages
before them, and the applications on top, which may import any core stage but not
each other; nothing in the core imports an application, and no module imports itself
back through a cycle.

The core stages follow the one path data takes::

    common -> board -> data -> features -> learn -> evaluate -> engine

(``common`` holds the few helpers every stage shares: the atomic JSON writer and the
``main()`` wrapper of the ``python -m`` commands; it imports no other stage.) The
applications::

    cli   frontends   lab

each stand on the core alone: the command line (``knights.cli``) starts the others by
name through their ``main``/``run`` functions, imported lazily, which is the one
exception: ``cli`` may import any application.

Imports are read with ``ast`` (nothing is imported), including those inside
functions, so a lazy import cannot hide a backward arrow.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "knights"
CORE = ("common", "board", "data", "features", "learn", "evaluate", "engine")
APPS = ("cli", "frontends", "lab")
STAGES = CORE + APPS
LAUNCHER = "cli"
"""The one application that may import the others: it starts them."""


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
    """Index in :data:`STAGES` (the core's first, in data-flow order, then the applications);
    ``None`` for the package root ``knights``."""
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


def layer_problem(module: str, target: str) -> str | None:
    """Why ``module`` may not import ``target``, or ``None`` when it may."""
    here, there = stage_of(module), stage_of(target)
    if here is None or there is None or here == there:
        return None
    mine, theirs = STAGES[here], STAGES[there]
    if mine in CORE and theirs in APPS:
        return f"{module} (core: {mine}) imports {target} (application: {theirs})"
    if mine in CORE and there > here:
        return f"{module} ({mine}) imports {target} ({theirs}), a later core stage"
    if mine in APPS and theirs in APPS and mine != LAUNCHER:
        return f"{module} (application: {mine}) imports {target} (application: {theirs})"
    return None


def test_no_import_runs_against_the_layers():
    problems = [problem for module, targets in graph().items() for target in targets
                if (problem := layer_problem(module, target)) is not None]
    assert not problems, "imports against the layers:\n" + "\n".join(sorted(problems))


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
    (pkg / "engine").mkdir()
    for p in (pkg / "__init__.py", pkg / "board" / "__init__.py", pkg / "engine" / "__init__.py",
              pkg / "engine" / "one_ply.py"):
        p.write_text("")
    (pkg / "board" / "x.py").write_text("def f():\n    from knights.engine import one_ply\n")
    known = {"knights", "knights.board", "knights.engine", "knights.engine.one_ply", "knights.board.x"}
    found = imports_of(pkg / "board" / "x.py", "knights.board.x", known)
    assert "knights.engine.one_ply" in found
    assert layer_problem("knights.board.x", "knights.engine.one_ply") is not None


def test_the_layers_as_stated():
    """Core stages look back only; applications take any core stage but not each other
    (the launcher ``cli`` excepted); the core never takes an application."""
    assert layer_problem("knights.engine.search", "knights.board.arrays") is None
    assert layer_problem("knights.frontends.web.app", "knights.engine.search") is None
    assert layer_problem("knights.cli", "knights.frontends.web.server") is None
    assert layer_problem("knights.lab.bench.core", "knights.lab.arena.matches") is None   # one application
    assert layer_problem("knights.lab.arena.soak", "knights.frontends.uci") is not None
    assert layer_problem("knights.frontends.terminal", "knights.lab.arena.game") is not None
    assert layer_problem("knights.learn.training", "knights.lab.notebooks.build") is not None
    assert layer_problem("knights.common", "knights.board.arrays") is not None
