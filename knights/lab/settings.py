"""The settings the report quotes, written as data: ``knights settings``.

The report (``report/build.py``) never reads the project's source code. What it
quotes from the code (the generator's players and adjudication, the target rule, the
test letter, every version's inputs, layers, optimiser and data letters, the engine's
mate score and stochastic opening, the evaluator the bot plays with) comes from
``report/results/settings.json``, which :func:`write` fills by *importing* the live
values. A constant that is renamed or moved therefore stops this module with an
``ImportError`` instead of turning report numbers into placeholders, and
``tests/test_report.py`` checks that the committed file equals what :func:`collect`
returns now, so it cannot go stale unnoticed.

It is an application beside the command line: it reads values from every core stage
and nothing in the core reads it. Only settings go in, never measurements: those stay
in the results files of the commands that measure them.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from torch import nn

from knights.common import write_json
from knights.data.csslab import CLIP_PAWNS, MATE_PAWNS
from knights.data.generate import ADJUDICATE_PAWNS, EPSILONS, OPENING_PLIES, STYLES
from knights.engine.constants import MATE_SCORE, OPENING_MARGIN
from knights.engine.judged import CHECK_PLIES, ENDING_MEN, trained_on_endings
from knights.engine.one_ply import OPENING_MOVES, OPENING_TABLE, ORIGINAL_CAPTURE_BONUS
from knights.engine.spec import ONE_PLY_EVALUATOR, SPARSE_DEMOCRACY
from knights.evaluate.names import DEFAULT_EVALUATOR
from knights.learn import registry
from knights.learn.experiment import TEST_LETTERS
from knights.learn.nets import parameter_count

SETTINGS = registry.REPO_ROOT / "report" / "results" / "settings.json"
"""Where ``knights settings`` writes by default (the report reads it there)."""


def layers(model: nn.Module) -> dict:
    """The shape of a network, in the order data flows through it.

    ``convs``: ``[in_channels, out_channels, kernel]`` per convolution; ``widths``:
    the fully connected head, from its input width (flattened board plus extras) to
    its output.

    >>> from knights.learn.nets import ConvNet
    >>> layers(ConvNet(6, convs=[(16, 5), (30, 3)], hidden=[384], n_extra=10))
    {'convs': [[6, 16, 5], [16, 30, 3]], 'widths': [1090, 384, 1]}
    """
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    return {"convs": [[m.in_channels, m.out_channels, m.kernel_size[0]]
                      for m in model.modules() if isinstance(m, nn.Conv2d)],
            "widths": [linears[0].in_features] + [m.out_features for m in linears]}


def version_settings(version: registry.Version) -> dict:
    """What a version's ``library.py`` declares, with the network it builds measured
    (layers and parameter count) rather than re-derived from the declaration."""
    lib = version.library
    model = lib.build_model()
    return {"inputs": asdict(lib.INPUTS), "train": asdict(lib.TRAIN), "data": dict(lib.DATA),
            "parent": lib.PARENT, "penalty": lib.PENALTY if version.family == "SL" else None,
            "layers": layers(model), "parameters": parameter_count(model)}


def collect() -> dict:
    """Every setting the report quotes, as JSON-ready values (tuples become lists)."""
    settings = {
        "written_by": "knights settings (knights.lab.settings)",
        "data": {"epsilons": EPSILONS, "adjudicate_pawns": ADJUDICATE_PAWNS, "opening_plies": OPENING_PLIES,
                 "mate_pawns": MATE_PAWNS, "clip_pawns": CLIP_PAWNS, "test_letters": TEST_LETTERS,
                 "styles": {name: style.description for name, style in STYLES.items()}},
        "versions": {v.name: version_settings(v) for v in registry.all_versions()},
        "engine": {"default_evaluator": DEFAULT_EVALUATOR, "one_ply_evaluator": ONE_PLY_EVALUATOR,
                   "sparse_democracy": SPARSE_DEMOCRACY, "check_plies": CHECK_PLIES,
                   "ending_men": ENDING_MEN, "ending_members": [m for m in SPARSE_DEMOCRACY if trained_on_endings(m)],
                   "mate_score": MATE_SCORE,
                   "opening_table": OPENING_TABLE, "opening_moves": OPENING_MOVES, "opening_margin_cp": OPENING_MARGIN,
                   "original_capture_bonus": ORIGINAL_CAPTURE_BONUS},
    }
    return json.loads(json.dumps(settings))


def write(path: str | Path = SETTINGS) -> Path:
    """Write :func:`collect` to ``path`` (default :data:`SETTINGS`) and return it."""
    target = Path(path)
    write_json(target, collect())
    return target
