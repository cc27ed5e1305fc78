"""Facts the report takes from the source tree itself, read by parsing (``ast``), never
by importing: each version's ``library.py`` (inputs, layers, optimiser, data letters,
parent), the training recipe of ``knights/pipeline.py``, the data recipe in the
Makefile and the generator, and the engine's stochastic opening table.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

from .sources import REPO

FAMILY_DIRS = {"EL": "source_EL", "SL": "source_SL"}


def versions(family: str, root: Path = REPO) -> list[int]:
    """Version numbers with a ``library.py``, ascending."""
    base = Path(root) / FAMILY_DIRS[family]
    return sorted(int(p.parent.name[1:]) for p in base.glob("v*/library.py") if p.parent.name[1:].isdigit())


@lru_cache(maxsize=None)
def _tree(path: Path) -> ast.Module | None:
    try:
        return ast.parse(Path(path).read_text())
    except (OSError, SyntaxError):
        return None


def _literal(node: ast.AST):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return None


def constants(path: Path, names: tuple[str, ...] | None = None) -> dict:
    """Module-level ``NAME = <literal>`` (and annotated) assignments of a file."""
    tree = _tree(Path(path))
    out: dict = {}
    if tree is None:
        return out
    for node in tree.body:
        targets, value = [], None
        if isinstance(node, ast.Assign):
            targets, value = [t.id for t in node.targets if isinstance(t, ast.Name)], node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            targets, value = [node.target.id], node.value
        for t in targets:
            if names is None or t in names:
                v = _literal(value)
                if v is not None:
                    out[t] = v
    return out


def dataclass_defaults(path: Path, class_name: str) -> dict:
    """Literal defaults of a (data)class's annotated fields."""
    tree = _tree(Path(path))
    for node in (tree.body if tree else []):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return {s.target.id: _literal(s.value) for s in node.body
                    if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.value is not None}
    return {}


def _call_kwargs(node: ast.AST) -> tuple[str | None, dict, list]:
    if not isinstance(node, ast.Call):
        return None, {}, []
    fn = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
    return fn, {k.arg: k.value for k in node.keywords if k.arg}, list(node.args)


# -- versions ----------------------------------------------------------------------------------
PLANES = {"signed": 1, "six": 6, "three": 3, "none": 0}


def library(family: str, number: int, root: Path = REPO) -> dict:
    """What ``source_<family>/v<number>/library.py`` declares, as plain values.

    Keys: description, planes, plane_values, scalars, counts, n_planes, n_extra,
    optimizer, lr, momentum, epochs, batch_size, train, val, parent, penalty, convs,
    hidden, out, padding, tanh_layer, layers (text), parameters (computed)."""
    path = Path(root) / FAMILY_DIRS[family] / f"v{number}" / "library.py"
    tree = _tree(path)
    info: dict = {"version": f"{family}/v{number}", "path": str(path.relative_to(root)) if tree else None}
    if tree is None:
        return info
    doc = ast.get_docstring(tree) or ""
    info["description"] = doc.strip().splitlines()[0] if doc.strip() else ""
    spec: dict = {"planes": "six", "plane_values": "ones", "scalars": (), "counts": False}
    train: dict = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            fn, kw, _ = _call_kwargs(node.value)
            if name == "INPUTS" and fn == "InputSpec":
                spec.update({k: _literal(v) for k, v in kw.items()})
            elif name == "TRAIN" and fn == "TrainConfig":
                train = {k: _literal(v) for k, v in kw.items()}
            elif name == "DATA":
                info.update(_literal(node.value) or {})
            elif name == "PARENT":
                info["parent"] = _literal(node.value)
            elif name == "PENALTY":
                info["penalty"] = _literal(node.value)
    spec["scalars"] = tuple(spec.get("scalars") or ())
    n_planes = PLANES.get(spec["planes"], 0)
    n_extra = len(spec["scalars"]) + (10 if spec.get("counts") else 0) + (64 if spec["planes"] == "none" else 0)
    info.update(spec, n_planes=n_planes, n_extra=n_extra)
    info.update({"optimizer": train.get("optimizer", "adam"), "lr": train.get("lr"),
                 "momentum": train.get("momentum", 0.0), "epochs": train.get("epochs"),
                 "batch_size": train.get("batch_size")})
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "build_model":
            for sub in ast.walk(node):
                fn, kw, _ = _call_kwargs(sub)
                if fn == "ConvNet":
                    info.update(convs=[tuple(c) for c in (_literal(kw.get("convs")) or [])] if "convs" in kw else [],
                                hidden=list(_literal(kw.get("hidden")) or []) if "hidden" in kw else [],
                                out=_literal(kw["out"]) if "out" in kw else 1,
                                padding=_literal(kw["padding"]) if "padding" in kw else 1,
                                tanh_layer=_literal(kw["tanh_layer"]) if "tanh_layer" in kw else None)
    if "convs" in info:
        info["layers"], info["parameters"], info["flat"] = _architecture(info)
    return info


def _architecture(info: dict) -> tuple[str, int, int]:
    """Text such as ``Conv 6>16 k5, Conv 16>30 k3; FC 1090>384>1`` and the parameter
    count of :class:`knights.learn.nets.ConvNet` with these settings."""
    channels, side, params, parts = info["n_planes"], 8, 0, []
    pad = info.get("padding", 1)
    for out_c, k in info["convs"]:
        params += out_c * channels * k * k + out_c
        parts.append(f"Conv({channels},{out_c},k{k})")
        channels, side = out_c, side + 2 * pad - k + 1
    flat = channels * side * side if info["convs"] else info["n_planes"] * 64
    widths = [flat + info["n_extra"], *info["hidden"], info["out"]]
    for a, b in zip(widths, widths[1:]):
        params += a * b + b
    return " ".join(parts + ["FC(" + ",".join(str(w) for w in widths) + ")"]), params, flat


def pipeline_runs(root: Path = REPO) -> dict:
    """``RUNS`` of ``knights/pipeline.py``: the settings of the shipped training runs."""
    return constants(Path(root) / "knights" / "learn" / "pipeline.py", ("RUNS",)).get("RUNS", {})


# -- data, engine -------------------------------------------------------------------------------
def makefile_vars(root: Path = REPO) -> dict[str, str]:
    """``NAME ?= value`` defaults of the Makefile (the ``make data`` recipe)."""
    try:
        text = (Path(root) / "Makefile").read_text()
    except OSError:
        return {}
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^(\w+)\s*\?=\s*(.*?)\s*$", text, re.M)}


def generator(root: Path = REPO) -> dict:
    """The generator's fixed choices: epsilons, adjudication threshold, recipe defaults."""
    path = Path(root) / "knights" / "data" / "generate.py"
    out = constants(path, ("EPSILONS", "ADJUDICATE_PAWNS"))
    out.update({f"recipe_{k}": v for k, v in dataclass_defaults(path, "Recipe").items()})
    tree = _tree(path)
    # the random opening: rng.randint(lo, hi) assigned to opening_plies in play_game
    for node in ast.walk(tree) if tree else []:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "opening_plies" for t in node.targets)
                and isinstance(node.value, ast.Call) and len(node.value.args) == 2):
            lo, hi = (_literal(a) for a in node.value.args)
            if isinstance(lo, int) and isinstance(hi, int):
                out["opening_plies"] = (lo, hi)
    return out


def engine_constants(root: Path = REPO) -> dict:
    """``OPENING_TABLE`` ((weight, last move offered or None), ...), ``MATE_SCORE`` and
    ``ORIGINAL_CAPTURE_BONUS`` of ``knights/engine.py``; ``DEFAULT_EVALUATOR``."""
    out = constants(Path(root) / "knights" / "play" / "engine.py", ("OPENING_TABLE", "MATE_SCORE", "ORIGINAL_CAPTURE_BONUS"))
    out.update(constants(Path(root) / "knights" / "evaluate" / "names.py", ("DEFAULT_EVALUATOR",)))
    return out


def target_constants(root: Path = REPO) -> dict:
    """``MATE_PAWNS`` and ``CLIP_PAWNS`` of ``knights/data/csslab.py``: the target rule."""
    return constants(Path(root) / "knights" / "data" / "csslab.py", ("MATE_PAWNS", "CLIP_PAWNS"))


def experiment_constants(root: Path = REPO) -> dict:
    """``FULL_DATA``, ``TEST_LETTERS``, ``SAMPLE_DATA``, ``QUICK`` of ``knights/experiment.py``."""
    return constants(Path(root) / "knights" / "learn" / "experiment.py", ("FULL_DATA", "TEST_LETTERS", "SAMPLE_DATA", "QUICK"))


def file_sizes(pattern: str, root: Path = REPO) -> dict[str, int]:
    """Sizes in bytes of the files matching a glob under the repository."""
    return {str(p.relative_to(root)): p.stat().st_size for p in sorted(Path(root).glob(pattern)) if p.is_file()}
