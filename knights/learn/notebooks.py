"""Every notebook of the project, written from one builder and run with papermill.

Notebooks are thin: a title, a parameters cell (papermill's ``parameters`` tag, the
first code cell), calls into the library, plots. There are two kinds:

* each version's ``source_EL/vN/train.ipynb`` / ``source_SL/vN/train.ipynb``: one
  call into :func:`knights.learn.experiment.run_version`, its loss curve and tables;
* the learner and ensemble notebooks ``notebooks/{knn,random_forest,svr,linear,ensemble}.ipynb``:
  calls into :mod:`knights.learn.learners` and :mod:`knights.evaluate.train_democracy`.

``knights notebook --write`` rewrites all of them from the templates below (cell ids
are stable, so rewriting an unchanged notebook changes nothing);
``knights notebook EL/v8 [--quick] [-p name value ...]`` (or ``knn``, ``ensemble``, a
path) runs one and keeps the executed copy under ``runs/notebooks/``, so the committed
notebooks stay clean.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from knights.learn import registry

if TYPE_CHECKING:
    from nbformat import NotebookNode

NOTEBOOK_DIR = registry.REPO_ROOT / "notebooks"
"""Where the learner and ensemble notebooks live."""


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
train_letters = None   # None: the version's own letters (library.py DATA)
val_letters = None
test_letters = None    # None: "j", held out of every run
epochs = None          # None: the original's epoch count (library.py TRAIN)
batch_size = None
quick = False          # True: committed sample, one epoch, output to a temporary folder
out_dir = None         # None: {models}/ (a temporary folder when quick)
device = None          # None: CUDA, then Apple MPS, then CPU'''

RUN = '''from knights.learn.experiment import run_version, plot_history

result = run_version(version, data_dir=data_dir, train=train_letters, val=val_letters,
                     test=test_letters, epochs=epochs, batch_size=batch_size, quick=quick,
                     out_dir=out_dir, device=device)'''

PLOT = '''fig = plot_history(result)'''

TABLE = '''import pandas as pd

h = result.history
pd.DataFrame({"train loss": h.train_loss, "validation loss": h.val_loss,
              "rows/s": h.rows_per_second}, index=range(1, h.epochs + 1)).rename_axis("epoch")'''

TEST = '''result.meta["test"]'''


def version_notebook(version: registry.Version) -> NotebookNode:
    """A version's ``train.ipynb``: its library's docstring, parameters, the run."""
    doc = (version.library.__doc__ or version.name).strip()
    title, _, body = doc.partition("\n")
    intro = (f"{body.strip()}\n\nArchitecture, inputs and hyperparameters: "
             f"`{version.library_path.relative_to(registry.REPO_ROOT)}`. Training is reproducible: the "
             "same seed (`TrainConfig.seed`) and data give bit-identical weights on the same machine "
             "(`tests/test_training.py` checks it).")
    return build_notebook(title, intro, PARAMETERS.format(name=version.name, models=f"models_{version.family}"),
                          [("code", RUN), ("markdown", "## Loss per epoch"), ("code", PLOT), ("code", TABLE),
                           ("markdown", "## Held-out test set"), ("code", TEST)])


# -- learner and ensemble notebooks ----------------------------------------------------------
COMMON_PARAMETERS = '''data_dir = None        # chunk folder; None: data/full (data/sample when quick)
train_letters = None   # None: "a-h" (the learners train on subsets of these letters)
val_letters = None     # None: "i" ("i,j" when quick)
test_letters = None    # None: "j", held out of every run ("k-m" when quick)
quick = False          # True: the committed sample and small subsets'''

LOAD = '''import matplotlib.pyplot as plt
import pandas as pd

from knights.learn import learners as L
from knights.evaluate import train_democracy as T

plan = T.make_plan(quick, data_dir=data_dir, train=train_letters, val=val_letters, test=test_letters, {overrides})
data = T.load_data(plan)
print(f"train {{len(data.train):,}} rows, validation {{len(data.val):,}}, test {{len(data.test):,}}")'''

EVALUATE = '''pred = {{split: model.predict(L.features(getattr(data, split).squares)) for split in ("val", "test")}}
metrics = pd.DataFrame({{split: T.regression_metrics(pred[split], getattr(data, split).target)
                        for split in pred}}).T
print(record.as_dict())
metrics'''

PREDICTION_PLOT = ('''fig = T.plot_predictions(pred["test"], data.test.target, '''
                   '''title="{title}: held-out test positions")''')


class LearnerNotebook(TypedDict):
    """What one learner's notebook says and runs."""

    title: str
    intro: str
    params: str      # its own parameters, after COMMON_PARAMETERS
    overrides: str   # the plan's keyword arguments built from them
    steps: list[tuple[str, str]]   # (markdown heading, code) after the data is loaded


LEARNERS: dict[str, LearnerNotebook] = {
    "knn": {
        "title": "K nearest neighbours (distance-weighted)",
        "intro": "KNN regression on the 394 flat features, neighbours weighted by 1/distance. K is chosen by "
                 "a sweep on a subset (validation MAE), not assumed: the original found K = 2.",
        "params": '''rows = None            # training rows of the final KNN; None: the plan's knn_rows
sweep_train_rows = None
sweep_val_rows = None
k_max = 40             # sweep K = 1..k_max''',
        "overrides": "knn_rows=rows, sweep_train_rows=sweep_train_rows, sweep_val_rows=sweep_val_rows, "
                     "ks=tuple(range(1, k_max + 1))",
        "steps": [("## K sweep", '''sweep = T.run_k_sweep(data, plan)
fig = L.plot_k_sweep(sweep)
print(f"best K = {sweep.best_k} (validation MAE {min(sweep.mae):.3f})")'''),
                  ("## The KNN with the chosen K",
                   '''est, model, record = T.fit_learner("knn", data, plan, k=sweep.best_k)''')],
    },
    "random_forest": {
        "title": "Random forest",
        "intro": "20 trees, max_features 20, random_state 0, all cores, as the original. Each tree is capped "
                 "at `max_leaf_nodes` leaves so that the shipped forest keeps to its size budget. The shipped "
                 "form is plain node arrays with our own vectorised predict, checked against scikit-learn's.",
        "params": '''rows = None            # training rows; None: the plan's rf_rows
max_leaf_nodes = None  # None: the plan's (full: a cap for the size budget; quick: fully grown)''',
        "overrides": "rf_rows=rows, rf_max_leaf_nodes=max_leaf_nodes",
        "steps": [("## Fit", '''est, model, record = T.fit_learner("random_forest", data, plan)
print(f"{model.n_trees} trees, {model.n_nodes:,} nodes; own predict vs scikit-learn: "
      f"max |diff| {record.verify_max_abs_diff:.1e}")'''),
                  ("## Which squares matter", '''imp = est.feature_importances_
fig, ax = plt.subplots(1, 7, figsize=(14, 2.4))
for i, piece in enumerate("PNBRQK"):
    ax[i].imshow(imp[i * 64:(i + 1) * 64].reshape(8, 8), cmap="viridis")
    ax[i].set_title(piece); ax[i].axis("off")
ax[6].barh(range(10), imp[384:]); ax[6].set_yticks(range(10), [f"{s}{p}" for s in "WB" for p in "PNBRQ"])
ax[6].set_title("counts")
fig.tight_layout()''')],
    },
    "svr": {
        "title": "Kernel SVR (RBF)",
        "intro": "A standard RBF-kernel SVR, as the paper describes (the original shipped a LinearSVR: see "
                 "linear.ipynb). Its fit grows about quadratically with the rows, so the subsample is sized "
                 "by timing small fits on this machine and extrapolating to a time budget.",
        "params": '''rows = None            # training rows; None: sized by timing ("auto"; quick: 3,000)
svr_budget_s = None    # fit-time budget in seconds for the "auto" size (default 240)
probe_rows = None      # sizes of the timed fits; None: (1000, 2000, 4000) (quick: 500, 1000, 2000)''',
        "overrides": "svr_rows=rows, svr_budget_s=svr_budget_s, svr_probe_rows=probe_rows",
        "steps": [("## Fit time against rows", '''probe = tuple(n for n in plan.svr_probe_rows if n <= len(data.train))
times = T.svr_fit_seconds(data, probe, plan.svr_C)
size, exponent = T.choose_svr_rows(times, plan.svr_budget_s, plan.svr_max_rows)
fig, ax = plt.subplots(figsize=(5, 3.2))
ax.loglog(list(times), list(times.values()), marker="o")
ax.set_xlabel("training rows"); ax.set_ylabel("fit seconds"); ax.grid(alpha=0.3)
print(f"fit time ~ rows^{exponent:.2f}: {size:,} rows for a {plan.svr_budget_s:.0f}s fit")
if plan.svr_rows == "auto":
    plan = plan.replace(svr_rows=size)'''),
                  ("## Fit", '''est, model, record = T.fit_learner("svr", data, plan)
print(f"{len(model.dual_coef):,} support vectors; own predict vs scikit-learn: "
      f"max |diff| {record.verify_max_abs_diff:.1e}")''')],
    },
    "linear": {
        "title": "Linear regression and the linear SVR",
        "intro": "The plainest baselines: ordinary least squares, and the LinearSVR the original shipped "
                 "(epsilon-insensitive loss, so it aims at the absolute error), both on all training rows.",
        "params": '''rows = None            # training rows of both; None: all''',
        "overrides": "linear_rows=rows, linear_svr_rows=rows",
        "steps": [("## Linear SVR", '''est, model, record = T.fit_learner("linear_svr", data, plan)
svr_model = model'''),
                  ("## Linear regression", '''est, model, record = T.fit_learner("linear", data, plan)'''),
                  ("## Both on the held-out test set",
                   "pd.DataFrame({name: T.regression_metrics(m.predict(L.features(data.test.squares)), "
                   '''data.test.target)
              for name, m in (("linear_svr", svr_model), ("linear", model))}).T'''),
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
out_dir = None         # shipped models; None: ensemble/models/ (a temporary folder when quick)
results_md = None      # None: ensemble/RESULTS.md (temporary when quick)
results_json = None    # None: report/results/ensemble.json (temporary when quick)
knn_rows = None        # subset sizes; None: the plan's defaults
rf_rows = None
svr_rows = None
linear_rows = None
sweep_train_rows = None
sweep_val_rows = None''')

ENSEMBLE_RUN = '''import matplotlib.pyplot as plt

from knights.learn import learners as L
from knights.evaluate import train_democracy as T

plan = T.make_plan(quick, data_dir=data_dir, train=train_letters, val=val_letters, test=test_letters,
                   knn_rows=knn_rows, rf_rows=rf_rows, svr_rows=svr_rows, linear_rows=linear_rows,
                   linear_svr_rows=linear_rows, sweep_train_rows=sweep_train_rows, sweep_val_rows=sweep_val_rows)
result = T.train_all(plan, networks=networks, models_dir=models_dir, quick_network=quick_network,
                     out_dir=out_dir, results_md=results_md, results_json=results_json)'''


def learner_notebook(name: str) -> NotebookNode:
    """``notebooks/<name>.ipynb`` for a classical learner of :data:`LEARNERS`."""
    spec = LEARNERS[name]
    intro = (spec["intro"] + "\n\nFeatures: `knights.features.planes.flat_features` (six +-1 planes flattened "
             "and the ten piece counts, 394 numbers). Library: `knights/learn/learners/`, "
             "`knights/evaluate/train_democracy.py`.")
    cells = [("code", LOAD.format(overrides=spec["overrides"]))]
    for heading, code in spec["steps"]:
        cells += [("markdown", heading), ("code", code)]
    cells += [("markdown", "## Validation and held-out test"), ("code", EVALUATE.format()),
              ("code", PREDICTION_PLOT.format(title=spec["title"]))]
    return build_notebook(spec["title"], intro, COMMON_PARAMETERS + "\n" + spec["params"], cells)


def ensemble_notebook() -> NotebookNode:
    """``notebooks/ensemble.ipynb``: every member, every blend, what ships (``knights ensemble``)."""
    intro = ("Every classical learner and the EL network(s) behind one interface, weighted three ways "
             "(equal; the original's 0.9 network + 0.1 x (0.5 RF + 0.25 SVR + 0.25 LR); non-negative "
             "weights summing to one fitted on validation by minimising its MAE), compared on held-out "
             "chunks. The best blend within the budgets (25 ms a decision on one core, 30 MB) ships to "
             "`ensemble/models/`, the table to `ensemble/RESULTS.md` and `report/results/ensemble.json`. "
             "Same as `knights ensemble`.")
    cells = [("code", ENSEMBLE_RUN),
             ("markdown", "## Every member and every blend on held-out data"), ("code", "result.table()"),
             ("markdown", "## Weights"), ("code", 'fig = T.plot_weights(result.report["blends"])'),
             ("markdown", "## KNN's K sweep"), ("code", "fig = L.plot_k_sweep(result.sweep)"),
             ("markdown", "## What ships"), ("code", 'result.report["shipped"]')]
    return build_notebook("Democracy: the weighted ensemble", intro,
                          COMMON_PARAMETERS + "\n" + ENSEMBLE_PARAMETERS, cells)


NOTEBOOKS: dict[str, Callable[[], NotebookNode]] = {
    **{name: partial(learner_notebook, name) for name in LEARNERS}, "ensemble": ensemble_notebook}
"""The learner and ensemble notebooks by name (``notebooks/<name>.ipynb``)."""


def notebook_path(name: str) -> Path:
    """A notebook by name: a version (``"EL/v8"``), a learner or ``"ensemble"``, or a path."""
    if name in NOTEBOOKS:
        return NOTEBOOK_DIR / f"{name}.ipynb"
    if Path(name).suffix == ".ipynb":
        return registry.repo_path(name)
    return registry.get(name).notebook


def write_notebooks() -> list[Path]:
    """(Re)write every notebook from its template: each version's, then the learners' and the ensemble's."""
    import nbformat

    built = [(version.notebook, version_notebook(version)) for version in registry.all_versions()]
    built += [(notebook_path(name), build()) for name, build in NOTEBOOKS.items()]
    for path, nb in built:
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)
    return [path for path, _ in built]


def parse_value(text: str) -> object:
    """``-p epochs 3`` -> 3, ``-p quick True`` -> True, other text stays a string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def run_notebook(path: str | Path, output: str | Path, parameters: dict[str, Any] | None = None,
                 progress: bool = True) -> Path:
    """Execute a notebook with papermill in the repository root."""
    import papermill

    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    papermill.execute_notebook(str(path), str(output), parameters=parameters or {}, kernel_name="python3",
                               cwd=str(registry.REPO_ROOT), progress_bar=progress)
    return output
