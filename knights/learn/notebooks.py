"""Version notebooks: write them from one template, run them with papermill.

Each ``train.ipynb`` is thin: a markdown title, a parameters cell (papermill's
``parameters`` tag), one call into :mod:`knights.learn.experiment`, a plot, a table.
``knights notebook EL/v8 [--quick] [-p name value ...]`` runs one and keeps the
executed copy under ``runs/notebooks/`` so the committed notebooks stay clean.
"""

from __future__ import annotations

import ast
from pathlib import Path

from knights.learn import registry

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


def version_notebook(version: registry.Version):
    import nbformat

    doc = (version.library.__doc__ or version.name).strip()
    title, _, body = doc.partition("\n")
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell(PARAMETERS.format(name=version.name, models=f"models_{version.family}"))
    params.metadata["tags"] = ["parameters"]
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"# {title}\n\n{body.strip()}\n\nArchitecture, inputs and "
                                      f"hyperparameters: `{version.library_path.relative_to(registry.REPO_ROOT)}`."),
        params,
        nbformat.v4.new_code_cell(RUN),
        nbformat.v4.new_markdown_cell("## Loss per epoch"),
        nbformat.v4.new_code_cell(PLOT),
        nbformat.v4.new_code_cell(TABLE),
        nbformat.v4.new_markdown_cell("## Held-out test set"),
        nbformat.v4.new_code_cell(TEST),
    ]
    for i, cell in enumerate(nb.cells):   # stable ids: rewriting an unchanged notebook changes nothing
        cell.id = f"cell-{i}"
    return nb


def write_notebooks() -> list[Path]:
    """(Re)write every version's ``train.ipynb`` from the template."""
    import nbformat

    written = []
    for version in registry.all_versions():
        nbformat.write(version_notebook(version), version.notebook)
        written.append(version.notebook)
    return written


def parse_value(text: str) -> object:
    """``-p epochs 3`` -> 3, ``-p quick True`` -> True, other text stays a string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def run_notebook(path: str | Path, output: str | Path, parameters: dict | None = None,
                 progress: bool = True) -> Path:
    """Execute a notebook with papermill in the repository root."""
    import papermill

    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    papermill.execute_notebook(str(path), str(output), parameters=parameters or {}, kernel_name="python3",
                               cwd=str(registry.REPO_ROOT), progress_bar=progress)
    return output


def notebook_path(name: str) -> Path:
    """A version name ("EL/v8") or a notebook path to the notebook file."""
    p = Path(name)
    if p.suffix == ".ipynb":
        return registry.repo_path(p)
    return registry.get(name).notebook
