"""The democracy notebook (``notebooks/democracy.ipynb``): the study's experiment on the committed sample, in minutes.

    python -m knights.lab.ensemble.notebook            # write the notebook and execute it in place

It reads the committed sample's test letter (``data/sample/Sample_j``: no network trained on its rows), asks the
six networks of ``sparse+quiesce`` judged where the captures end, builds democracies of them with
:class:`knights.evaluate.ensemble.Democracy` (equal weights, weights fitted on the first half of the rows, stacking),
chooses the best member on the first half, scores everything on the second half with paired standard errors against
that member, sets the report's final-set answer beside it, and draws the ambiguity decomposition
(:func:`knights.lab.ensemble.study.ambiguity`) and the members' error correlations. The full experiment is
:mod:`knights.lab.ensemble.study`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from knights.common import module_main
from knights.learn import registry

NOTEBOOK = registry.REPO_ROOT / "notebooks" / "democracy.ipynb"

CELLS: list[tuple[str, str]] = [
    ("md", """# When does a democracy beat its best member?

The project's one-ply bot plays a **democracy**: six small networks of one design (EL/v19 to EL/v24), each judging a
position where the captures end, averaged with equal weights (`sparse+quiesce`). This notebook runs the study's
experiment on the committed sample in a few minutes on a CPU:

* every member's error alone, on rows no network trained on (the sample's test letter, `Sample_j`), beside
  counting material and always answering level; the best member is chosen on the first half of the rows;
* democracies of the same six members, shaped like scikit-learn's ensembles
  (`knights.evaluate.ensemble.Democracy`): **equal** weights (a `VotingRegressor`), **fitted** weights
  (non-negative, summing to one, fitted on the first half of the rows) and **stacking** (a ridge meta-learner fitted
  on the first half), all scored on the second half against the best member, row by row, with a paired standard
  error;
* the sample's answer beside the report's, on the final test set;
* why the gain is what it is: the **ambiguity decomposition** (Krogh and Vedelsby). For weights summing to one and
  the blend $\\bar p = \\sum_i w_i p_i$, on every row
  $$(\\bar p - t)^2 = \\sum_i w_i (p_i - t)^2 - \\sum_i w_i (p_i - \\bar p)^2 ,$$
  the ensemble's squared error is the members' mean squared error minus their mean disagreement (the ambiguity).
  A democracy gains only as much as its members disagree; members that make the same errors cannot help each other.

The full study (every shipped network, a bag of one design, the classical learners, on the selection sets, then once
on the final test set) is `python -m knights.lab.ensemble.study`; its figures are in
`report/results/democracy.json`."""),
    ("code", """import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from knights.data.chunks import read_chunk
from knights.engine.judged import install_judge
from knights.engine.spec import SPARSE_DEMOCRACY
from knights.evaluate import ensemble as E
from knights.lab.ensemble.study import ambiguity, paired_wp
from knights.lab.results.tables import level_rows, quiet_rows
from knights.learn import registry
from knights.learn.metrics import win_probability_error

install_judge()   # members judged where the captures end: the compiled capture search
data, report = read_chunk(registry.REPO_ROOT / "data" / "sample" / "Sample_j")
X, y = E.encode(data), data.target.astype(np.float64)
half = len(y) // 2
fit_rows, test_rows = np.arange(half), np.arange(half, len(y))
calm = quiet_rows(data)
level = level_rows(data.target, calm)
print(f"{len(y):,} rows ({report.total_skipped} skipped); weights fitted on {half:,}, everything scored on "
      f"{len(test_rows):,}, {int(level[test_rows].sum()):,} of them quiet and within a pawn of level")"""),
    ("md", """## The members alone

Each network judged where the captures end, as the bot asks it. The *best member*, the yardstick every democracy
must beat, is chosen on the first half (the rows the weights are fitted on), like the report's best member, chosen
on the selection sets: chosen on the rows it is scored on, it would win by luck. Counting material and always
answering level stand beside them. Stockfish at depth 1, the report's third yardstick, is not here: the sample
carries no depth-1 evaluation, and this notebook asks no engine."""),
    ("code", """members = [E.Member(v, judged=True).fit() for v in SPARSE_DEMOCRACY]
values = np.stack([m.predict_pawns(X) for m in members])          # members x rows, pawns from White's side
material = E.Member("material").fit().predict_pawns(X)
scored = np.zeros(len(y), dtype=bool)
scored[test_rows] = True


def scores(pred, rows=test_rows):
    quiet_level = rows[level[rows]]
    return {"win-probability error": win_probability_error(pred[rows], y[rows]),
            "MAE (pawns)": float(np.abs(pred[rows] - y[rows]).mean()),
            "quiet within a pawn, MAE": float(np.abs(pred[quiet_level] - y[quiet_level]).mean())}


on_first_half = {m.name_: win_probability_error(v[fit_rows], y[fit_rows]) for m, v in zip(members, values)}
best = min(on_first_half, key=on_first_half.get)
best_values = values[[m.name_ for m in members].index(best)]
table = {m.name_: {"first half: win-probability error": on_first_half[m.name_], **scores(v)}
         for m, v in zip(members, values)}
table["counting material"] = {"first half: win-probability error": win_probability_error(material[fit_rows],
                                                                                          y[fit_rows]),
                              **scores(material)}
table["always level"] = {"first half: win-probability error": win_probability_error(np.zeros(half), y[fit_rows]),
                         **scores(np.zeros(len(y)))}
print(f"best member on the first half: {best}; the other columns score the second half")
pd.DataFrame(table).T.round(4)"""),
    ("md", """## Five democracies of the same six

Each is fitted on the first half and scored on the second, beside the best member chosen on the first half. The
last two columns are the democracy's error **minus** the best member's, row by row on the second half, and the
standard error of that mean (the rows' spread over the root of their number): **negative means the democracy errs
less**, and a difference within about two standard errors of 0 is no difference these rows can tell."""),
    ("code", """democracies = {
    "equal (pawns)": E.Democracy(members, weighting="equal", space="pawns"),
    "equal (win probability)": E.Democracy(members, weighting="equal", space="win_probability"),
    "fitted (pawns)": E.Democracy(members, weighting="fitted", space="pawns"),
    "fitted (win probability)": E.Democracy(members, weighting="fitted", space="win_probability"),
    "stacked (win probability)": E.Democracy(members, weighting="stacked", space="win_probability"),
}
predictions, weights = {}, {}
for name, dem in democracies.items():
    dem.fit(X[fit_rows], y[fit_rows])
    predictions[name] = dem.predict(X)
    (group,) = dem.coefficients().values()           # one group: no gate
    voted = dict(zip(group["members"], group["coef"]))   # a fitted weight of 0 leaves its member out
    weights[name] = [voted.get(m.name_, 0.0) for m in members]
rows = {name: scores(p) for name, p in predictions.items()}
rows[f"best member ({best})"] = scores(best_values)
rows["counting material"] = scores(material)
out = pd.DataFrame(rows).T
minus, se = "minus the best member (win prob.)", "paired standard error"
out[minus], out[se] = np.nan, np.nan
for name, p in {**predictions, "counting material": material}.items():
    paired = paired_wp(p, best_values, y, scored)
    out.loc[name, minus], out.loc[name, se] = paired["difference"], paired["standard_error"]
display(out.round(4))
for name in predictions:
    d, s = out.loc[name, minus], out.loc[name, se]
    verdict = "beats" if -d > 2 * s else "loses to" if d > 2 * s else "is within two standard errors of"
    print(f"{name:26s} {verdict} {best}: {d:+.4f} +- {s:.4f}")
pd.DataFrame(weights, index=[m.name_ for m in members]).round(3)"""),
    ("md", """### The sample against the report

The committed sample is small, and its answer can differ from the report's (section 7, "Does the democracy beat its
best member?", and `report/results/democracy.json`): here the weights are fitted on one half of a few thousand
rows and scored on the other half, far fewer rows than the final test set holds, so the standard error is wider;
the sample's positions come from other games than the final test set's (Stockfish games at random skill levels);
and the report's democracy was chosen among many, its weights fitted on the three selection sets with
cross-validation by game, before the final test set was read once. The report's figure, read from its results
file, beside this sample's; the last line is what choosing the best member in hindsight, on the scored rows
themselves, would do: a yardstick picked for its luck on exactly those rows."""),
    ("code", """import json

final = json.loads((registry.REPO_ROOT / "report" / "results" / "democracy.json").read_text())["final"]
against = final["chosen"]["paired_wp"]["best member on the selection sets"]
print(f"final test set, {final['set']['rows']:,} rows read once: the chosen democracy ({final['chosen']['key']}) "
      f"minus its best member on the selection sets ({against['reference']}): "
      f"{against['overall']['difference']:+.4f} +- {against['overall']['standard_error']:.4f} in win probability")
print(f"this sample, {len(test_rows):,} rows scored: " + "; ".join(
    f"{name} {out.loc[name, minus]:+.4f} +- {out.loc[name, se]:.4f}" for name in predictions))
hindsight = min((m.name_ for m in members), key=lambda n: table[n]["win-probability error"])
lucky = values[[m.name_ for m in members].index(hindsight)]
print(f"the best member chosen on the scored rows instead would be {hindsight}: " + "; ".join(
    f"{name} {p['difference']:+.4f} +- {p['standard_error']:.4f}"
    for name, p in ((name, paired_wp(pred, lucky, y, scored)) for name, pred in predictions.items())))"""),
    ("md", """## Why: the ambiguity decomposition

In the win-probability space (the scale the error is measured on), for the equal-weight democracy and the fitted
one: the members' weighted mean squared error, the ambiguity (their mean squared disagreement with the blend) and
the blend's own squared error, which is exactly the first minus the second."""),
    ("code", """t = E.to_space(y[test_rows], "win_probability")
P = E.to_space(values[:, test_rows], "win_probability")
parts = {}
for name in ("equal (win probability)", "fitted (win probability)"):
    w = np.asarray(weights[name], dtype=np.float64)
    parts[name] = ambiguity(P, t, w)
decomposition = pd.DataFrame(parts).T[["weighted_member_squared_error", "ambiguity", "ensemble_squared_error",
                                       "ambiguity_share", "identity_residual"]]
display(decomposition.style.format("{:.2e}"))

errors = P - t[None, :]
corr = np.corrcoef(errors)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
names = list(parts)
x = np.arange(len(names))
ax1.bar(x - 0.25, [parts[n]["weighted_member_squared_error"] for n in names], 0.25, label="members' mean error")
ax1.bar(x, [parts[n]["ambiguity"] for n in names], 0.25, label="ambiguity (disagreement)")
ax1.bar(x + 0.25, [parts[n]["ensemble_squared_error"] for n in names], 0.25, label="democracy's error")
ax1.axhline((errors ** 2).mean(axis=1)[[m.name_ for m in members].index(best)], color="k", ls="--", lw=1,
            label=f"best member's error ({best})")
ax1.set_xticks(x, names)
ax1.set_ylabel("mean squared error (win probability)")
ax1.set_title("ensemble error = mean member error - ambiguity")
ax1.legend(fontsize=8)
im = ax2.imshow(corr, vmin=np.floor(corr.min() * 20) / 20, vmax=1.0, cmap="viridis")
labels = [m.name_.replace("+quiesce", "") for m in members]
ax2.set_xticks(range(len(labels)), labels, rotation=45)
ax2.set_yticks(range(len(labels)), labels)
ax2.set_title("correlation of the members' errors")
fig.colorbar(im, ax=ax2)
fig.tight_layout()
off_diagonal = corr[np.triu_indices(len(members), 1)]
print(f"mean pairwise error correlation {off_diagonal.mean():.3f} (lowest {off_diagonal.min():.3f}); "
      f"the ambiguity is {parts['equal (win probability)']['ambiguity_share']:.1%} of the members' mean error")"""),
    ("md", """Read the two panels together: the more the members' errors are correlated (right), the smaller the
ambiguity is beside the members' mean error (left), and the less the democracy can gain on its members' average;
to beat its *best* member, the ambiguity must also exceed the gap between the best member and the average member.
Fitted weights move the blend towards the better members, so they close some of that gap, at the cost of fitting
weights that must then hold on rows they were not fitted on. The study measures the same on the selection sets and
once on the final test set, beside democracies of different designs (CNNs, classical learners, a bag of one design
differing only by seed): `report/results/democracy.json`."""),
]


def build() -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src) for kind, src in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def write_and_execute(args: argparse.Namespace) -> int:
    """Write :data:`NOTEBOOK` afresh from :data:`CELLS` and execute it in place (``make democracy-notebook``)."""
    NOTEBOOK.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(build(), NOTEBOOK)
    return subprocess.call([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--inplace",
                            "--ExecutePreprocessor.timeout=1200", str(NOTEBOOK)], cwd=registry.REPO_ROOT,
                           env={**os.environ, "PYTHONPATH": str(registry.REPO_ROOT)})   # this checkout's knights


def main(argv: list[str] | None = None) -> int:
    """``python -m knights.lab.ensemble.notebook``: it takes no options, so ``--help`` (or a stray argument) says
    what it does rather than overwriting the committed notebook."""
    what = f"rewrite {registry.repo_relative(NOTEBOOK)} from its cells and execute it in place (minutes, on the sample)"
    return module_main("knights.lab.ensemble.notebook", what, lambda parser: None, write_and_execute, argv)


if __name__ == "__main__":
    sys.exit(main())
