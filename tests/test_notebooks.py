"""The notebooks: committed with the outputs of a quick run, built from their templates,
small and clean; ``knights notebook`` runs them into runs/notebooks/ from anywhere; the
teaching helpers (knights.lab.notebooks.teach) tell the truth about the rows they are given."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET

import chess
import nbformat
import numpy as np
import pytest

from knights.board.arrays import boards_from_arrays, material_balance
from knights.data.cache import ChunkCache, load_encoded
from knights.data.chunks import select_chunks
from knights.lab.notebooks import build as N
from knights.lab.notebooks import teach
from knights.learn import experiment, registry
from knights.learn.metrics import regression_metrics
from knights.learn.training import History

VERSIONS = registry.all_versions()
NAMES = N.notebook_names()
SAMPLE = registry.REPO_ROOT / experiment.SAMPLE_DATA
MACHINE_PATH = re.compile(r"(/tmp/|/work/|/home/|/root/|/Users/|/private/var/|[A-Z]:\\\\)")


def _outputs(nb: nbformat.NotebookNode) -> list[dict]:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


def _text(output: dict) -> str:
    if output.get("output_type") == "stream":
        return str(output.get("text", ""))
    if output.get("output_type") == "error":
        return "\n".join(output.get("traceback", []))
    return "\n".join(str(v) for k, v in output.get("data", {}).items() if not k.startswith("image/png"))


@pytest.fixture(scope="module")
def sample_rows():
    rows = load_encoded(select_chunks(SAMPLE, "k"), ChunkCache())
    return rows.take(slice(0, 600))


# ---------------------------------------------------------------------------- the committed notebooks
def test_every_registered_version_and_learner_has_a_notebook():
    assert NAMES[:len(VERSIONS)] == [v.name for v in VERSIONS]
    assert set(N.NOTEBOOKS) == {"knn", "random_forest", "svr", "linear", "ensemble", "inside_the_networks"}
    missing = [n for n in NAMES if not N.notebook_path(n).is_file()]
    assert not missing, f"build them: knights notebook --write --execute {' '.join(missing)}"


@pytest.mark.parametrize("name", NAMES)
def test_committed_notebook_is_its_template_executed_quickly(name):
    committed = nbformat.read(N.notebook_path(name), as_version=4)
    fresh = N.build(name)
    hint = (f"rebuild it: knights notebook --write --execute {name} (only the markdown changed: "
            f"python -m knights.lab.notebooks.build --markdown {name})")
    assert N.template_cells(committed) == N.template_cells(fresh), hint
    nbformat.validate(committed)
    params, injected = committed.cells[1], committed.cells[2]
    assert "parameters" in params.metadata.get("tags", [])
    assert sum(N.INJECTED in c.metadata.get("tags", []) for c in committed.cells) == bool(N.committed_parameters(name))
    if N.committed_parameters(name):
        assert N.INJECTED in injected.metadata.get("tags", []) and injected.id == N.INJECTED, hint
        assert "quick = True" in injected.source
    else:   # no quick parameter, nothing injected: it runs the same way always
        assert "quick =" not in params.source
    code = [c for c in committed.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), f"not every cell ran: {hint}"
    assert not [o for o in _outputs(committed) if o.get("output_type") == "error"]
    assert "papermill" not in committed.metadata
    assert all(not {"papermill", "execution"} & set(c.metadata) for c in committed.cells)


@pytest.mark.parametrize("name", NAMES)
def test_committed_notebook_is_small_clean_and_shows_its_model(name):
    path = N.notebook_path(name)
    assert path.stat().st_size < 1_000_000, f"{path.name} is {path.stat().st_size:,} bytes"
    nb = nbformat.read(path, as_version=4)
    outputs = _outputs(nb)
    assert not [o for o in outputs if o.get("output_type") == "stream" and o.get("name") == "stderr"]
    text = "\n".join(_text(o) for o in outputs)
    assert "IProgress" not in text and "it/s]" not in text and "batch/s" not in text
    found = MACHINE_PATH.search(text)
    assert not found, f"a machine's path in {path.name}: ...{text[max(0, found.start() - 80):found.end() + 80]}..."
    assert str(registry.REPO_ROOT) not in text
    kinds = {k for o in outputs for k in o.get("data", {})}
    assert {"image/png", "text/html"} <= kinds
    if name != "ensemble":
        assert "image/svg+xml" in kinds   # boards: the sample's and the worked positions
    if name in N.NOTEBOOKS:
        return
    assert re.search(r"\d{1,3}(,\d{3})+ trainable parameters", text)
    if name.startswith("EL/"):
        assert "MAE (pawns)" in text and "material count" in text and "|Stockfish|" in text
        tables = "\n".join(str(o["data"]["text/plain"]) for o in outputs if o.get("output_type") == "execute_result")
        assert not re.search(r"\d\.\d{5,}", tables), "unrounded numbers in the tables"


def test_version_notebooks_show_what_makes_their_version():
    """Each version notebook opens with its own library.py and what changed from the version before."""
    for version in VERSIONS:
        nb = nbformat.read(version.notebook, as_version=4)
        card = next(o for c in nb.cells if c.cell_type == "code" and "version_card" in c.source for o in c.outputs)
        text = card["data"]["text/plain"]
        assert registry.repo_relative(version.library_path) in text and "def build_model" in text
        before = f"{version.family}/v{version.number - 1}"
        assert (f"changed from {before}:" in text) == (version.number > 1), version.name
    cards = [teach.version_card(v.name).text for v in VERSIONS]
    assert len(set(cards)) == len(cards)
    v10 = teach.version_card("EL/v10").text
    assert "INPUTS.attacks: False -> True" in v10 and "TRAIN.schedule: 'constant' -> 'cosine'" in v10
    assert "+INPUTS = InputSpec(" in v10 and "-INPUTS = InputSpec(" in v10   # the line diff


def test_inside_the_networks_checks_every_step_by_hand():
    nb = nbformat.read(N.notebook_path("inside_the_networks"), as_version=4)
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    for step in ("register_forward_hook", "EvalTask(spec).loss", "WinProbTask(spec13).loss", "fit(theirs",
                 "accumulate(", "sparse.feature_index", "last.bias.grad", "opt.state[p][\"exp_avg\"]",
                 "for step, b in enumerate(iter_batches(train_rows"):
        assert step in source, step
    assert source.count("assert ") >= 12
    text = "\n".join(_text(o) for o in _outputs(nb))
    for shown in ("Conv2d      (256, 32, 8, 8)", "(flatten, cat)", "own knight on f3", "opponent knight on f3",
                  "weights after the step by hand equal fit's", "every updated accumulator equals the recomputed one",
                  "d loss / d (output bias) =", "loss on the batch before the step", "after Adam's first step",
                  "predicted change", "mean of the last ten steps", "m_hat", "sqrt(v_hat)", "step 2 / lr",
                  "the moment estimates by hand equal torch.optim.Adam's"):
        assert shown in text, shown
    # Adam's first step is sign descent (every weight that moved, by the rate); the second is not
    first, second = (re.search(rf"step {t}: \|step\| / lr .* median (\d\.\d+)", text) for t in (1, 2))
    assert first and second and float(first[1]) == 1 and float(second[1]) < 0.95
    curve = re.search(r"train loss: step 1 (\d+\.\d+), mean of the last ten steps (\d+\.\d+)", text)
    assert curve and float(curve[2]) < float(curve[1])   # the loop's loss falls
    # the planes, the accumulators' picture, the loop's loss curve
    assert sum("image/png" in o.get("data", {}) for o in _outputs(nb)) == 3


# ---------------------------------------------------------------------------- what each version notebook says
EL_VERSIONS = [v for v in VERSIONS if v.family == "EL"]


def _run_row(version: registry.Version) -> tuple[str, str]:
    """A committed version notebook's quick run: its loss per epoch and its own row of the held-out table."""
    nb = nbformat.read(version.notebook, as_version=4)
    run = next(c for c in nb.cells if c.cell_type == "code" and "run_version(" in c.source)
    history = run.outputs[-1]["data"]["text/plain"]
    losses = "\n".join(" ".join(line.split()[:3]) for line in history.splitlines()[2:])   # epoch, train, validation
    figures = N.quick_figures(nb)
    return losses, str(figures.get(f"{version.name} (this run)", ""))


def _markdown(version: registry.Version) -> str:
    return "\n".join(c.source for c in nbformat.read(version.notebook, as_version=4).cells if c.cell_type == "markdown")


def test_each_version_notebook_says_what_it_changed_from_the_versions_table():
    import json

    networks = json.loads(N.NETWORKS_JSON.read_text())
    for version in VERSIONS:
        row = registry.entry(version.name)
        text = _markdown(version)
        assert row.changed in text, version.name
        if row.parent:
            assert f"## What {version.name} changes, and where it shows" in text
            assert f"From **{row.parent}**" in text and f"Kind of change: {', '.join(row.differs)}." in text
        figures = {r["name"]: r for r in networks["move_networks" if version.family == "SL" else "evaluation"]}
        mine = figures[version.name]
        key, digits = ("legal_share", 3) if version.family == "SL" else ("mae", 3)
        assert f"| {mine[key]:.{digits}f} |" in text, f"{version.name}: its full run's figure is not shown"
        if row.parent and set(row.differs) & N.QUICK_SHOWS and row.parent not in N.same_quick_run(version):
            # where the change shows in a quick run: the parent's figure on the same sample rows, from its outputs
            shipped = N.quick_figures(nbformat.read(version.notebook, as_version=4)).get(f"{row.parent} as shipped")
            parents = N.quick_figures(nbformat.read(registry.get(row.parent).notebook, as_version=4))
            figure = shipped if "start" in row.differs and shipped else parents[f"{row.parent} (this run)"]
            assert f"{figure['mae']:.3f}" in text.split("## What makes")[0], version.name


def test_a_notebook_whose_quick_run_is_another_versions_says_so_and_it_is():
    """Versions whose quick runs read the same settings make the same run (EL/v1 = EL/v2, EL/v13 = v15 = v16, EL/v18 to
    v24); their notebooks say so, and the committed outputs agree: the same losses and the same held-out row, while
    every other pair of versions differs."""
    groups = {}
    for version in VERSIONS:
        groups.setdefault(tuple(N.same_quick_run(version)), []).append(version.name)
    shared = {g for g in groups if len(g) > 1}
    assert {("EL/v1", "EL/v2"), ("EL/v13", "EL/v15", "EL/v16")} <= shared
    assert tuple(f"EL/v{n}" for n in range(18, 25)) in shared
    runs = {v.name: _run_row(v) for v in VERSIONS}
    for version in VERSIONS:
        group = N.same_quick_run(version)
        text = _markdown(version)
        said = re.search(r"\*\*Its quick run is the same run as (.*?), number for number\*\*", text)
        assert bool(said) == (len(group) > 1), version.name
        for other in VERSIONS:
            if other.family == version.family and other.name != version.name:
                same = other.name in group
                assert (runs[other.name] == runs[version.name]) == same, (version.name, other.name)
                assert (said is not None and re.search(rf"\b{re.escape(other.name)}\b", said[1]) is not None) == same


def test_a_quick_run_worse_than_material_says_so_and_why():
    """The efficiently updatable networks trained from scratch (EL/v13, EL/v15 to EL/v24) score worse than counting
    material in a quick run: their notebooks say so with the table's own figures, and why; no other notebook does
    unless its table shows it."""
    from knights.learn.nnue import SparseNet

    for version in EL_VERSIONS:
        figures = N.quick_figures(nbformat.read(version.notebook, as_version=4))
        worse = figures[f"{version.name} (this run)"]["mae"] > figures["material count"]["mae"]
        text = _markdown(version)
        assert ("This quick run scores worse than counting material" in text) == worse, version.name
        sparse_from_scratch = isinstance(version.build(), SparseNet) and not version.library.PARENT
        if sparse_from_scratch:
            assert worse and "That is the quick run, not the design" in text, version.name
        if worse:
            mine = figures[f"{version.name} (this run)"]["mae"]
            assert f"MAE {mine:.3f} pawns against {figures['material count']['mae']:.3f}" in text


def test_where_it_shows_sets_each_version_beside_the_yardsticks_and_the_selection_sets():
    """The first section's table: the version beside counting material, always answering level and Stockfish at
    depth 1 on the test letter, then the quiet level positions of each selection set, every figure from the results
    files; a version kept for a selection set's figure says so, with what the test letter's figures did."""
    networks = json.loads(N.NETWORKS_JSON.read_text())
    sets = json.loads(N.INDEPENDENT_JSON.read_text())["sets"]
    depth1 = next(r for r in networks["evaluation"] if r["name"] == "stockfish depth 1")
    for version in EL_VERSIONS:
        row = registry.entry(version.name)
        first = _markdown(version).split("## What makes")[0]
        header = f"| full runs | material count | {N.ALWAYS_LEVEL} | {N.STOCKFISH_1} |"
        assert header in first, version.name
        assert f"| {networks['quiet_level']['always_level_mae']:.3f} | {depth1['quiet_level_mae']:.3f} |" in first
        for st in sets:
            mine = next(r for r in st["evaluation"] if r["name"] == version.name)["quiet_level_mae"]
            line = next(ln for ln in first.splitlines() if f"of `{st['set']}`, a selection set" in ln)
            assert line.endswith(f"| {mine:.3f} |") and f"| {st['quiet_level']['always_level_mae']:.3f} |" in line
        chosen = "**Chosen on a selection set.**" in first
        assert chosen == (version.name in N.CHOSEN_ON_SELECTION), version.name
        if chosen:
            mine, theirs = N.full_run_figures(version.name), N.full_run_figures(row.parent)
            assert mine and theirs and f"its MAE from {theirs['mae']:.3f} to {mine['mae']:.3f}" in first
    v25 = _markdown(registry.get("EL/v25")).split("## What makes")[0]
    assert "**Chosen on a selection set.**" in v25 and "(worse)" in v25   # EL/v25's j figures got worse
    assert "selection-set figures" in v25                                      # its opening's games figures


def test_the_held_out_table_names_its_criterion_and_its_lopsided_rows():
    from knights.evaluate.names import DEFAULT_NETWORK

    for version in EL_VERSIONS:
        text = _markdown(version)
        assert re.search(re.escape(DEFAULT_NETWORK) + r" \([^)]*the network alone with the lowest MAE on the test "
                         r"letter `j`\)", text), version.name
        buckets = N.quick_buckets(nbformat.read(version.notebook, as_version=4))
        assert buckets and f"{buckets['>=6']:,} of these {sum(buckets.values()):,} are 6 pawns or more" in text


def test_the_held_out_table_says_why_each_shipped_network_is_there():
    """Each shipped network of the held-out table is named once, with its role: the version itself, its parent as
    versions.toml records it, the version numbered before it when that is not its parent (EL/v13 starts a new
    line), the network with the lowest MAE on `j`."""
    for version in EL_VERSIONS:
        heading = next(c.source for c in nbformat.read(version.notebook, as_version=4).cells
                       if c.cell_type == "markdown" and c.source.startswith("## Held-out test rows"))
        names = [r.removesuffix(" as shipped") for r in N.quick_figures(nbformat.read(version.notebook, as_version=4))
                 if r.endswith(" as shipped")]
        assert names, version.name
        for name in names:
            assert len(re.findall(re.escape(name) + r" \(", heading)) == 1, (version.name, name)
        parent = registry.entry(version.name).parent
        if parent in names:
            assert f"{parent} (its parent" in heading, version.name
    v13 = _markdown(registry.get("EL/v13"))
    assert "EL/v12 (the version numbered before it, not its parent: EL/v13 starts a new line)" in v13
    assert "the previous version" not in v13


def test_a_version_that_always_level_beats_on_the_quiet_level_rows_says_so():
    networks = json.loads(N.NETWORKS_JSON.read_text())
    level = networks["quiet_level"]["always_level_mae"]
    for version in EL_VERSIONS:
        mine = N.full_run_figures(version.name)
        if not mine or mine.get("quiet_level_mae") is None or "| full runs |" not in _markdown(version):
            continue
        said = "always answering level (0) errs less than" in _markdown(version)
        assert said == (mine["quiet_level_mae"] > level), version.name
        if said:
            assert f"{level:.3f} against {mine['quiet_level_mae']:.3f} pawns" in _markdown(version)


def test_a_pilot_figure_of_a_docstring_is_marked_as_held_by_no_results_file():
    for version in EL_VERSIONS:
        doc = version.library.__doc__ or ""
        marked = "*The pilot figures above are from a short run" in _markdown(version)
        assert marked == bool(re.search(r"\bpilot\b", doc, re.IGNORECASE)), version.name
    assert "*The pilot figures above" in _markdown(registry.get("EL/v10"))


def test_rewriting_the_markdown_keeps_every_output(tmp_path):
    committed = nbformat.read(VERSIONS[0].notebook, as_version=4)
    fresh = N.with_outputs(N.build(VERSIONS[0].name, committed), committed)
    assert fresh == committed                     # the committed notebook is its template with its outputs
    stale = nbformat.read(VERSIONS[0].notebook, as_version=4)
    stale.cells = [c for c in stale.cells if not (c.cell_type == "markdown" and "and where it shows" in c.source)]
    assert N.with_outputs(N.build(VERSIONS[0].name, committed), stale) == committed   # the markdown comes back
    changed = nbformat.read(VERSIONS[0].notebook, as_version=4)
    next(c for c in changed.cells if c.cell_type == "code" and "run_version(" in c.source).source += "\n# edited"
    with pytest.raises(ValueError, match="not the template's"):
        N.with_outputs(N.build(VERSIONS[0].name, committed), changed)


def test_the_notebook_map_names_notebooks_that_exist():
    readme = (registry.REPO_ROOT / "notebooks" / "README.md").read_text()
    links = re.findall(r"\]\(([^)#\s]+)\)", readme)
    assert links
    for link in links:
        assert (registry.REPO_ROOT / "notebooks" / link).resolve().exists(), link
    first = re.findall(r"^\d+\. \*\*\[", readme, re.MULTILINE)
    assert 4 <= len(first) <= 6, "the map names 4-6 notebooks to open first"
    assert "](democracy.ipynb)" in readme and "RQ2" in readme     # the notebook of the democracy question
    assert len(readme.split()) < 900


@pytest.mark.slow   # a kernel start and two networks, about 15 s
def test_inside_the_networks_runs(tmp_path):
    executed = N.run_notebook(N.notebook_path("inside_the_networks"), tmp_path / "inside.ipynb", {}, progress=False)
    outputs = _outputs(nbformat.read(executed, as_version=4))
    assert not [o for o in outputs if o.get("output_type") == "error" or o.get("name") == "stderr"]


def test_plots_say_what_they_show(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from knights.learn.learners import plot_k_sweep
    from knights.learn.learners.knn import KSweep

    h = History(train_loss=[4.6, 4.2, 4.1], val_loss=[5.0, 4.7, 4.5], epoch_seconds=[1.0] * 3,
                rows_per_second=[1.0] * 3, best_epoch=3)
    weights = tmp_path / "v12.pt"
    fig = teach.plot_history(experiment.Result("EL/v12", None, h, {}, weights), tmp_path / "loss.png")  # type: ignore[arg-type]
    assert len(fig.axes) == 2 and "cross-entropy" in fig.axes[0].get_ylabel() and "L1" in fig.axes[1].get_ylabel()
    assert all(t == int(t) for ax in fig.axes for t in ax.get_xticks() if 1 <= t <= 3)
    fig = teach.plot_history(experiment.Result("EL/v10", None, h, {}, weights), tmp_path / "loss10.png")  # type: ignore[arg-type]
    assert len(fig.axes) == 1
    fig = plot_k_sweep(KSweep(list(range(1, 41)), [1.0] * 40, 100, 50, 0.1))
    assert len(fig.axes[0].get_xticklabels()) <= 12
    fig = teach.plot_square_importance(np.random.default_rng(0).random(394))
    maps = [ax for ax in fig.axes if ax.get_title() in ("pawn", "king")]
    assert [t.get_text() for t in maps[0].get_xticklabels()] == list("abcdefgh")
    assert [t.get_text() for t in maps[0].get_yticklabels()] == list("87654321")
    assert any(ax.get_ylabel() == "importance" for ax in fig.axes)   # the colour bar
    plt.close("all")


# ---------------------------------------------------------------------------- knights notebook
def test_executed_copies_go_under_the_repository_runs_folder_whatever_the_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(VERSIONS[0].source_dir)   # where JupyterLab starts a notebook's kernel
    runs = registry.REPO_ROOT / "runs" / "notebooks"
    assert N.executed_path("EL/v8", quick=False) == runs / "EL_v8.ipynb"
    assert N.executed_path("el/8", quick=True) == runs / "EL_v8.quick.ipynb"
    assert N.executed_path("knn", quick=True) == runs / "knn.quick.ipynb"
    # a path names the same notebook, from the cwd or from the repository root
    assert N.canonical_name("train.ipynb") == VERSIONS[0].name
    assert N.executed_path("source_EL/v8/train.ipynb", quick=False) == runs / "EL_v8.ipynb"
    assert N.executed_path(str(N.notebook_path("ensemble")), quick=True) == runs / "ensemble.quick.ipynb"
    other = tmp_path / "mine.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), other)
    out = N.executed_path(str(other), quick=False)
    assert out.parent == runs and out.name.endswith("mine.ipynb") and ".ipynb.ipynb" not in out.name
    with pytest.raises(ValueError, match="no notebook 'nope'"):
        N.canonical_name("nope")


def test_a_full_run_without_the_full_data_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    from knights.cli import main

    missing = tmp_path / "full"   # wherever data/full is today, the run is told it is not there
    monkeypatch.setattr(N, "FULL_DATA", str(missing))
    monkeypatch.setattr(N, "RUNS_DIR", tmp_path / "runs")   # its own: another worker's test writes runs/notebooks
    assert main(["notebook", "EL/v8"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("knights notebook: error: EL/v8:") and "make data" in err and "--quick" in err
    assert main(["notebook", "knn", "-p", "data_dir", str(missing)]) == 2
    assert "holds no chunks" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()   # nothing ran
    assert main(["notebook", "--execute"]) == 2
    assert "--execute goes with --write" in capsys.readouterr().err


def test_the_chunk_cache_is_the_repositorys_whatever_the_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KNIGHTS_CACHE", raising=False)
    assert ChunkCache().root == registry.REPO_ROOT / "data" / "cache"
    load_encoded(select_chunks(SAMPLE, "m"), ChunkCache())
    assert not (tmp_path / "data").exists()
    monkeypatch.setenv("KNIGHTS_CACHE", str(tmp_path / "mine"))
    assert ChunkCache().root == tmp_path / "mine"


def test_a_quick_run_writes_a_fresh_folder_under_runs_and_drops_its_checkpoint(tmp_path, monkeypatch):
    monkeypatch.setattr(experiment, "QUICK_DIR", tmp_path / "quick")
    stale = tmp_path / "quick" / "EL_v1" / "EL_v1.ckpt"
    stale.parent.mkdir(parents=True)
    stale.write_text("an earlier run's checkpoint: a quick run must not resume from it")
    result = experiment.run_version("EL/v1", quick=True, train="a", val="i", test="k", epochs=1, progress=False)
    assert result.weights == tmp_path / "quick" / "EL_v1" / "v1.pt" and result.weights.is_file()
    assert sorted(p.name for p in result.weights.parent.iterdir()) == ["v1.json", "v1.pt"]
    assert result.history.epochs == 1
    assert experiment.QUICK_DIR.is_relative_to(tmp_path)


@pytest.mark.slow   # two kernel starts
def test_run_notebook_names_a_failing_cell_in_one_line_and_keeps_the_traceback(tmp_path):
    nb = N.build_notebook("t", "a test", "fail = False", [("code", "assert not fail, 'told to fail'")])
    src = tmp_path / "tiny.ipynb"
    nbformat.write(nb, src)
    out = N.run_notebook(src, tmp_path / "ok.ipynb", {}, progress=False)
    assert json.loads(out.read_text())["cells"][2]["execution_count"] == 2
    with pytest.raises(RuntimeError) as err:
        N.run_notebook(src, tmp_path / "fail.ipynb", {"fail": True}, progress=False)
    message = str(err.value)
    assert "\n" not in message and "AssertionError: told to fail" in message and "fail.ipynb" in message
    executed = nbformat.read(tmp_path / "fail.ipynb", as_version=4)
    assert [o["ename"] for o in _outputs(executed) if o["output_type"] == "error"] == ["AssertionError"]
    injected = [c.source for c in executed.cells if N.INJECTED in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "fail = True" in injected[0]   # this run's parameters, once


def test_committed_form_strips_run_metadata_and_keeps_outputs():
    nb = N.build("EL/v1")
    nb.metadata["papermill"] = {"input_path": "/tmp/x.ipynb"}
    injected = nbformat.v4.new_code_cell("# Parameters\nquick = True\n")
    injected.metadata.update({"tags": [N.INJECTED], "papermill": {"duration": 1.0},
                              "execution": {"iopub.status.busy": "2024"}})
    nb.cells.insert(2, injected)
    nb.cells[3].metadata["tags"] = []
    nb.cells[4].outputs = [nbformat.v4.new_output("stream", text="kept")]
    clean = N.committed_form(nb)
    assert "papermill" not in clean.metadata and clean.cells[2].id == N.INJECTED
    assert clean.cells[2].metadata == {"tags": [N.INJECTED]} and "tags" not in clean.cells[3].metadata
    assert clean.cells[4].outputs[0]["text"] == "kept"
    assert N.template_cells(clean) == N.template_cells(N.build("EL/v1"))


# ---------------------------------------------------------------------------- the teaching helpers
def test_board_grid_draws_every_board_and_defines_each_piece_once():
    boards = [chess.Board(), chess.Board("8/8/8/4k3/8/8/4P3/4K3 w - - 0 1")]
    svg = teach.board_grid(boards, [["start", "+0.20"], ["pawn up"]], size=120,
                           arrows=[[(chess.E2, chess.E4, "green")], []])
    root = ET.fromstring(svg)
    ns = {"s": teach.SVG_NS}
    assert len(root.findall("s:svg", ns)) == 2
    ids = [g.get("id") for g in root.findall("s:defs/*", ns)]
    assert len(ids) == len(set(ids)) == 12   # every kind of piece, once, though both boards use kings and pawns
    assert [t.text for t in root.findall("s:text", ns)] == ["start", "+0.20", "pawn up"]
    assert svg._repr_svg_() == str(svg) and len(repr(svg)) < 60


def test_buckets_split_by_stockfish_magnitude():
    target = np.array([0.0, 0.99, -1.0, 2.99, 3.0, -5.99, 6.0, -10.0, 9.0], np.float32)
    assert teach.bucket_of(target).tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 3]
    assert [b[0] for b in teach.BUCKETS] == ["<1", "1-3", "3-6", ">=6"]


def test_comparison_measures_what_it_is_given(sample_rows):
    target = sample_rows.target
    noisy = target + np.random.default_rng(0).normal(0, 1, len(target)).astype(np.float32)
    cmp = teach.Comparison(sample_rows, {"perfect": target.copy(), "noisy": noisy,
                                         "material count": material_balance(sample_rows.squares)})
    m = cmp.metrics()
    assert list(m.index) == ["perfect", "noisy", "material count"]
    assert m.loc["perfect", "MAE (pawns)"] == 0 and m.loc["perfect", "sign agreement"] == 1
    expected = regression_metrics(noisy, target)
    assert m.loc["noisy", "MAE (pawns)"] == pytest.approx(expected["mae"], abs=5e-4)
    b = cmp.buckets()
    assert b["positions"].sum() == len(target) and (b["perfect"].fillna(0) == 0).all()
    mask = np.abs(target) >= 6
    assert b.loc[">=6", "noisy"] == pytest.approx(np.abs(noisy - target)[mask].mean(), abs=5e-4)
    boards, table = cmp.worked()
    assert list(table["|Stockfish|"]) == [lab for lab in b.index if b.loc[lab, "positions"] > 0]
    for row, sf in zip(table.index, table["Stockfish (pawns)"], strict=True):
        assert sf == pytest.approx(float(target[row]), abs=0.005)
        assert chess.Board(table.loc[row, "FEN"]).is_valid()
    assert boards.count("<svg") == len(table) + 1
    fig = cmp.plot("test")
    assert len(fig.axes) == 4   # hexbin, its colour bar, errors, buckets
    assert "prediction - Stockfish" in fig.axes[1].get_xlabel()   # the error's sign, said
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_baselines_and_the_networks_that_never_saw_the_rows(sample_rows, tmp_path):
    train_target = np.array([1.0, 2.0, 3.0], np.float32)
    base = teach.baselines(sample_rows, train_target)
    assert list(base) == ["material count", "always 0.00", "always the training mean (+2.00)"]
    assert (base["always the training mean (+2.00)"] == 2.0).all()
    # a network whose metadata says it trained on the sample's chunk k is no baseline on k's rows
    shutil.copy(registry.get("EL/v1").weights(), tmp_path / "v1.pt")
    meta = json.loads(registry.get("EL/v1").meta_path().read_text())
    meta["data"]["train"] = {"folder": experiment.SAMPLE_DATA, "letters": "k"}
    (tmp_path / "v1.json").write_text(json.dumps(meta))
    k, m = select_chunks(SAMPLE, "k"), select_chunks(SAMPLE, "m")
    assert teach.shipped_networks(["EL/v1", "EL/v1"], k, tmp_path) == []
    assert teach.shipped_networks(["EL/v1"], m, tmp_path) == ["EL/v1"]
    assert teach.shipped_networks(["EL/v1"], m, tmp_path / "empty") == []   # not trained there
    nets = teach.baselines(sample_rows, train_target, ["EL/v1"], tmp_path)
    assert np.isfinite(nets["EL/v1 as shipped"]).all() and len(nets["EL/v1 as shipped"]) == len(sample_rows)


def test_move_comparison_on_the_moves_played_and_random_legal_moves(sample_rows):
    rows = sample_rows.take(np.flatnonzero(sample_rows.move >= 0)[:200])
    cmp = teach.MoveComparison(rows, {"played": rows.move.astype(np.int64),
                                      "random": teach.random_legal_moves(rows, seed=1),
                                      "a1a1": np.zeros(len(rows), np.int64)})
    m = cmp.metrics()
    assert m.loc["played", "legal share"] == 1 and m.loc["played", "top move = move played"] == 1
    assert m.loc["random", "legal share"] == 1 and m.loc["a1a1", "legal share"] == 0
    chess_boards = boards_from_arrays(rows.squares, rows.white, rows.castling, rows.ep)
    random_moves = cmp.moves["random"]
    assert all(chess.Move(int(mv) // 64, int(mv) % 64) in b.legal_moves
               or chess.Move(int(mv) // 64, int(mv) % 64, promotion=chess.QUEEN) in b.legal_moves
               for b, mv in zip(chess_boards, random_moves, strict=True))
    svg, table = teach.MoveComparison(rows, {"a1a1": cmp.moves["a1a1"]}).worked()
    assert list(table["its move is"]) == ["illegal"] * 4 and svg.count("<svg") == len(table) + 1


def test_model_tables(tmp_path):
    net = teach.fresh_model("EL/v8")
    table = teach.parameter_table(net)
    total = sum(p.numel() for p in net.parameters())
    assert table.loc["total", "parameters"] == f"{total:,}"
    assert sum(int(v.replace(",", "")) for v in table["parameters"].iloc[:-1]) == total
    text = teach.describe_model("EL/v8", net)
    assert f"{total:,} trainable parameters" in text and "Conv2d" in text
    h = History(train_loss=[3.123456, 2.0], val_loss=[2.5, 1.987654], epoch_seconds=[1.26, 1.0],
                rows_per_second=[12345.6, 20000.0], best_epoch=2)
    df = teach.history_table(h)
    assert list(df.index) == [1, 2] and df.loc[1, "train loss"] == 3.1235 and df.loc[2, "rows/s"] == "20,000"
    assert list(df["kept"]) == ["", "yes"]


def test_data_sample_spreads_over_the_evaluations():
    sample = teach.data_sample(None, quick=True, n=5)
    sf = sample.table["Stockfish (pawns)"].to_list()
    assert len(sf) == 5 and sf == sorted(sf) and sf[0] < 0 < sf[-1]
    for fen in sample.table["FEN"]:
        assert chess.Board(fen).is_valid()
    assert sample.board.count("<svg") == 2 and "move played" in sample.board


# ---------------------------------------------------------------------------- running them
# one chunk to train on and one to choose on (2,500 rows each): every cell still runs, in half the time
QUICK_TEST = {"quick": True, "epochs": 1, "train_letters": "a", "val_letters": "i"}
FROM_ANOTHER_DIRECTORY = "EL/v1"
"""The version whose quick run ``knights notebook`` makes from another directory (it stands for its group)."""
RUN_FOR_ITS_GROUP = [v for v in VERSIONS if N.same_quick_run(v)[0] == v.name and v.name != FROM_ANOTHER_DIRECTORY]
"""One version of each group whose quick runs read the same settings: they make the same run, number for number
(:func:`~knights.lab.notebooks.build.same_quick_run`; the committed outputs are held to it above), from the same
template cells, so running the first of a group runs every cell the others would. What differs is the name, and
with it the shipped model each compares with: :func:`test_every_version_run_by_another_loads_its_shipped_model`."""


DEEP = ("EL/v11", "EL/v12")
LEARNING = {"batch_size": 128}
"""The deep versions (EL/v11, a residual CNN; EL/v12, residual blocks and a transformer with win-probability
buckets) are run to learn: one epoch on the quick run's own eight train chunks in batches of 128 (156 steps; the
quick runs' batches of 2,048 take ten) halves the error of predicting zero on the held-out sample."""


def check_quick_run(version: registry.Version, executed, out_dir, tmp_path) -> None:
    """An executed quick run: no error, nothing on standard error, its model saved under its name with its loss
    curve, loading (``weights_only``) into a network that answers finite values on the sample; an evaluator's
    file loads into the bot's evaluator, which reproduces the run's own error on the held-out sample."""
    nb = nbformat.read(executed, as_version=4)
    outputs = _outputs(nb)
    assert not [o for o in outputs if o.get("output_type") in ("error",)]
    assert not [o for o in outputs if o.get("name") == "stderr"]
    model, meta = version.load(out_dir)
    assert meta["quick"] is True and meta["version"] == version.name
    assert len(meta["history"]["train_loss"]) == len(meta["history"]["val_loss"]) == 1
    assert (out_dir / f"v{version.number}_loss.png").stat().st_size > 1000
    data = load_encoded(select_chunks(SAMPLE, "k"), ChunkCache(tmp_path / "c"))
    import torch

    with torch.no_grad():
        out = model(*version.library.INPUTS.tensors(data.take(slice(0, 64))))
    assert np.isfinite(out.numpy()).all()
    if version.family == "EL":
        from knights.evaluate.base import network_evaluator

        test = load_encoded(select_chunks(SAMPLE, "k-m"), ChunkCache(tmp_path / "c"))
        pred = network_evaluator(version.name, out_dir).evaluate(test)
        assert abs(float(np.mean(np.abs(pred - test.target))) - meta["test"]["mae"]) < 1e-3
        if version.name in DEEP:     # learnt: half the error of predicting zero
            assert meta["test"]["mae"] < 0.5 * float(np.mean(np.abs(test.target)))


@pytest.mark.slow
@pytest.mark.parametrize("version", RUN_FOR_ITS_GROUP, ids=[v.name for v in RUN_FOR_ITS_GROUP])
def test_notebook_runs_quick(version, tmp_path):
    out_dir = tmp_path / "models"
    parameters = {**QUICK_TEST, "out_dir": str(out_dir)}
    if version.name in DEEP:     # the quick run's own letters, in small batches
        del parameters["train_letters"], parameters["val_letters"]
        parameters.update(LEARNING)
    executed = N.run_notebook(version.notebook, tmp_path / "run.ipynb", parameters, progress=False)
    check_quick_run(version, executed, out_dir, tmp_path)


def test_every_version_run_by_another_loads_its_shipped_model():
    """What a version's notebook does that its group's run does not: it compares with its own shipped model, which
    loads (``weights_only``, checksum) into a network that answers finite values; an archived version ships none."""
    import torch

    others = [v for v in VERSIONS if v not in RUN_FOR_ITS_GROUP and v.name != FROM_ANOTHER_DIRECTORY]
    assert {"EL/v2", "EL/v15", "EL/v24"} <= {v.name for v in others}
    run = {v.name for v in RUN_FOR_ITS_GROUP}
    assert set(DEEP) <= run and N.same_quick_run(registry.get(FROM_ANOTHER_DIRECTORY))[0] == FROM_ANOTHER_DIRECTORY
    data = load_encoded(select_chunks(SAMPLE, "k"), ChunkCache()).take(slice(0, 64))
    shipped = [v for v in others if v.name not in registry.archived()]
    assert shipped
    for version in shipped:
        model, meta = version.load()
        assert meta["version"] == version.name
        with torch.no_grad():
            assert np.isfinite(model(*version.library.INPUTS.tensors(data)).numpy()).all(), version.name


@pytest.mark.slow
def test_knights_notebook_quick_from_another_directory(tmp_path, monkeypatch):
    """``knights notebook`` from any directory: the executed copy lands in runs/notebooks/, nothing in the
    directory it ran from, and the run is the quick run of its group (:data:`RUN_FOR_ITS_GROUP`)."""
    from knights.cli import main

    elsewhere, out_dir = tmp_path / "elsewhere", tmp_path / "models"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("KNIGHTS_CACHE", raising=False)
    out = N.RUNS_DIR / "EL_v1.quick.ipynb"             # FROM_ANOTHER_DIRECTORY's quick run
    out.unlink(missing_ok=True)
    args = [a for k, v in {**QUICK_TEST, "out_dir": str(out_dir)}.items() if k != "quick" for a in ("-p", k, str(v))]
    assert main(["notebook", FROM_ANOTHER_DIRECTORY, "--quick", *args]) == 0
    assert out.is_file() and list(elsewhere.iterdir()) == []
    nb = nbformat.read(out, as_version=4)
    assert "quick = True" in nb.cells[2].source and "epochs = 1" in nb.cells[2].source
    check_quick_run(registry.get(FROM_ANOTHER_DIRECTORY), out, out_dir, tmp_path)
    committed = nbformat.read(N.notebook_path(FROM_ANOTHER_DIRECTORY), as_version=4)
    assert N.template_cells(committed) == N.template_cells(N.build(FROM_ANOTHER_DIRECTORY))   # itself untouched
