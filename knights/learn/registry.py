"""The one place that knows where versions and their model files live.

A version is addressed by name, ``"EL/v8"`` or ``"SL/v2"``: its library is
``source_EL/v8/library.py``, its notebook ``source_EL/v8/train.ipynb``, its weights
``models_EL/v8.pt`` and its metadata ``models_EL/v8.json``. Nothing else in the
project builds these paths. It also names what is shipped by default (the default
network, the democracy's folder and its candidate networks, the threat-term suffix), so
that a program that must not wait for torch (``knights uci`` answering ``uci``) can list
and choose evaluators from the files alone: importing this module imports no torch
(the network is built and loaded lazily).
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torch import nn

REPO_ROOT = Path(__file__).resolve().parents[2]
FAMILIES = {"EL": ("source_EL", "models_EL"), "SL": ("source_SL", "models_SL")}
ENSEMBLE_MODELS = REPO_ROOT / "ensemble" / "models"
"""The shipped democracy's folder (its manifest ``democracy.json`` and the learners' files)."""

DEFAULT_NETWORK = "EL/v10"
"""The best network alone by held-out MAE (models_EL/RESULTS.md): what "network alone"
benchmarks time, the ensemble's main member, and what a searching bot plays with when
:data:`SEARCH_NETWORK`'s weights are missing."""

SEARCH_NETWORK = "EL/v24"
"""The searching bot's default network: the compiled search (knights.play.fast) evaluates it incrementally, thousands
of times faster than a batched network call per node. Each default was chosen in self-play
(tools/fast_search_ab.py, report/results/search_strength.json). At 4,000 nodes a move EL/v13 scored 0.263 [0.146,
0.379] against EL/v16 over 40 distinct games (network_ab). EL/v17, more accurate on every test set, did not play
better: EL/v16 scored 0.55 against it at 4,000 nodes a move and 0.425 at 8,000 (network_ab_v17). EL/v18 (256-wide,
twice the columns to update a move) does not beat EL/v16 at equal nodes (EL/v16 0.575 at 4,000, the interval spans
one half) but does at equal time, which is how the bot plays: at 0.1 s a move EL/v16 scored 0.325 [0.191, 0.459]
over 40 games and 0.375 [0.277, 0.473] over 80 more (network_ab_v18). So the search plays EL/v18. EL/v19 (more
data) and EL/v20 (and endings) did not beat it at 0.1 s a move: EL/v18 scored 0.500 [0.355, 0.645] and 0.562
[0.430, 0.695] against them over 40 games each (network_ab_v19, network_ab_v20). EL/v21 (and the shallow style's
games) was not tried in the search: its errors on the independent sets moved from EL/v20's by less than the spread
between training seeds. EL/v24 (the style sets and the sound games, a batch of 4,096), whose quiet-level errors on
games and endgames are the lowest of the versions', does beat it: at 0.1 s a move EL/v18 scored 0.438 [0.310,
0.565] over the arena's 40 games and 0.362 over 80 more from the same openings with the bots' stochastic opening
moves on, 0.388 [0.309, 0.466] over the 120 (network_ab_v24). So the search plays EL/v24, also the newest member
of :data:`SPARSE_DEMOCRACY`. EL/v22 and EL/v23 were not tried in the search."""

DEMOCRACY_NETWORKS = ("EL/v10", "EL/v11", "EL/v13", "EL/v14", "EL/v15", "EL/v16", "EL/v17", "EL/v18")
"""The networks ``knights ensemble`` offers the democracy (those trained): members that
learned differently, so that their errors differ: two 3x3 convolutions in pawns (V10), a
residual CNN with pooling in pawns (V11), the NNUE-style sparse network learned on quiet
positions in win-probability space (V13), V13 on more and other data (V15, and V16 on twice
that grown data, V17 on the same with mirrored files, and V18, wider, on more), and V10's network learned in
that space (V14);
the fitted weights decide which of them, and the learners, count. (V12, a convolution and
transformer hybrid, weighed 0.02 in the last blend it was offered to and costs the most a
decision: it is no longer offered. EL/v19, EL/v18 on more data, is not offered either: the
democracy refitted with it took it at 0.40 of the quiet weight and erred a little less (test
MAE 0.712 against 0.722), but one ply ahead it played worse against sf-elo:1350: 0.131 over
the ladder's 80 games against 0.2125 without it, and 0.179 against 0.229 over 120 more games
from the same openings (seed 7), 0.160 against 0.2225 over the 200 (1.6 standard errors;
report/results/democracy_candidates.json), so the shipped blend stays the one without it.)"""

FAST_NETWORKS = ("EL/v13", "EL/v15", "EL/v16", "EL/v17", "EL/v18", "EL/v19", "EL/v20", "EL/v21", "EL/v22", "EL/v23",
                 "EL/v24", "EL/v25", "EL/v26")
"""The shipped versions the compiled search (knights.play.fast) evaluates: EL/v13's sparse network (768
features a side, accumulators of any width, 128 or 256 so far, a head of three layers), trained on different
data (a test checks that these are exactly the versions with its layers). Named here, beside the files, so
that the UCI engine lists their ``+quiesce`` names without importing the compiled code."""

DEFAULT_EVALUATOR = "democracy+qsearch"
"""The evaluator :mod:`knights.evaluate` loads unless told otherwise (``load_evaluator(None)``, the
benchmarks), and the one-ply bot's while :data:`ONE_PLY_EVALUATOR`'s network is not here: the shipped
democracy (the best held-out MAE, ensemble/RESULTS.md) with the captures played out (knights.evaluate.qsearch,
the ``+qsearch`` suffix), as Stockfish's own depth 1 is a ply and a capture search. One ply
ahead against Stockfish UCI_Elo 1350 it scored 0.355 over 200 games against 0.240 for the
democracy alone on the same openings (+0.115, 2.6 standard errors;
report/results/one_ply_capture_search.json), and its one-ply move is Stockfish's best more
often (report/results/independent.json). The static capture-threat term (knights.evaluate.threats,
``+threats``, one capture and its recapture) was part of the default while the democracy was
weaker; over the current one it no longer earned its place. The ladder rates all three
(``knights strength``). A searching bot plays :data:`SEARCH_NETWORK`."""

SPARSE_DEMOCRACY = ("EL/v19", "EL/v20", "EL/v21", "EL/v22", "EL/v23", "EL/v24")
"""The members of ``sparse+quiesce``, a democracy of the compiled sparse networks at equal weights, each judged
where the captures end (knights.play.fast.quiesce): the six newest, EL/v19 on more data, EL/v20 and endings, EL/v21
and the shallow style's games, EL/v22 and the style sets, EL/v23 and the sound games, EL/v24 and more of them.
They replaced EL/v16 to EL/v21 (the six newest before): the quiet-level errors fell on every independent set and
one ply ahead against sf-elo:1350 they scored 0.772 against 0.754 over the same 400 openings (0.030 standard
error; report/results/one_ply_newest.json). Equal weights, not fitted: the democracy's weights are fitted for the
error, and a lower error has not made a stronger one-ply player here (EL/v19 in :data:`DEMOCRACY_NETWORKS`).
EL/v25 (EL/v24 continued on data/sound2) is not a member: the six newest with it (EL/v20 to EL/v25) erred less on the
quiet level positions of every independent set (games 0.650 against 0.665) but chose Stockfish's best move on 43.5% of
the games set's positions against 44.8% (45.1% with mirrored twins, at twice the capture searches); measured in
session 18, not yet in a results file."""
SPARSE_NAME = "sparse"
"""The evaluator name of :data:`SPARSE_DEMOCRACY` (always with ``+quiesce``: ``sparse+quiesce``)."""

ONE_PLY_EVALUATOR = "sparse+quiesce"
"""The evaluator the one-ply bot (depth 1, in every route) plays with unless told otherwise: the democracy of
:data:`SPARSE_DEMOCRACY`, each network judged where the captures end (knights.play.fast.quiesce: the compiled
capture search from each position the bot's moves lead to, the network asked at every quiet end, as Stockfish's
depth 1 does after its ply). One ply ahead against Stockfish UCI_Elo 1350 on the same openings it scored 0.635 over
400 games with EL/v16 to EL/v21 as members and captures only, where EL/v21 judged so alone scored 0.502 (+0.133, 3.8
standard errors; report/results/one_ply_sparse.json); with today's members and the checks of
knights.play.fast.quiesce it scored 0.772 where the old members scored 0.754 (report/results/one_ply_newest.json);
EL/v21 judged so had scored 0.530 over 200 games where :data:`DEFAULT_EVALUATOR` scored 0.385 (+0.145, 2.9 standard
errors; report/results/one_ply_quiesce.json) and EL/v21 with the captures' material added (``+qsearch``) 0.307
(one_ply_quiesce_network.json). The shipped democracy, whose members are not all compiled networks, is not judged
so; it stays a choice (``democracy+qsearch``), and the ladder rates it beside this one. Only the play layer builds
it (knights.play.fast.bots); where a member's weights are missing the one-ply bot plays :data:`DEFAULT_EVALUATOR`."""

THREATS_SUFFIX = "+threats"
"""An evaluator's name with the static capture-threat term added (:mod:`knights.evaluate.threats`)."""
QSEARCH_SUFFIX = "+qsearch"
"""An evaluator's name with the captures played out by a capture search (:mod:`knights.evaluate.qsearch`)."""
QUIESCE_SUFFIX = "+quiesce"
"""A compiled sparse network's name with the captures played out by the compiled search and judged by the
network where they end (:mod:`knights.play.fast.quiesce`); not one of :data:`VARIANT_SUFFIXES`, which any
evaluator takes."""
VARIANT_SUFFIXES = (THREATS_SUFFIX, QSEARCH_SUFFIX)
"""What may follow any evaluator's name (one of them at most)."""


def judged_names(available: list[str]) -> list[str]:
    """``X+quiesce`` for each network ``X`` of ``available`` that the compiled search evaluates, then
    ``sparse+quiesce`` when every member of :data:`SPARSE_DEMOCRACY` and :data:`SEARCH_NETWORK` (which a deeper
    search asked for it plays) are among them (the play layer's names, listed without importing it).

    >>> judged_names(["material", "EL/v10", "EL/v21"])
    ['EL/v21+quiesce']
    >>> "sparse+quiesce" in judged_names([*SPARSE_DEMOCRACY, SEARCH_NETWORK])
    True
    >>> "sparse+quiesce" in judged_names([*SPARSE_DEMOCRACY[1:], SEARCH_NETWORK])    # a member missing
    False
    """
    judged = [f"{name}{QUIESCE_SUFFIX}" for name in available if name in FAST_NETWORKS]
    needed = (*SPARSE_DEMOCRACY, SEARCH_NETWORK)
    return judged + ([f"{SPARSE_NAME}{QUIESCE_SUFFIX}"] if all(m in available for m in needed) else [])


def split_variant(name: str) -> tuple[str, str]:
    """``"EL/v19+qsearch"`` -> ``("EL/v19", "+qsearch")``; a name without a variant -> ``(name, "")``.
    The suffix is matched in any case and returned as spelled in :data:`VARIANT_SUFFIXES`.

    >>> split_variant("democracy+THREATS"), split_variant("material")
    (('democracy', '+threats'), ('material', ''))
    """
    for suffix in VARIANT_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)], suffix
    return name, ""


def repo_path(path: str | Path) -> Path:
    """``path`` as given when absolute, else taken from the repository root."""
    p = Path(path)
    return p if p.is_absolute() else REPO_ROOT / p


def repo_relative(path: str | Path) -> str:
    """``path`` written relative to the repository root when it lies inside it (for
    metadata that should read the same on every machine)."""
    p = Path(path)
    return str(p.relative_to(REPO_ROOT) if p.is_relative_to(REPO_ROOT) else p)


@dataclass(frozen=True)
class Version:
    family: str   # "EL" or "SL"
    number: int

    @property
    def name(self) -> str:
        return f"{self.family}/v{self.number}"

    @property
    def source_dir(self) -> Path:
        return REPO_ROOT / FAMILIES[self.family][0] / f"v{self.number}"

    @property
    def library_path(self) -> Path:
        return self.source_dir / "library.py"

    @property
    def notebook(self) -> Path:
        return self.source_dir / "train.ipynb"

    def weights(self, models_dir: str | Path | None = None) -> Path:
        return (repo_path(models_dir) if models_dir else REPO_ROOT / FAMILIES[self.family][1]) / f"v{self.number}.pt"

    def meta_path(self, models_dir: str | Path | None = None) -> Path:
        return self.weights(models_dir).with_suffix(".json")

    @property
    def library(self) -> ModuleType:
        return _import_library(self.library_path, f"knights_{self.family.lower()}_v{self.number}")

    def build(self) -> nn.Module:
        """A freshly initialised network of this version."""
        model: nn.Module = self.library.build_model()
        return model

    def load(self, models_dir: str | Path | None = None) -> tuple[nn.Module, dict[str, Any]]:
        """The trained network (eval mode, CPU) and its metadata."""
        from knights.learn import modelfile

        model = modelfile.load_into(self.build(), self.weights(models_dir))
        meta_file = self.meta_path(models_dir)
        meta = modelfile.read_meta(meta_file) if meta_file.exists() else {}
        return model.eval(), meta

    def is_trained(self, models_dir: str | Path | None = None) -> bool:
        return self.weights(models_dir).is_file()


@cache
def _import_library(path: Path, module_name: str) -> ModuleType:
    if not path.is_file():
        raise FileNotFoundError(f"version library not found: {path}")
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def get(name: str) -> Version:
    """``"EL/v8"`` (also ``"el/8"``, ``"EL/V8"``) to its :class:`Version`."""
    m = re.fullmatch(r"\s*(EL|SL)\s*/\s*v?(\d+)\s*", name, flags=re.IGNORECASE)
    if not m:
        raise ValueError(f"not a version name: {name!r} (expected e.g. 'EL/v8' or 'SL/v2')")
    version = Version(m.group(1).upper(), int(m.group(2)))
    if not version.library_path.is_file():
        raise ValueError(f"unknown version {version.name}: known are {', '.join(v.name for v in all_versions())}")
    return version


def all_versions(family: str | None = None) -> list[Version]:
    """Every version with a library on disk, EL then SL, by number."""
    out = []
    for fam, (src, _) in FAMILIES.items():
        if family and fam != family.upper():
            continue
        for lib in (REPO_ROOT / src).glob("v*/library.py"):
            digits = lib.parent.name[1:]
            if digits.isdigit():
                out.append(Version(fam, int(digits)))
    return sorted(out, key=lambda v: (v.family, v.number))
