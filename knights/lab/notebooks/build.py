"""Every notebook of the project, written from one builder and run with papermill.

Notebooks are thin: a title, a parameters cell (papermill's ``parameters`` tag, the
first code cell), calls into the library, plots. What they show about the data and the
model (a few rows and a board, the parameter count, the loss per epoch, predicted
against Stockfish, the error by how lopsided a position is, worked positions, the
baselines) comes from :mod:`knights.lab.notebooks.teach`. There are two kinds:

* each version's ``source_EL/vN/train.ipynb`` / ``source_SL/vN/train.ipynb``: what the
  version changes and where that shows (:func:`change_cell`: its parent and "changed" from the
  versions table, the full runs' figures from ``report/results/networks.json``, and which
  other versions' quick run is the same run, :func:`same_quick_run`), one call into
  :func:`knights.learn.experiment.run_version`, then the teaching cells (with a word where the
  quick run scores worse than counting material, :func:`quick_reading_cell`);
* the learner and ensemble notebooks ``notebooks/{knn,random_forest,svr,linear,ensemble}.ipynb``:
  calls into :mod:`knights.learn.learners` and :mod:`knights.lab.ensemble.train`;
* ``notebooks/inside_the_networks.ipynb`` (:mod:`knights.lab.notebooks.inside`): a shipped dense
  network and the NNUE-style one opened step by step, each step by hand asserted equal to
  the library's.

The committed notebooks hold the outputs of a *quick* run (the committed sample), so
that they read on a repository page without running anything: papermill's
``injected-parameters`` cell right after the parameters says ``quick = True``
(``inside_the_networks`` has no ``quick``: it runs the same way always, without that cell).

* ``knights notebook --write --execute [NAME ...]`` rewrites them from the templates
  below and executes each quickly (:func:`write_notebooks`); ``--write`` alone writes
  the bare templates. Cell ids are stable, so an unchanged template changes nothing but
  the outputs.
* ``python -m knights.lab.notebooks.build --markdown [NAME ...]`` rewrites only their
  markdown and keeps every output (:func:`rewrite_markdown`): what to run when the versions
  table or the results it quotes change; nothing trains.
* ``knights notebook EL/v8 [--quick] [-p name value ...]`` (or ``knn``, ``ensemble``, a
  path) runs one (:func:`run_named`) and keeps the executed copy in
  ``<repo>/runs/notebooks/`` (``EL_v8.ipynb``, ``EL_v8.quick.ipynb``), so the committed
  notebooks stay as they are. A full run without ``data/full`` stops at once with what
  to run instead (:func:`check_data`).
"""

from __future__ import annotations

import ast
import re
import time
from collections.abc import Callable, Sequence
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

from knights.learn import registry
from knights.learn.experiment import FULL_DATA, QUICK, SAMPLE_DATA

if TYPE_CHECKING:
    from nbformat import NotebookNode

NOTEBOOK_DIR = registry.REPO_ROOT / "notebooks"
"""Where the learner and ensemble notebooks live."""
RUNS_DIR = registry.REPO_ROOT / "runs" / "notebooks"
"""Where executed copies go, whatever the current directory (git ignores ``runs/``)."""
COMMITTED_PARAMETERS: dict[str, Any] = {"quick": True}
"""What the committed notebooks' outputs were run with (their ``injected-parameters`` cell)."""
INJECTED = "injected-parameters"
QUICK_EPOCHS = 3
QUICK_BATCH = cast(int, QUICK["batch_size"])
QUICK_TRAIN = cast(str, QUICK["train"])
"""Epochs of a version notebook's quick run: enough for the loss to be a curve, not a dot."""


def build_notebook(title: str, intro: str, parameters: str, cells: Sequence[tuple[str, str]]) -> NotebookNode:
    """The one notebook builder: a markdown title and introduction, the parameters
    cell, then ``cells`` as ``("markdown" | "code", source)`` pairs, with stable ids."""
    import nbformat

    nb: NotebookNode = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell(parameters)
    params.metadata["tags"] = ["parameters"]
    new: dict[str, Callable[[str], NotebookNode]] = {"markdown": nbformat.v4.new_markdown_cell,
                                                    "code": nbformat.v4.new_code_cell}
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\n{intro}"), params,
                *(new[kind](source) for kind, source in cells)]
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i}"
    return nb


# -- version notebooks --------------------------------------------------------------------
PARAMETERS = '''version = "{name}"
data_dir = None        # chunk folder; None: data/full (data/sample when quick)
train_letters = None   # None: the recipe's (source_{family}/versions.toml) or library.py's; "{q_train}" when quick
val_letters = None     # None: the recipe's, else library.py's DATA; "{q_val}" when quick
test_letters = None    # None: "j", held out of every full run; "{q_test}" when quick
epochs = None          # None: the recipe's, the shipped run's (source_{family}/versions.toml); {epochs} when quick
batch_size = None      # None: the recipe's, else library.py's TRAIN
quick = False          # True: the committed sample (data/sample), {epochs} epochs, written to runs/quick/{run}/
out_dir = None         # None: {models}/ (runs/quick/{run}/ when quick)
device = None          # None: CUDA, then Apple MPS, then CPU
progress = False       # True: a progress bar per epoch (long runs)'''

QUICK_NOTE = ("The outputs below are those of a **quick run** (`knights notebook --write --execute {name}`): "
              "papermill sets `quick = True` in the cell after the parameters, so {what} on the committed "
              "sample (`data/sample/`, 30,030 positions) in seconds to minutes, and every figure is far from "
              "{shipped}. For the full run: `make data` (the 1,000,000-position dataset), then {full}.")

DATA_MD = ("## The data: one row a position\n\nEach row is a position (its FEN) before the move played in it, "
           "labelled with Stockfish's evaluation in pawns from White's side (a forced mate is +-10, anything else "
           "is clipped to +-9){target}. Five rows of the data's first chunk, from the 10th to the 90th percentile "
           "of the evaluation, and the last of them drawn:")

CARD = '''from knights.lab.notebooks import teach
from knights.learn.experiment import run_version

teach.setup()   # whole FENs in tables, figures at a modest resolution
teach.version_card(version)'''

CARD_MD = ("## What makes {name}\n\nEvery version runs through the same code (`knights/learn/`); what one version "
           "does differently is its `library.py`: its inputs (`INPUTS`), its training (`TRAIN`), its data letters "
           "(`DATA`) and the network it builds (`build_model`). Below: that file, then {changes}.")

DATA = '''sample = teach.data_sample(data_dir, quick)
display(sample.board)
sample.table'''

MODEL = '''net = teach.fresh_model(version)
print(teach.describe_model(version, net))
teach.parameter_table(net)'''

RUN = '''from knights.learn import registry

recipe = {} if quick else registry.recipe(version)   # the shipped run's settings, from the versions table
result = run_version(version, data_dir=data_dir, train=train_letters or recipe.get("train"),
                     val=val_letters or recipe.get("val"), test=test_letters,
                     epochs=epochs or (teach.QUICK_EPOCHS if quick else recipe.get("epochs")),
                     batch_size=batch_size or recipe.get("batch_size"), quick=quick, out_dir=out_dir, device=device,
                     progress=progress)
teach.history_table(result.history)'''

PLOT = '''fig = teach.plot_history(result)'''

SIBLINGS_MD = ("## The order of moves\n\nThe train loss above also holds {weight} x the sibling cross-entropy "
               "(`knights/learn/siblings.py`): in every batch, positions where Stockfish chose the move, each of their "
               "quiet children judged by the network, a softmax over those verdicts, and the cross-entropy "
               "toward Stockfish's move (a quick run takes its positions from the committed sample, whose movers are "
               "partly random: the mechanics, not the lesson). The validation loss is the win-probability loss "
               "alone. Below, a position of data/sound2's games: its "
               "quiet children as this run's network orders them: the verdict from the side to move's view, "
               "the softmax at the temperature the run learned, and the move Stockfish played.")
SIBLINGS = '''teach.sibling_order(result)'''

COMPARE = '''cmp = teach.version_comparison(result)
cmp.metrics()'''

WORKED = '''boards, table = cmp.worked()
display(boards)
table'''

EL_STEPS = [
    ("## Held-out test rows: the network and its baselines\n\nThe test chunks are in no training or validation "
     "set. Beside this run: counting material (P=1, N=B=3, R=5, Q=9), always saying 0.00, always saying the "
     "training rows' mean, and the shipped networks that never trained on these rows: {shipped}.{report_best} "
     "MAE and median error are in pawns; sign agreement is the share of positions where the "
     "evaluation's sign is Stockfish's (Stockfish's 0.00 left out).{lopsided}", COMPARE),
    ("## Predicted against Stockfish\n\nLeft: every test position, coloured by how many fall in each hexagon "
     "(log scale); on the red diagonal the network would be Stockfish. Middle: the errors. Right: the MAE by how "
     "lopsided the position is (|Stockfish| in pawns), for every evaluator above.",
     '''fig = cmp.plot(f"{version}: held-out test positions")'''),
    ("", "cmp.buckets()"),
    ("## Worked positions\n\nFor each bucket of |Stockfish|, the position whose error is that bucket's median "
     "for this run: a typical position, not a chosen one.", WORKED),
]

SL_STEPS = [
    ("## Held-out test rows: the top move\n\nA move network scores all 4,096 from-to pairs; its move is the "
     "highest. Is it legal, and is it the move played? Beside this run: the same version as shipped (when this "
     "run is not it) and a random legal move.", COMPARE),
    ("## Worked positions\n\nThe first test position where this run's move is the move played, the first "
     "where it is legal but another, the first where it is illegal, and one more. Green: the move played; red: "
     "the network's move.", WORKED),
]


# -- what a version changes, and what its quick run can show ---------------------------------
QUICK_IGNORES = ("DATA", "MORE", "TRAIN_MAIN", "TRAIN.epochs", "TRAIN.batch_size")
"""The settings of a ``library.py`` that a quick run does not read: it trains on the committed sample's letters
(:data:`knights.learn.experiment.QUICK`), for :data:`QUICK_EPOCHS` epochs in batches of the quick runs' size. Two
versions of a family whose other settings (:func:`version_settings`: inputs, network,
target, loss, training, the parent it starts from) are equal make the same quick run, number for number."""

NETWORKS_JSON = registry.REPO_ROOT / "report" / "results" / "networks.json"
"""The full runs measured on data/full's test letter (``knights results``): where a version's change shows."""

EL_FIGURES = (("mae", "MAE (pawns)", 3), ("quiet_level_mae", "MAE on quiet, level positions (pawns)", 3),
              ("win_probability_error", "win-probability error", 4))
SL_FIGURES = (("legal_share", "legal share of the top move", 3), ("top1_played", "top move = move played", 4))

KIND_SHOWS = {
    "network": ("the network changed: that shows in the quick run too (its loss curve and the held-out table, "
                "beside the quick run in {parent}'s notebook)"),
    "inputs": "what the network sees changed: that shows in the quick run too, beside {parent}'s",
    "target": ("what it learns changed (its training loss is in other units than its parent's): compare the MAE "
               "and the win-probability error below, not the losses"),
    "loss": "a second loss joined the first: compare the figures below, not the training losses",
    "training": ("the training changed; a quick run keeps the optimiser, rate, schedule and augmentation but "
                 "trains {epochs} epochs in batches of {batch:,}, so a change of epochs or batch size shows only "
                 "in the full runs"),
    "data": ("the rows it trains on changed: a quick run trains every version on the same committed sample, so "
             "this shows only in the full runs"),
    "start": ("training continues from {parent}'s weights, in the quick run too (the committed `{weights}`): "
              "the quick run starts where {parent} ended"),
    "start, archived": ("training continues from {parent}'s weights, in the quick run too when they are here; "
                        "they are archived, not in git (`make version V={parent}` rebuilds them), and a quick run "
                        "without them starts from random weights"),
}
"""Where each kind of change (versions.toml's ``differs``) can show."""


def version_settings(version: registry.Version) -> dict[str, str]:
    """Everything a version's ``library.py`` sets, one entry a setting: each field of its
    INPUTS and TRAIN (``TRAIN.lr``), its other constants (DATA, PARENT, TARGET, ...), and the
    network it builds (its class and parameter count)."""
    import dataclasses

    from knights.learn.nets import parameter_count

    lib = version.library
    names = [t.id for node in ast.parse(version.library_path.read_text()).body if isinstance(node, ast.Assign)
             for t in node.targets if isinstance(t, ast.Name) and t.id.isupper()]
    out: dict[str, str] = {}
    for name in names:
        value = getattr(lib, name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            out[name] = type(value).__name__
            out.update({f"{name}.{f.name}": repr(getattr(value, f.name)) for f in dataclasses.fields(value)})
        elif isinstance(value, dict):
            out.update({f"{name}[{k!r}]": repr(v) for k, v in value.items()})
        else:
            out[name] = repr(value)
    net = version.build()
    out["network"] = type(net).__name__
    out["parameters"] = f"{parameter_count(net):,}"
    return out


@cache
def quick_settings(name: str) -> tuple[tuple[str, str], ...]:
    """What a quick run of version ``name`` reads from its library (every setting but :data:`QUICK_IGNORES`)."""
    settings = version_settings(registry.get(name))
    return tuple(sorted((k, v) for k, v in settings.items() if not k.startswith(QUICK_IGNORES)))


def same_quick_run(version: registry.Version) -> list[str]:
    """The versions of ``version``'s family whose quick run is its own (itself included), in order."""
    own = quick_settings(version.name)
    return [v.name for v in registry.all_versions(version.family) if quick_settings(v.name) == own]


def ignored_differences(names: Sequence[str]) -> list[str]:
    """The settings in which the versions ``names`` differ (all of them among :data:`QUICK_IGNORES`)."""
    settings = [version_settings(registry.get(n)) for n in names]
    keys = dict.fromkeys(k for s in settings for k in s)
    return [k for k in keys if len({s.get(k) for s in settings}) > 1]


def full_run_figures(name: str) -> dict[str, float] | None:
    """Version ``name``'s full run on the test letter as ``report/results/networks.json`` records it."""
    import json

    if not NETWORKS_JSON.is_file():
        return None
    table = json.loads(NETWORKS_JSON.read_text())
    rows = table["move_networks"] if name.startswith("SL/") else table["evaluation"]
    return next((r for r in rows if r["name"] == name), None)


INDEPENDENT_JSON = registry.REPO_ROOT / "report" / "results" / "independent.json"
"""The selection sets (data/independent: ``games``, ``tactics``, ``endgames``) measured by ``knights results``:
versions were chosen on them, so they are not the final test set (read by :mod:`knights.evaluate.final`)."""
ALWAYS_LEVEL = "always level (0)"
STOCKFISH_1 = "Stockfish depth 1"
_RESULT_NAMES = {"material count": "material", STOCKFISH_1: "stockfish depth 1"}
CHOSEN_ON_SELECTION = {"EL/v23": "games", "EL/v25": "games"}
"""The versions whose change was kept for what it did on a selection set's quiet level positions (their library's
docstring, the first cell of the notebook, tells how): that set's name."""


def selection_figures(columns: Sequence[str]) -> dict[str, dict[str, float]]:
    """Each selection set's quiet-level MAE for the table's ``columns`` (a version, ``material count``, ``always
    level (0)``, ``Stockfish depth 1``) that ``report/results/independent.json`` records: set -> column -> MAE."""
    import json

    if not INDEPENDENT_JSON.is_file():
        return {}
    out: dict[str, dict[str, float]] = {}
    for st in json.loads(INDEPENDENT_JSON.read_text())["sets"]:
        rows = {r["name"]: r.get("quiet_level_mae") for r in st["evaluation"]}
        row = {c: rows[_RESULT_NAMES.get(c, c)] for c in columns if rows.get(_RESULT_NAMES.get(c, c)) is not None}
        if ALWAYS_LEVEL in columns and st.get("quiet_level", {}).get("always_level_mae") is not None:
            row[ALWAYS_LEVEL] = st["quiet_level"]["always_level_mae"]
        out[st["set"]] = row
    return out


def chosen_cell(version: registry.Version, parent: str, selection: dict[str, dict[str, float]]) -> str | None:
    """For a version kept for what it did on a selection set (:data:`CHOSEN_ON_SELECTION`): that set's figure
    beside its parent's and what the test letter's figures did meanwhile, all read from the results files."""
    name = CHOSEN_ON_SELECTION.get(version.name)
    row = selection.get(name or "", {})
    mine, theirs = full_run_figures(version.name), full_run_figures(parent)
    if name is None or version.name not in row or parent not in row or not mine or not theirs:
        return None

    def went(key: str, label: str, digits: int) -> str:
        a, b = theirs[key], mine[key]
        verdict = "better" if b < a else "worse" if b > a else "unchanged"
        return f"{label} from {a:.{digits}f} to {b:.{digits}f} ({verdict})"

    moves = [went(k, lab, d) for k, lab, d in (("mae", "its MAE", 3), ("quiet_level_mae", "its quiet-level MAE", 3),
                                                ("win_probability_error", "its win-probability error", 4))]
    worse = [m for m in moves if m.endswith("(worse)")]
    but = (" It was kept although some of its test-letter figures got slightly worse: the choice was made on the "
           "selection set, and the test letter only measures it." if worse else "")
    return (f"**Chosen on a selection set.** {version.name} was kept for its error on the quiet positions within a "
            f"pawn of level of `{name}` (the notebook's opening tells how it was chosen): {parent} "
            f"{row[parent]:.3f}, {version.name} {row[version.name]:.3f} in the table above. On the test letter `j` "
            f"meanwhile: {_names(moves)}.{but}")


def _names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


QUICK_SHOWS = {"network", "inputs", "target", "loss", "training", "start"}
"""The kinds of change a quick run can show (beside the parent's quick run)."""


def quick_comparison(version: registry.Version, parent: str, executed: NotebookNode | None) -> str | None:
    """This quick run's figure beside its parent's on the same held-out sample rows, read from the executed
    notebooks' tables: the parent as shipped (in this notebook's table) for a version that starts from its weights,
    else the parent's quick run (its notebook). None when a table is missing."""
    import nbformat

    rows = quick_figures(executed)
    mine = rows.get(f"{version.name} (this run)")
    what = "the share of legal top moves" if version.family == "SL" else "the MAE in pawns"
    differs = registry.entry(version.name).differs
    if "start" in differs and f"{parent} as shipped" in rows and mine:
        start = ("whose weights this quick run starts from where the layers match" if "network" in differs else
                 "where this quick run starts")
        return (f"On the held-out rows of the sample, {what}: {parent} as shipped, {start}, "
                f"{rows[f'{parent} as shipped']['mae']:.3f}; this quick run {mine['mae']:.3f} (the table below).")
    path = registry.get(parent).notebook
    theirs = quick_figures(nbformat.read(path, as_version=4) if path.is_file() else None).get(f"{parent} (this run)")
    if not mine or not theirs:
        return None
    return (f"In the quick runs, on the same held-out rows of the sample, {what}: {parent} {theirs['mae']:.3f} "
            f"(`{registry.repo_relative(path)}`), {version.name} {mine['mae']:.3f} (the table below).")


def change_cell(version: registry.Version, executed: NotebookNode | None = None) -> str:
    """A version notebook's "what it changes" cell: its parent and what changed (versions.toml), where that kind of
    change can show, this quick run beside its parent's (:func:`quick_comparison`, when its change can show there),
    the full runs' figures on the test letter (report/results/networks.json) and, when its quick run is another
    version's, which and why."""
    import json

    row = registry.entry(version.name)
    toml = f"source_{version.family}/versions.toml"
    parent = row.parent
    if parent:
        lines = [f"## What {version.name} changes, and where it shows\n",
                 f"From **{parent}** (`{toml}`): {row.changed}. Kind of change: {', '.join(row.differs)}.\n"]
        fmt = {"epochs": QUICK_EPOCHS, "batch": QUICK["batch_size"], "parent": parent,
               "weights": registry.repo_relative(registry.get(parent).weights())}
        archived = registry.entry(parent).status == registry.ARCHIVED
        lines += [f"* {KIND_SHOWS[kind + (', archived' if kind == 'start' and archived else '')].format(**fmt)}."
                  for kind in row.differs]
        quick = (quick_comparison(version, parent, executed)
                 if set(row.differs) & QUICK_SHOWS and parent not in same_quick_run(version) else None)
        lines += ["", quick] if quick else []
    else:
        lines = [f"## What {version.name} is, and where it shows\n",
                 f"A first network of its line (`{toml}`): {row.changed}. Nothing before it to compare with but "
                 "the baselines.\n"]
    figures = {n: full_run_figures(n) for n in ([parent] if parent else []) + [version.name]}
    if all(figures.values()):
        table = json.loads(NETWORKS_JSON.read_text())
        measured = table["data"]
        spec = SL_FIGURES if version.family == "SL" else EL_FIGURES
        el = version.family == "EL"
        level = {"quiet_level_mae": table["quiet_level"]["always_level_mae"]} if el else None
        if el:
            figures = {"material count": full_run_figures("material"), ALWAYS_LEVEL: level,
                       STOCKFISH_1: full_run_figures("stockfish depth 1"), **figures}
        header = " | ".join(["full runs", *figures])
        beside = (", beside counting material, always answering level (0) and Stockfish searching one ply "
                  "(depth 1)" if el else "")
        selection = selection_figures(list(figures)) if el else {}
        where = (f"; the last rows are the quiet positions within a pawn of level of the selection sets "
                 f"`{'`, `'.join(selection)}` (`{registry.repo_relative(INDEPENDENT_JSON)}`: the sets the choices "
                 "were made on, not the final test set)" if selection else "")
        lines += ["", f"The full runs on the {measured['rows']:,} positions of `{measured['folder']}`'s test letter "
                  f"`{measured['test_letters']}` (`{registry.repo_relative(NETWORKS_JSON)}`, written by "
                  f"`knights results`){beside}{where}:\n",
                  f"| {header} |", "|---" * (len(figures) + 1) + "|"]
        for key, label, digits in spec:
            cells = [f"{f[key]:.{digits}f}" if f and key in f else "-" for f in figures.values()]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        for set_name, by_column in selection.items():
            cells = [f"{by_column[n]:.3f}" if n in by_column else "-" for n in figures]
            lines.append(f"| MAE on quiet, level positions of `{set_name}`, a selection set (pawns) | "
                         + " | ".join(cells) + " |")
        mine = figures[version.name] or {}
        if el and level and mine.get("quiet_level_mae") is not None \
                and mine["quiet_level_mae"] > level["quiet_level_mae"]:
            lines += ["", f"On the test letter's quiet positions within a pawn of level, always answering level (0) "
                      f"errs less than {version.name}'s full run: {level['quiet_level_mae']:.3f} against "
                      f"{mine['quiet_level_mae']:.3f} pawns. There the metric rewards timidity, so the report reads it "
                      "beside the win-probability error."]
        chosen = chosen_cell(version, parent, selection) if parent and selection else None
        lines += ["", chosen] if chosen else []
    group = same_quick_run(version)
    if len(group) > 1:
        others = [n for n in group if n != version.name]
        where = ", ".join(f"`{registry.repo_relative(registry.get(n).notebook)}`" for n in others)
        differ = ", ".join(f"`{k}`" for k in ignored_differences(group))
        whose = (f"**Its quick run is the same run as {others[0]}'s, number for number**" if len(others) == 1 else
                 f"**Its quick run is the same run as those of {_names(others)}, number for number**")
        lines += ["", f"{whose} ({where}): {_names(group)} differ only in settings a quick run does not read "
                  f"({differ}), so on the committed sample, {QUICK_EPOCHS} epochs in batches of "
                  f"{QUICK['batch_size']:,}, they train the same network the same way from the same seed. The loss "
                  "per epoch and this run's row of the held-out table below are the same in each of those notebooks; "
                  "what sets them apart shows only in the full runs above."]
    return "\n".join(lines)


def quick_figures(nb: NotebookNode | None) -> dict[str, dict[str, float]]:
    """The held-out table of an executed EL version notebook (its ``cmp.metrics()`` output): row -> MAE and
    median error in pawns; empty when it has not run."""
    import re

    if nb is None:
        return {}
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.strip().endswith("cmp.metrics()"):
            for out in cell.get("outputs", []):
                text = out.get("data", {}).get("text/plain", "")
                block = text.split("\n\n")[0]
                return {m["row"].strip(): {"mae": float(m["mae"]), "median": float(m["median"])}
                        for m in re.finditer(r"^(?P<row>\S.*?)\s{2,}(?P<mae>-?\d+\.\d+)\s+(?P<median>-?\d+\.\d+)",
                                             block, re.MULTILINE)}
    return {}


def quick_reading_cell(version: registry.Version, executed: NotebookNode | None) -> str | None:
    """After the held-out table of an EL version notebook: where this quick run scores worse than counting
    material, say so with the table's figures, and why a quick run is too short for that design. None when it
    scores better (or has not run)."""
    from knights.learn.nets import parameter_count
    from knights.learn.nnue import SparseNet

    rows = quick_figures(executed)
    mine, material = rows.get(f"{version.name} (this run)"), rows.get("material count")
    level = rows.get("always 0.00")
    if not mine or not material or mine["mae"] <= material["mae"]:
        return None
    net = version.build()
    recipe = registry.recipe(version.name).get("epochs")
    full = full_run_figures(version.name)
    near = ""
    if level is not None and abs(mine["median"] - level["median"]) < 0.1 * level["median"]:
        near = (f", and its median error, {mine['median']:.3f}, is close to that of always saying 0.00 "
                f"({level['median']:.3f})")
    text = [f"**This quick run scores worse than counting material**: MAE {mine['mae']:.3f} pawns against "
            f"{material['mae']:.3f} in the table above{near}."]
    trained = full_run_rows(version.name)
    over = f" over {trained:,} positions" if trained else ""
    material_full = full_run_figures("material")
    if full and material_full:
        floor = material_full["mae"]
        verdict = (f"reaches an MAE of {full['mae']:.3f} on the test letter, below counting material's "
                   f"{floor:.3f}" if full["mae"] < floor else
                   f"does not beat counting material either (MAE {full['mae']:.3f} against {floor:.3f} on the "
                   "test letter)")
    else:
        verdict = "is measured in the table in the first section"
    if isinstance(net, SparseNet):
        steps = QUICK_EPOCHS * -(-quick_train_rows(version.name) // QUICK_BATCH)
        text.append(
            f"That is the quick run, not the design. An efficiently updatable network starts from random columns, "
            f"one for each of its {net.columns.shape[0]:,} piece-square features ({net.columns.numel():,} weights "
            f"before the head), and a feature's column learns only from the positions where that piece stands on "
            f"that square. The quick run gives it {steps} optimiser steps ({QUICK_EPOCHS} epochs over the sample's "
            f"{quick_train_rows(version.name):,} quiet training positions in batches of {QUICK['batch_size']:,}): most "
            "columns are still nearly random, and the answers stay near level. It also learns in win-probability "
            "space, where +3 and +8 are both nearly won, so the lopsided positions that dominate an MAE in pawns "
            f"(the buckets below) are the last it learns. Its full run, {recipe} epochs{over}, {verdict}.")
    else:
        text.append(f"A network of {parameter_count(net):,} parameters trained from random weights for "
                    f"{QUICK_EPOCHS} epochs on the sample's {quick_train_rows(version.name):,} training positions "
                    f"has not learned what counting material knows. Its full run, {recipe} epochs{over}, "
                    f"{verdict}.")
    return "\n\n".join(text)


def selection_note(doc: str) -> str:
    """For a library docstring that quotes the selection sets (``games``, ``tactics``, ``endgames``): a paragraph
    saying what they are, so that its figures are not read as the report's test figures. Empty otherwise."""
    import re

    if not re.search(r"``(games|tactics|endgames)``", doc):
        return ""
    return ("\n\n*The `games`, `tactics` and `endgames` figures above are selection-set figures*: those sets "
            "(`data/independent/`) are where versions were chosen, and the figures quoted above come from the runs "
            "that made the choice, not all of them from the report. The report's figures for each version on those "
            f"sets are in `{registry.repo_relative(INDEPENDENT_JSON)}` (the next section's table); the final test "
            "set, read only by `knights.evaluate.final`, is the one nothing was chosen on.")


def pilot_note(doc: str) -> str:
    """For a library docstring that quotes a pilot run (a short run made while choosing the design): a paragraph
    saying that no results file holds its figures. Empty otherwise."""
    import re

    if not re.search(r"\bpilot\b", doc, re.IGNORECASE):
        return ""
    return ("\n\n*The pilot figures above are from a short run made while the design was chosen*: no results file "
            "holds them, and nothing in the report reads them. This version's measured figures are its full run's, "
            f"in the next section's table (`{registry.repo_relative(NETWORKS_JSON)}`).")


def quick_buckets(nb: NotebookNode | None) -> dict[str, int]:
    """The positions in each |Stockfish| bucket of an executed EL version notebook's ``cmp.buckets()`` table."""
    import re

    if nb is None:
        return {}
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.strip() == "cmp.buckets()":
            for out in cell.get("outputs", []):
                text = out.get("data", {}).get("text/plain", "")
                block = text.split("\n\n")[0]
                return {m["bucket"]: int(m["rows"])
                        for m in re.finditer(r"^(?P<bucket>[<>=]*[\d-]+|mate)\s+(?P<rows>\d+)\s", block,
                                             re.MULTILINE)}
    return {}


def report_best_network() -> str | None:
    """The network alone with the lowest mean quiet-level MAE over the selection sets (the report's best network,
    as README's headline names it), or None without ``report/results/independent.json``."""
    import json

    if not INDEPENDENT_JSON.is_file():
        return None
    sets = json.loads(INDEPENDENT_JSON.read_text())["sets"]
    means: dict[str, list[float]] = {}
    for st in sets:
        for r in st["evaluation"]:
            if r["kind"] == "network" and re.fullmatch(r"EL/v\d+", r["name"]) and r.get("quiet_level_mae") is not None:
                means.setdefault(r["name"], []).append(r["quiet_level_mae"])
    full = {n: sum(v) / len(v) for n, v in means.items() if len(v) == len(sets)}
    return min(full, key=lambda n: (full[n], n)) if full else None


def shipped_roles(version: registry.Version, executed: NotebookNode | None) -> str:
    """The shipped networks of the held-out table, each with why it is there: the version's own full run, its parent
    as ``versions.toml`` records it, the version numbered before it (when that is not its parent) and the network
    alone with the lowest MAE on the test letter (:data:`knights.evaluate.names.DEFAULT_NETWORK`). The names are the
    executed table's rows; before it has run, the ones :func:`teach.reference_networks` picks."""
    from knights.evaluate.names import DEFAULT_NETWORK

    suffix = " as shipped"
    names = [r[: -len(suffix)] for r in quick_figures(executed) if r.endswith(suffix)]
    if not names:
        before = [f"{version.family}/v{version.number - 1}"] if version.number > 1 else []
        known = {v.name for v in registry.all_versions()}
        names = [n for n in dict.fromkeys([version.name, *before, DEFAULT_NETWORK]) if n in known]
    parent = registry.entry(version.name).parent
    out = []
    for name in names:
        why = []
        if name == version.name:
            why.append("this version, trained on the full data")
        if name == parent:
            why.append("its parent")
        elif name == f"{version.family}/v{version.number - 1}":
            why.append("the version numbered before it, not its parent: " + (
                f"{version.name} starts a new line" if not parent else f"its parent is {parent}"))
        if name == DEFAULT_NETWORK:
            why.append("the network alone with the lowest MAE on the test letter `j`")
        out.append(f"{name} ({'; and '.join(why)})" if why else name)
    return _names(out) if out else "none"


def compare_heading(template: str, executed: NotebookNode | None, version: registry.Version) -> str:
    """The held-out table's heading: the shipped networks beside this run and why each (:func:`shipped_roles`), the
    report's best network when it is another, and, when the quick run's bucket table is here, how many of its rows
    are lopsided (an MAE over all of them is mostly theirs)."""
    from knights.evaluate.names import DEFAULT_NETWORK

    best = report_best_network()
    report_best = (f" The report's best network, {best}, is another: the one with the lowest error on the selection "
                   "sets' quiet positions within a pawn of level." if best and best != DEFAULT_NETWORK else "")
    buckets = quick_buckets(executed)
    total = sum(buckets.values())
    lopsided = ""
    if buckets.get(">=6") and total:
        lopsided = (f"\n\nThe MAE below is over every held-out row, and {buckets['>=6']:,} of these {total:,} are 6 "
                    "pawns or more from level, where an error of a pawn or two rarely changes the move played. For the "
                    "positions that decide games read the `<1` row of the bucket table after the figure (the MAE "
                    "on positions within a pawn of level); the full runs' quiet-level MAE is in the first section's "
                    "table.")
    return template.format(shipped=shipped_roles(version, executed), report_best=report_best, lopsided=lopsided)


def full_run_rows(name: str) -> int | None:
    """How many rows version ``name``'s full run trained on (its metadata, ``models_*/vN.json``)."""
    import json

    meta = registry.get(name).meta_path()
    return json.loads(meta.read_text())["data"]["train"]["rows"] if meta.is_file() else None


@cache
def quick_train_rows(name: str) -> int:
    """How many rows a quick run of ``version`` trains on (the sample's training letters, its TRAIN_ON filter)."""
    from knights.data.cache import ChunkCache, load_encoded
    from knights.data.chunks import select_chunks
    from knights.learn.experiment import trained_rows

    rows = load_encoded(select_chunks(registry.repo_path(SAMPLE_DATA), QUICK_TRAIN), ChunkCache())
    return len(trained_rows(registry.get(name), {"train": rows})["train"])


def reproducibility_test(version: registry.Version) -> str:
    """The test that checks the version family's training is bit-identical from a seed."""
    from knights.learn.nets import ConvNet

    deep = version.family == "EL" and not isinstance(version.build(), ConvNet)
    return "tests/test_deep_versions.py" if deep else "tests/test_training.py"


def version_notebook(version: registry.Version, executed: NotebookNode | None = None) -> NotebookNode:
    """A version's ``train.ipynb``: its library's docstring, parameters, what the version changes and where that
    shows (:func:`change_cell`), what makes the version (its ``library.py`` and what changed from the one before),
    the data, the network, the run, and how the trained network errs beside its baselines.

    ``executed``: the notebook run quickly (default: the committed one, when it has outputs), whose held-out table
    says whether the quick run scores worse than counting material (:func:`quick_reading_cell`)."""
    if executed is None and version.notebook.is_file():
        import nbformat

        executed = nbformat.read(version.notebook, as_version=4)
    lib = version.library
    doc = (lib.__doc__ or version.name).strip()
    title, _, body = doc.partition("\n")
    models = f"models_{version.family}"
    run = f"{version.family}_v{version.number}"
    sl = version.family == "SL"
    shipped = f"the shipped network's (`{models}/RESULTS.md`{')' if sl else ', and below as a baseline)'}"
    quick = QUICK_NOTE.format(name=version.name, what=f"the network trains for {QUICK_EPOCHS} epochs",
                              shipped=shipped, full=f"`make notebook V={version.name}` (or set `quick = False`)")
    intro = (f"{body.strip()}{selection_note(body)}{pilot_note(body)}\n\nArchitecture, inputs and hyperparameters: "
             f"`{version.library_path.relative_to(registry.REPO_ROOT)}`. Training is reproducible: the "
             "same seed (`TrainConfig.seed`) and data give bit-identical weights on the same machine "
             f"(`{reproducibility_test(version)}` checks it).\n\n{quick}")
    parent = getattr(lib, "PARENT", None)
    start = f"; training starts from {parent}'s weights where the layers match" if parent else ""
    loss = ("the squared error against the one-hot of the move played, plus the penalty on positive outputs for "
            "illegal moves (`PENALTY` in library.py)" if sl else
            "in training, the cross-entropy between the predicted win-probability buckets and HL-Gauss targets "
            "(`knights/learn/buckets.py`); on validation, L1, the mean absolute error in pawns"
            if getattr(lib, "BUCKETS", None) is not None else
            "the squared difference between the win probability of the network's answer and that of Stockfish's "
            "(`knights/learn/targets.py`), on training and validation alike"
            if getattr(lib, "TARGET", "pawns") == "win_probability" else "L1, the mean absolute error in pawns")
    before = f"{version.family}/v{version.number - 1}"
    changes = (f"every setting that differs from {before}'s and the two files line by line"
               if before in {v.name for v in registry.all_versions(version.family)} else
               "nothing to compare it with: it is the first of its family")
    cells = [("markdown", change_cell(version, executed)),
             ("markdown", CARD_MD.format(name=version.name, changes=changes)), ("code", CARD),
             ("markdown", DATA_MD.format(target=" and with the move played, the move network's target" if sl else "")),
             ("code", DATA),
             ("markdown", f"## The network\n\nAs `library.py` builds it, before training (random weights{start})."),
             ("code", MODEL),
             ("markdown", f"## Training\n\nThe loss is {loss}. Train: averaged over each epoch while the weights "
                          "still move; validation: measured after it, on chunks the network never trains on."),
             ("code", RUN), ("code", PLOT)]
    if getattr(lib, "RANKING", None) is not None:
        cells += [("markdown", SIBLINGS_MD.format(weight=lib.RANKING.weight)), ("code", SIBLINGS)]
    for heading, code in SL_STEPS if sl else EL_STEPS:
        heading = compare_heading(heading, executed, version) if code == COMPARE and not sl else heading
        cells += [("markdown", heading)] if heading else []
        cells += [("code", code)]
        reading = quick_reading_cell(version, executed) if code == COMPARE and not sl else None
        cells += [("markdown", reading)] if reading else []
    parameters = PARAMETERS.format(name=version.name, family=version.family, models=models, run=run,
                                   epochs=QUICK_EPOCHS, q_train=QUICK["train"], q_val=QUICK["val"],
                                   q_test=QUICK["test"])
    return build_notebook(title, intro, parameters, cells)


# -- learner and ensemble notebooks ----------------------------------------------------------
COMMON_PARAMETERS = '''data_dir = None        # chunk folder; None: data/full (data/sample when quick)
train_letters = None   # None: "a-h" (the learners train on subsets of these letters)
val_letters = None     # None: "i" ("i,j" when quick)
test_letters = None    # None: "j", held out of every run ("k-m" when quick)
quick = False          # True: the committed sample and small subsets'''

LOAD = '''import matplotlib.pyplot as plt

from knights.lab.notebooks import teach
from knights.lab.ensemble import train as train_democracy
from knights.learn import learners

teach.setup()   # whole FENs in tables, figures at a modest resolution
plan = train_democracy.make_plan(quick, data_dir=data_dir, train=train_letters, val=val_letters, test=test_letters,
                                 {overrides})
data = train_democracy.load_data(plan)
print(f"train {{len(data.train):,}} rows, validation {{len(data.val):,}}, test {{len(data.test):,}}")'''

EVALUATE = '''pred = {{split: model.predict(learners.features(getattr(data, split).squares))
        for split in ("val", "test")}}
print(teach.fit_summary(record))
teach.metrics_table({{split: (pred[split], getattr(data, split).target) for split in pred}})'''

COMPARE_MD = ("## Position by position, beside the baselines\n\nOn the held-out test rows: the {label}, counting "
              "material (P=1, N=B=3, R=5, Q=9), always saying 0.00, always saying the training rows' mean, and the "
              "best shipped network (when it never trained on these rows). Then the {label} against Stockfish "
              "(hexbin, log colour scale; the red diagonal is perfect), its errors, and every evaluator's MAE by "
              "how lopsided the position is (|Stockfish| in pawns).")

COMPARE_LEARNER = '''cmp = teach.compare(data.test, {{"{label}": {pred}}}, train_target=data.train.target,
                    test_files=data.files["test"])
cmp.metrics()'''

WORKED_MD = ("## Worked positions\n\nFor each bucket of |Stockfish|, the position whose error is that bucket's "
             "median for the {label}: a typical position, not a chosen one.")


def comparison_cells(label: str, pred: str, title: str) -> list[tuple[str, str]]:
    """The teaching cells of a learner or the ensemble: the metrics beside the baselines,
    predicted against Stockfish, the buckets, worked positions (:mod:`knights.lab.notebooks.teach`)."""
    return [("markdown", COMPARE_MD.format(label=label)), ("code", COMPARE_LEARNER.format(label=label, pred=pred)),
            ("code", f'fig = cmp.plot("{title}: held-out test positions")'), ("code", "cmp.buckets()"),
            ("markdown", WORKED_MD.format(label=label)), ("code", WORKED)]


class LearnerNotebook(TypedDict):
    """What one learner's notebook says and runs."""

    title: str
    label: str       # its short name in tables and captions
    intro: str
    params: str      # its own parameters, after COMMON_PARAMETERS
    overrides: str   # the plan's keyword arguments built from them
    steps: list[tuple[str, str]]   # (markdown heading, code) after the data is loaded


LEARNERS: dict[str, LearnerNotebook] = {
    "knn": {
        "title": "K nearest neighbours (distance-weighted)",
        "label": "KNN",
        "intro": "KNN regression on the 394 flat features, neighbours weighted by 1/distance. K is chosen by "
                 "a sweep on a subset (validation MAE), not assumed: the original found K = 2.",
        "params": '''rows = None            # training rows of the final KNN; None: the plan's knn_rows
sweep_train_rows = None
sweep_val_rows = None
k_max = 40             # sweep K = 1..k_max''',
        "overrides": "knn_rows=rows, sweep_train_rows=sweep_train_rows, sweep_val_rows=sweep_val_rows, "
                     "ks=tuple(range(1, k_max + 1))",
        "steps": [("## K sweep", '''sweep = train_democracy.run_k_sweep(data, plan)
fig = learners.plot_k_sweep(sweep)
print(f"best K = {sweep.best_k} (validation MAE {min(sweep.mae):.3f})")'''),
                  ("## The KNN with the chosen K",
                   '''est, model, record = train_democracy.fit_learner("knn", data, plan, k=sweep.best_k)''')],
    },
    "random_forest": {
        "title": "Random forest",
        "label": "random forest",
        "intro": "20 trees, max_features 20, random_state 0, all cores, as the original. Each tree is capped "
                 "at `max_leaf_nodes` leaves so that the shipped forest keeps to its size budget. The shipped "
                 "form is plain node arrays with our own vectorised predict, checked against scikit-learn's.",
        "params": '''rows = None            # training rows; None: the plan's rf_rows
max_leaf_nodes = None  # None: the plan's (full: a cap for the size budget; quick: fully grown)''',
        "overrides": "rf_rows=rows, rf_max_leaf_nodes=max_leaf_nodes",
        "steps": [("## Fit", '''est, model, record = train_democracy.fit_learner("random_forest", data, plan)
print(f"{model.n_trees} trees, {model.n_nodes:,} nodes; own predict vs scikit-learn: "
      f"max |diff| {record.verify_max_abs_diff:.1e}")'''),
                  ("## Which squares matter", '''fig = teach.plot_square_importance(est.feature_importances_)''')],
    },
    "svr": {
        "title": "Kernel SVR (RBF)",
        "label": "kernel SVR",
        "intro": "A standard RBF-kernel SVR, as the paper describes (the original shipped a LinearSVR: see "
                 "linear.ipynb). Its fit grows about quadratically with the rows, so the subsample is sized "
                 "by timing small fits on this machine and extrapolating to a time budget.",
        "params": '''rows = None            # training rows; None: sized by timing ("auto"; quick: 3,000)
svr_budget_s = None    # fit-time budget in seconds for the "auto" size (default 240)
probe_rows = None      # sizes of the timed fits; None: (1000, 2000, 4000) (quick: 500, 1000, 2000)''',
        "overrides": "svr_rows=rows, svr_budget_s=svr_budget_s, svr_probe_rows=probe_rows",
        "steps": [("## Fit time against rows", '''probe = tuple(n for n in plan.svr_probe_rows if n <= len(data.train))
times = train_democracy.svr_fit_seconds(data, probe, plan.svr_C)
size, exponent = train_democracy.choose_svr_rows(times, plan.svr_budget_s, plan.svr_max_rows)
fig, ax = plt.subplots(figsize=(5, 3.2))
ax.loglog(list(times), list(times.values()), marker="o")
ax.set_xlabel("training rows"); ax.set_ylabel("fit seconds"); ax.grid(alpha=0.3)
print(f"fit time ~ rows^{exponent:.2f}: {size:,} rows for a {plan.svr_budget_s:.0f}s fit")
if plan.svr_rows == "auto":
    plan = plan.replace(svr_rows=size)'''),
                  ("## Fit", '''est, model, record = train_democracy.fit_learner("svr", data, plan)
print(f"{len(model.dual_coef):,} support vectors; own predict vs scikit-learn: "
      f"max |diff| {record.verify_max_abs_diff:.1e}")''')],
    },
    "linear": {
        "title": "Linear regression and the linear SVR",
        "label": "linear regression",
        "intro": "The plainest baselines: ordinary least squares, and the LinearSVR the original shipped "
                 "(epsilon-insensitive loss, so it aims at the absolute error), both on all training rows.",
        "params": '''rows = None            # training rows of both; None: all''',
        "overrides": "linear_rows=rows, linear_svr_rows=rows",
        "steps": [("## Linear SVR", '''est, model, record = train_democracy.fit_learner("linear_svr", data, plan)
svr_model = model'''),
                  ("## Linear regression",
                   '''est, model, record = train_democracy.fit_learner("linear", data, plan)'''),
                  ("## Both on the held-out test set",
                   '''teach.metrics_table({name: (m.predict(learners.features(data.test.squares)), data.test.target)
                     for name, m in (("linear_svr", svr_model), ("linear", model))})'''),
                  ("## What a piece is worth to each", '''labels = [f"{s}{p}" for s in "WB" for p in "PNBRQ"]
fig, ax = plt.subplots(figsize=(7, 3))
ax.bar([i - 0.2 for i in range(10)], svr_model.coef[384:], 0.4, label="linear SVR")
ax.bar([i + 0.2 for i in range(10)], model.coef[384:], 0.4, label="linear regression")
ax.set_xticks(range(10), labels); ax.set_ylabel("coefficient of the piece count"); ax.legend()
fig.tight_layout()''')],
    },
}

ENSEMBLE_PARAMETERS = ('networks = None        # EL versions to include, e.g. ["EL/v8"]; '
                       'None: the best network (DEFAULT_NETWORK) when trained\n'
                       '''models_dir = None      # where the networks' weights are; None: models_EL/
quick_network = None   # e.g. "EL/v8": train it for one epoch on the sample first (no trained network yet)
out_dir = None         # shipped models; None: ensemble/models/ (runs/quick/ensemble/ when quick)
results_md = None      # None: ensemble/RESULTS.md (runs/quick/ensemble/ when quick)
results_json = None    # None: report/results/ensemble.json (runs/quick/ensemble/ when quick)
knn_rows = None        # subset sizes; None: the plan's defaults
rf_rows = None
svr_rows = None
linear_rows = None
sweep_train_rows = None
sweep_val_rows = None''')

ENSEMBLE_RUN = '''from knights.lab.notebooks import teach
from knights.lab.ensemble import train as train_democracy
from knights.learn import learners

teach.setup()   # whole FENs in tables, figures at a modest resolution
plan = train_democracy.make_plan(
    quick, data_dir=data_dir, train=train_letters, val=val_letters, test=test_letters, knn_rows=knn_rows,
    rf_rows=rf_rows, svr_rows=svr_rows, linear_rows=linear_rows, linear_svr_rows=linear_rows,
    sweep_train_rows=sweep_train_rows, sweep_val_rows=sweep_val_rows)
result = train_democracy.train_all(plan, networks=networks, models_dir=models_dir, quick_network=quick_network,
                     out_dir=out_dir, results_md=results_md, results_json=results_json, progress=False)
shipped = result.report["shipped"]
print(f"shipped: {shipped['blend']}, {shipped['mb']:.2f} MB of files, loads in {shipped['load_seconds']:.2f} s, "
      f"{shipped['ms_per_decision']:.2f} ms a decision on one core")'''

ENSEMBLE_ROWS = '''# the same chunks (from the cache): the test rows, position by position
data = train_democracy.load_data(plan)'''


LEARNER_QUICK = QUICK_NOTE.format(name="{name}", what="the learners fit small subsets",
                                  shipped="what ships (`ensemble/RESULTS.md`)",
                                  full="`knights notebook {name}` (or set `quick = False`)")


def learner_notebook(name: str) -> NotebookNode:
    """``notebooks/<name>.ipynb`` for a classical learner of :data:`LEARNERS`."""
    spec = LEARNERS[name]
    intro = (spec["intro"] + "\n\nFeatures: `knights.features.planes.flat_features` (six +-1 planes flattened "
             "and the ten piece counts, 394 numbers). Library: `knights/learn/learners/`, "
             "`knights/lab/ensemble/train.py`.\n\n" + LEARNER_QUICK.format(name=name))
    cells = [("code", LOAD.format(overrides=spec["overrides"]))]
    for heading, code in spec["steps"]:
        cells += [("markdown", heading), ("code", code)]
    cells += [("markdown", "## Validation and held-out test"), ("code", EVALUATE.format()),
              *comparison_cells(spec["label"], 'pred["test"]', spec["title"])]
    return build_notebook(spec["title"], intro, COMMON_PARAMETERS + "\n" + spec["params"], cells)


def ensemble_notebook() -> NotebookNode:
    """``notebooks/ensemble.ipynb``: every member, every blend, what ships (``knights ensemble``)."""
    intro = ("Every classical learner and the EL network(s) behind one interface, weighted three ways "
             "(equal; the original's 0.9 network + 0.1 x (0.5 RF + 0.25 SVR + 0.25 LR); non-negative "
             "weights summing to one fitted on validation by minimising its MAE), compared on held-out "
             "chunks. The best blend within the budgets (25 ms a decision on one core, 30 MB) ships to "
             "`ensemble/models/`, the table to `ensemble/RESULTS.md` and `report/results/ensemble.json`. "
             "Same as `knights ensemble`.\n\n" + LEARNER_QUICK.format(name="ensemble")
             + " A quick run writes its models and tables to runs/quick/ensemble/, never over the shipped ones.")
    cells = [("code", ENSEMBLE_RUN),
             ("markdown", "## Every member and every blend on held-out data"),
             ("code", "teach.rounded(result.table())"),
             ("markdown", "## Weights"), ("code", 'fig = train_democracy.plot_weights(result.report["blends"])'),
             ("markdown", "## KNN's K sweep"), ("code", "fig = learners.plot_k_sweep(result.sweep)"),
             ("markdown", "## The shipped blend, position by position"), ("code", ENSEMBLE_ROWS),
             *comparison_cells("democracy", "result.ensemble.evaluate(data.test)", "The shipped democracy")[1:]]
    return build_notebook("Democracy: the weighted ensemble", intro,
                          COMMON_PARAMETERS + "\n" + ENSEMBLE_PARAMETERS, cells)


def inside_notebook() -> NotebookNode:
    """``notebooks/inside_the_networks.ipynb``: EL/v10 and EL/v13 opened up, every step by hand
    and asserted equal to the library's (:mod:`knights.lab.notebooks.inside`)."""
    from knights.lab.notebooks import inside

    return build_notebook(inside.TITLE, inside.INTRO, inside.PARAMETERS, inside.CELLS)


NOTEBOOKS: dict[str, Callable[[], NotebookNode]] = {
    **{name: partial(learner_notebook, name) for name in LEARNERS}, "ensemble": ensemble_notebook,
    "inside_the_networks": inside_notebook}
"""The notebooks of ``notebooks/`` by name (``notebooks/<name>.ipynb``): the learners, the
ensemble, and the one that opens the networks."""


def notebook_names() -> list[str]:
    """Every notebook the templates build: each version the registry lists, then the learners and the ensemble."""
    return [v.name for v in registry.all_versions()] + list(NOTEBOOKS)


def canonical_name(name: str) -> str:
    """What ``knights notebook NAME`` names: ``"EL/v8"`` (also ``"el/8"``), ``"knn"``, or a path
    (taken from the current directory when it is there, else from the repository root). A
    path to one of the project's notebooks becomes its name; another stays a path."""
    if name in NOTEBOOKS:
        return name
    if Path(name).suffix != ".ipynb":
        try:
            return registry.get(name).name
        except ValueError:
            raise ValueError(f"no notebook {name!r}: name a version (EL/v8, SL/v2), one of "
                             f"{', '.join(NOTEBOOKS)}, or a .ipynb path") from None
    given = Path(name)
    path = (given if given.is_absolute() or given.exists() else registry.REPO_ROOT / given).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"no notebook {name}")
    for known in notebook_names():
        if notebook_path(known).resolve() == path:
            return known
    return str(path)


def notebook_path(name: str) -> Path:
    """A notebook by name: a version (``"EL/v8"``), a learner or ``"ensemble"``, or a path."""
    if name in NOTEBOOKS:
        return NOTEBOOK_DIR / f"{name}.ipynb"
    if Path(name).suffix == ".ipynb":
        return registry.repo_path(name)
    return registry.get(name).notebook


def executed_path(name: str, quick: bool) -> Path:
    """Where a run of notebook ``name`` is kept: ``<repo>/runs/notebooks/EL_v8.ipynb``, or
    ``EL_v8.quick.ipynb`` for a quick run, so that the two never overwrite each other (another
    notebook: its path inside the repository, ``/`` as ``_``, without ``.ipynb``)."""
    key = canonical_name(name)
    if key.endswith(".ipynb"):
        key = registry.repo_relative(key).removesuffix(".ipynb").lstrip("/")
    return RUNS_DIR / f"{key.replace('/', '_')}{'.quick' if quick else ''}.ipynb"


def check_data(name: str, parameters: dict[str, Any]) -> None:
    """Refuse at once, in one line, a run whose chunk folder is not here (``data/full`` on a
    fresh clone): say what to run instead of letting the notebook fail in its first cell."""
    from knights.data.chunks import chunk_files

    quick = bool(parameters.get("quick"))
    given = parameters.get("data_dir")
    folder = registry.repo_path(str(given) if given else SAMPLE_DATA if quick else FULL_DATA)
    try:
        chunk_files(folder)
    except (FileNotFoundError, ValueError) as exc:
        where = registry.repo_relative(folder)
        if given:
            raise ValueError(f"{name}: data_dir {where} holds no chunks ({exc})") from None
        if quick:
            raise ValueError(f"{name}: the committed sample {where} is missing: restore it with "
                             "`git checkout -- data/sample` or regenerate it with `make sample`") from None
        raise ValueError(f"{name}: the full dataset {where} is not here: run `make data` to generate it "
                         "(about an hour on 2 cores), or add --quick for the committed sample "
                         f"(make notebook V={name} ARGS=--quick)") from None


def build(name: str, executed: NotebookNode | None = None) -> NotebookNode:
    """The template of notebook ``name`` (a version or one of :data:`NOTEBOOKS`). A version notebook's markdown
    reads its quick run's held-out table from ``executed`` (default: the committed notebook)."""
    return NOTEBOOKS[name]() if name in NOTEBOOKS else version_notebook(registry.get(name), executed)


def committed_parameters(name: str) -> dict[str, Any]:
    """What notebook ``name``'s committed outputs are run with: :data:`COMMITTED_PARAMETERS`, or nothing for a
    notebook without a ``quick`` parameter (``inside_the_networks``: the same run either way)."""
    return {} if name == "inside_the_networks" else COMMITTED_PARAMETERS


def with_outputs(template: NotebookNode, executed: NotebookNode) -> NotebookNode:
    """``template``'s cells with ``executed``'s outputs, its injected parameters and its metadata: how a notebook's
    markdown is rewritten without running it again. Its code must be the template's, cell for cell (else it must
    run: ``knights notebook --write --execute NAME``)."""
    import copy

    injected = [c for c in executed.cells if INJECTED in c.metadata.get("tags", [])]
    old = [c for c in executed.cells if c.cell_type == "code" and c not in injected]
    new = [c for c in template.cells if c.cell_type == "code"]
    if [c.source for c in old] != [c.source for c in new]:
        raise ValueError("its code is not the template's: run it (knights notebook --write --execute NAME)")
    out = copy.deepcopy(template)
    out.metadata = copy.deepcopy(executed.metadata)
    for cell, ran in zip([c for c in out.cells if c.cell_type == "code"], old, strict=True):
        cell.outputs, cell.execution_count = copy.deepcopy(ran.outputs), ran.execution_count
    if injected:
        at = next(i for i, c in enumerate(out.cells) if "parameters" in c.metadata.get("tags", []))
        out.cells.insert(at + 1, copy.deepcopy(injected[0]))
    return out


def rewrite_markdown(names: Sequence[str] | None = None, report: Callable[[str], None] | None = None) -> list[Path]:
    """Rewrite the committed notebooks' markdown from their templates and keep their outputs (:func:`with_outputs`):
    no cell runs. ``python -m knights.lab.notebooks.build --markdown [NAME ...]``; returns the notebooks changed."""
    import nbformat

    changed = []
    for name in [canonical_name(n) for n in names] if names else notebook_names():
        path = notebook_path(name)
        committed = nbformat.read(path, as_version=4)
        try:
            fresh = with_outputs(build(name, committed), committed)
        except ValueError as exc:
            raise ValueError(f"{registry.repo_relative(path)}: {exc}") from None
        if fresh != committed:
            nbformat.validate(fresh)
            nbformat.write(fresh, path)
            changed.append(path)
            if report:
                report(f"rewrote the markdown of {registry.repo_relative(path)}")
    return changed


def template_cells(nb: NotebookNode) -> list[str]:
    """The sources of a notebook's cells, papermill's injected parameters left out: what a
    committed notebook must share with its template."""
    return [c.source for c in nb.cells if INJECTED not in c.metadata.get("tags", [])]


def committed_form(nb: NotebookNode) -> NotebookNode:
    """An executed notebook as it is committed: papermill's and the kernel's timing and path
    metadata removed, the injected cell's id stable, so a rerun changes only what it computed."""
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        for key in ("papermill", "execution"):
            cell.metadata.pop(key, None)
        if not cell.metadata.get("tags", True):
            del cell.metadata["tags"]
        if INJECTED in cell.metadata.get("tags", []):
            cell.id = INJECTED
    return nb


def write_notebooks(names: Sequence[str] | None = None, *, execute: bool = False, progress: bool = True,
                    report: Callable[[str], None] | None = None) -> list[Path]:
    """(Re)write notebooks from their templates (default: every one, :func:`notebook_names`).

    ``execute``: then run each quickly (:func:`committed_parameters`, the executed copy in
    ``runs/notebooks/``) and write it back with its outputs: the committed form, whose markdown is built from
    those outputs (:func:`build`, :func:`with_outputs`); then every version notebook's markdown is rewritten, since
    a version's first section quotes its parent's quick run (:func:`rewrite_markdown`). ``report``
    gets a line a notebook.
    """
    import nbformat

    written = []
    for name in [canonical_name(n) for n in names] if names else notebook_names():
        if name.endswith(".ipynb"):
            raise ValueError(f"{name} is not built from a template: name a version, a learner or 'ensemble'")
        path = notebook_path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(build(name), path)
        line = f"wrote {registry.repo_relative(path)}"
        if execute:
            t0 = time.perf_counter()
            out = run_notebook(path, executed_path(name, quick=True), committed_parameters(name), progress=progress)
            executed = committed_form(nbformat.read(out, as_version=4))
            nbformat.write(with_outputs(build(name, executed), executed), path)   # its markdown reads its outputs
            what = "the outputs of a quick run" if committed_parameters(name) else "its outputs"
            line += f" with {what} ({time.perf_counter() - t0:.0f} s, {path.stat().st_size / 1e3:,.0f} kB)"
        if report:
            report(line)
        written.append(path)
    if execute:   # a version's first section quotes its parent's quick run: the children read the new outputs
        rewrite_markdown([v.name for v in registry.all_versions() if v.notebook.is_file()], report=report)
    return written


def parse_value(text: str) -> object:
    """``-p epochs 3`` -> 3, ``-p quick True`` -> True, other text stays a string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def run_notebook(path: str | Path, output: str | Path, parameters: dict[str, Any] | None = None,
                 progress: bool = True) -> Path:
    """Execute a notebook with papermill in the repository root and keep the executed copy at ``output``.

    The committed outputs and injected parameters are dropped first, so a run has only its
    own ``parameters`` (a committed notebook's ``quick = True`` never leaks into a full run).
    A failing cell is one line (``RuntimeError``) naming the cell and the executed copy,
    which holds the traceback.
    """
    import nbformat
    import papermill
    from papermill.exceptions import PapermillExecutionError

    nb = nbformat.read(path, as_version=4)
    nb.cells = [c for c in nb.cells if INJECTED not in c.metadata.get("tags", [])]
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        papermill.execute_notebook(nb, str(output), parameters=parameters or {}, kernel_name="python3",
                                   cwd=str(registry.REPO_ROOT), progress_bar=progress)
    except PapermillExecutionError as exc:
        first = (str(exc.evalue).strip().splitlines() or [""])[0]
        raise RuntimeError(f"{registry.repo_relative(path)} failed in cell [{exc.exec_count}]: {exc.ename}: {first} "
                           f"(the traceback is in {registry.repo_relative(output)})") from None
    return output


def run_named(name: str, parameters: dict[str, Any], progress: bool = True) -> tuple[Path, Path, float]:
    """``knights notebook NAME``: check the data, run the notebook into :func:`executed_path`;
    the notebook, the executed copy and the seconds it took."""
    key = canonical_name(name)
    src = Path(key) if key.endswith(".ipynb") else notebook_path(key)
    if not key.endswith(".ipynb"):
        check_data(key, parameters)
    t0 = time.perf_counter()
    out = run_notebook(src, executed_path(key, bool(parameters.get("quick"))), parameters, progress=progress)
    return src, out, time.perf_counter() - t0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m knights.lab.notebooks.build --markdown [NAME ...]``: :func:`rewrite_markdown`."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m knights.lab.notebooks.build",
                                     description="rewrite the committed notebooks' markdown from their templates, "
                                                 "keeping their outputs (nothing runs)")
    parser.add_argument("--markdown", action="store_true", required=True)
    parser.add_argument("names", nargs="*", help="versions (EL/v8), learners, ensemble, inside_the_networks; "
                                                 "default: every notebook")
    args = parser.parse_args(argv)
    changed = rewrite_markdown(args.names or None, report=print)
    print(f"{len(changed)} notebooks rewritten")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
