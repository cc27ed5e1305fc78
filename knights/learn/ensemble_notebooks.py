"""The learner and ensemble notebooks (``notebooks/*.ipynb``), written from one template.

Each notebook is thin: a title, a parameters cell (papermill's ``parameters`` tag,
first code cell), calls into :mod:`knights.evaluate.train_democracy` / :mod:`knights.learn.learners`, plots.
Regenerate them with ``python -m knights.learn.ensemble_notebooks``; run one with
``knights.learn.notebooks.run_notebook(path, out, {"quick": True})``.
"""

from __future__ import annotations

from pathlib import Path

from knights.learn import registry

NOTEBOOK_DIR = registry.REPO_ROOT / "notebooks"

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

PLOT = '''fig = T.plot_predictions(pred["test"], data.test.target, title="{title}: held-out test positions")'''

LEARNERS = {
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
                  ("## The KNN with the chosen K", '''est, model, record = T.fit_learner("knn", data, plan, k=sweep.best_k)''')],
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
                  ("## Both on the held-out test set", '''pd.DataFrame({name: T.regression_metrics(m.predict(L.features(data.test.squares)), data.test.target)
              for name, m in (("linear_svr", svr_model), ("linear", model))}).T'''),
                  ("## What a piece is worth to each", '''labels = [f"{s}{p}" for s in "WB" for p in "PNBRQ"]
fig, ax = plt.subplots(figsize=(7, 3))
ax.bar([i - 0.2 for i in range(10)], svr_model.coef[384:], 0.4, label="linear SVR")
ax.bar([i + 0.2 for i in range(10)], model.coef[384:], 0.4, label="linear regression")
ax.set_xticks(range(10), labels); ax.set_ylabel("coefficient of the piece count"); ax.legend()
fig.tight_layout()''')],
    },
}

ENSEMBLE_PARAMETERS = '''networks = None        # EL versions to include, e.g. ["EL/v8"]; None: the best network (DEFAULT_NETWORK) when trained
models_dir = None      # where the networks' weights are; None: models_EL/
quick_network = None   # e.g. "EL/v8": train it for one epoch on the sample first (no trained network yet)
out_dir = None         # shipped models; None: ensemble/models/ (a temporary folder when quick)
results_md = None      # None: ensemble/RESULTS.md (temporary when quick)
results_json = None    # None: report/results/ensemble.json (temporary when quick)
knn_rows = None        # subset sizes; None: the plan's defaults
rf_rows = None
svr_rows = None
linear_rows = None
sweep_train_rows = None
sweep_val_rows = None'''

ENSEMBLE_RUN = '''import matplotlib.pyplot as plt

from knights.learn import learners as L
from knights.evaluate import train_democracy as T

plan = T.make_plan(quick, data_dir=data_dir, train=train_letters, val=val_letters, test=test_letters,
                   knn_rows=knn_rows, rf_rows=rf_rows, svr_rows=svr_rows, linear_rows=linear_rows,
                   linear_svr_rows=linear_rows, sweep_train_rows=sweep_train_rows, sweep_val_rows=sweep_val_rows)
result = T.train_all(plan, networks=networks, models_dir=models_dir, quick_network=quick_network,
                     out_dir=out_dir, results_md=results_md, results_json=results_json)'''


def _base(title: str, intro: str, params: str):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell(params)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\n{intro}"), cell]
    return nb


def learner_notebook(name: str):
    import nbformat

    spec = LEARNERS[name]
    nb = _base(spec["title"], spec["intro"] + "\n\nFeatures: `knights.features.planes.flat_features` (six +-1 planes "
               "flattened and the ten piece counts, 394 numbers). Library: `knights/learn/learners.py`, "
               "`knights/evaluate/train_democracy.py`.", COMMON_PARAMETERS + "\n" + spec["params"])
    nb.cells.append(nbformat.v4.new_code_cell(LOAD.format(overrides=spec["overrides"])))
    for heading, code in spec["steps"]:
        nb.cells.append(nbformat.v4.new_markdown_cell(heading))
        nb.cells.append(nbformat.v4.new_code_cell(code))
    nb.cells += [nbformat.v4.new_markdown_cell("## Validation and held-out test"),
                 nbformat.v4.new_code_cell(EVALUATE.format()),
                 nbformat.v4.new_code_cell(PLOT.format(title=spec["title"]))]
    return nb


def ensemble_notebook():
    import nbformat

    nb = _base("Democracy: the weighted ensemble",
               "Every classical learner and the EL network(s) behind one interface, weighted three ways "
               "(equal; the original's 0.9 network + 0.1 x (0.5 RF + 0.25 SVR + 0.25 LR); non-negative "
               "weights summing to one fitted on validation by minimising its MAE), compared on held-out "
               "chunks. The best blend within the budgets (25 ms a decision on one core, 30 MB) ships to "
               "`ensemble/models/`, the table to `ensemble/RESULTS.md` and `report/results/ensemble.json`. "
               "Same as `python -m knights.evaluate.train_democracy`.", COMMON_PARAMETERS + "\n" + ENSEMBLE_PARAMETERS)
    nb.cells += [nbformat.v4.new_code_cell(ENSEMBLE_RUN),
                 nbformat.v4.new_markdown_cell("## Every member and every blend on held-out data"),
                 nbformat.v4.new_code_cell("result.table()"),
                 nbformat.v4.new_markdown_cell("## Weights"),
                 nbformat.v4.new_code_cell('fig = T.plot_weights(result.report["blends"])'),
                 nbformat.v4.new_markdown_cell("## KNN's K sweep"),
                 nbformat.v4.new_code_cell("fig = L.plot_k_sweep(result.sweep)"),
                 nbformat.v4.new_markdown_cell("## What ships"),
                 nbformat.v4.new_code_cell('result.report["shipped"]')]
    return nb


NOTEBOOKS = {**{name: (lambda n=name: learner_notebook(n)) for name in LEARNERS}, "ensemble": ensemble_notebook}


def notebook_path(name: str) -> Path:
    return NOTEBOOK_DIR / f"{name}.ipynb"


def write_notebooks() -> list[Path]:
    import nbformat

    NOTEBOOK_DIR.mkdir(parents=True, exist_ok=True)
    written = []
    for name, build in NOTEBOOKS.items():
        nbformat.write(build(), notebook_path(name))
        written.append(notebook_path(name))
    return written


if __name__ == "__main__":
    for p in write_notebooks():
        print(p)
