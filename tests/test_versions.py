"""Issue 55: the versions tables (source_EL/versions.toml, source_SL/versions.toml), weights that earn their
place, and a tracked tree that travels.

What is held here: the tracked tree stays within 48 MiB; the tables name every version once and say truly what
each changed (``differs`` is worked out again from the libraries and the recorded data); a shipped version is
played by a bot, opened by a notebook or re-measured by the report, and every version a bot plays is shipped; the
weights in git are exactly those of shipped and kept versions, each the bytes its table and metadata record;
an archived version asked for by name answers with the one command that rebuilds it; the recipe is read from
the table by ship-models and by the notebook's full run; and a quick run rebuilt on the committed sample is
bit for bit the recorded one (the rebuild CI can do without data/full).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from knights.engine import spec as bot_spec
from knights.evaluate import names as evaluator_names
from knights.learn import registry, versions
from knights.learn.store import sha256_file

ROOT = registry.REPO_ROOT
TABLE = registry.table()


def tracked(*paths: str) -> set[str]:
    done = subprocess.run(["git", "ls-files", "-z", "--", *paths], cwd=ROOT, capture_output=True, check=True)
    return {p for p in done.stdout.decode().split("\0") if p}


# -- the tree ---------------------------------------------------------------------------------------------------------
def test_the_tracked_tree_is_within_48_mib():
    sizes = versions.tracked_bytes()
    total = sum(sizes.values())
    top = ", ".join(f"{k} {v / 2**20:.1f} MiB" for k, v in list(sizes.items())[:5])
    assert total <= versions.TREE_LIMIT == 48 * 2**20, f"tracked files hold {total / 2**20:.1f} MiB ({top})"
    # counted as `git ls-files -z | xargs -0 du -cb` counts: every tracked file's bytes
    assert total == sum((ROOT / p).stat().st_size for p in tracked() if (ROOT / p).is_file())


def test_the_size_command_fails_above_its_limit(capsys):
    assert versions.main(["size", "--limit", "1000"]) == 1
    assert "OVER the limit" in capsys.readouterr().out
    assert versions.main(["size"]) == 0


# -- the tables -------------------------------------------------------------------------------------------------------
def test_every_version_has_one_row_and_every_row_a_version():
    assert list(TABLE) == [v.name for v in registry.all_versions()]
    for name, row in TABLE.items():
        assert row.parent is None or list(TABLE).index(row.parent) < list(TABLE).index(name), name
        assert row.changed and "\n" not in row.changed and len(row.changed) < 120, name
        assert row.recipe.get("epochs"), f"{name}: a recipe names its epochs"


def test_a_broken_row_is_refused_naming_the_file_and_the_version(tmp_path, monkeypatch):
    bad = tmp_path / "versions.toml"
    bad.write_text('[v1]\nparent = ""\nchanged = "x"\ndiffers = ["colour"]\nstatus = "shipped"\nused_by = []\n'
                   'sha256 = "' + "0" * 64 + '"\nrecipe = { epochs = 1 }\n')
    monkeypatch.setitem(registry.VERSION_TABLES, "SL", bad)
    registry._table.cache_clear()
    try:
        with pytest.raises(registry.VersionTableError, match=r"versions\.toml: \[v1\] differs names \['colour'\]"):
            registry.table("SL")
    finally:
        registry._table.cache_clear()


@pytest.mark.parametrize("name", [n for n, row in TABLE.items() if row.parent])
def test_differs_says_what_the_libraries_and_the_recorded_data_say(name):
    """``differs`` is worked out again from the version's and its parent's libraries, recipes and the data their
    metadata records: ["data"] alone means the same network, inputs, target, loss and training on other rows."""
    assert TABLE[name].differs == tuple(versions.differences(name))


def test_the_versions_that_differ_only_by_their_data_are_seen_at_once():
    only_data = [n for n, row in TABLE.items() if row.differs == ("data",)]
    assert {"EL/v19", "EL/v20", "EL/v21", "EL/v23", "EL/v24"} <= set(only_data)
    shown = versions.glance()
    for name in only_data:
        assert f"| {name} | {TABLE[name].parent} | **data only** |" in shown
    text = (ROOT / "docs" / "versions.md").read_text()
    assert shown in text, "docs/versions.md's table is stale: python -m knights.learn.versions table"


# -- a version earns its place ----------------------------------------------------------------------------------------
def democracy_members() -> set[str]:
    manifest = json.loads((registry.ENSEMBLE_MODELS / "democracy.json").read_text())
    return {m["version"] for m in manifest["members"] if m.get("kind") == "network"}


def notebook_opens(path: str, name: str) -> bool:
    nb = nbformat.read(ROOT / path, as_version=4)
    return any(f'registry.get("{name}")' in c.source for c in nb.cells if c.cell_type == "code")


def use_holds(name: str, kind: str, what: str) -> bool:
    """Whether the use ``kind:what`` the table claims for ``name`` is real."""
    if kind == "bot":
        return {"search": name == bot_spec.SEARCH_NETWORK,
                "one-ply": bot_spec.ONE_PLY_EVALUATOR == "sparse+quiesce" and name in bot_spec.SPARSE_DEMOCRACY,
                "democracy": name in democracy_members(),
                "fallback": name == evaluator_names.DEFAULT_NETWORK}[what]
    text = (ROOT / what).read_text()
    if kind == "notebook":
        return notebook_opens(what, name)
    if kind == "report":    # the report reads its re-measured row (by name, or in the table of every evaluator
        # on the selection sets): knights results needs its weights to measure it
        rows = json.loads((ROOT / "report" / "results" / "independent.json").read_text())["headline"]["quiet_level_mae"]
        every_row = "for name in ind.keys()" in text
        return f'ind["{name}"]' in text or (every_row and name in rows)
    return re.search(rf"[\"']{re.escape(name)}(\+\w+)?[\"']", text) is not None   # a test names it (EL/v8+threats too)


@pytest.mark.parametrize("name", list(TABLE))
def test_each_use_the_table_claims_is_real(name):
    for ref in TABLE[name].used_by:
        kind, _, what = ref.partition(":")
        assert kind != "bot" or what in registry.BOTS, ref
        assert use_holds(name, kind, what), f"{name}: {ref} is not so"


def test_a_shipped_version_is_played_by_a_bot_opened_by_a_notebook_or_needed_by_the_report():
    """The rule of docs/versions.md: shipped only for a bot, a notebook or the report; kept only for tests (until
    they move to shipped versions); anything else is archived."""
    for name, row in TABLE.items():
        kinds = {ref.partition(":")[0] for ref in row.used_by}
        if row.status == registry.SHIPPED:
            assert kinds & {"bot", "notebook", "report"}, f"{name} is shipped but no bot, notebook or report uses it"
        elif row.status == registry.KEPT:
            assert kinds == {"test"}, f"{name} is kept, so tests alone may use it: {row.used_by}"
        else:
            assert not kinds & {"bot", "notebook", "report"}, f"{name} is archived but used: {row.used_by}"


def test_every_version_a_bot_plays_or_a_notebook_opens_is_shipped():
    played = {bot_spec.SEARCH_NETWORK, evaluator_names.DEFAULT_NETWORK, *bot_spec.SPARSE_DEMOCRACY,
              *democracy_members()}
    for name in played:
        assert TABLE[name].status == registry.SHIPPED, f"a bot plays {name}"
    for name, ref in [(n, "bot:democracy") for n in democracy_members()] + [(n, "bot:one-ply")
                                                                              for n in bot_spec.SPARSE_DEMOCRACY]:
        assert ref in TABLE[name].used_by, f"{name}'s row does not say {ref}"
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for name in TABLE:
            if notebook_opens(str(path.relative_to(ROOT)), name):
                assert TABLE[name].status == registry.SHIPPED, f"{path.name} opens {name}"
                assert f"notebook:{path.relative_to(ROOT)}" in TABLE[name].used_by


def test_the_weights_in_git_are_exactly_the_shipped_and_kept_ones_and_the_recorded_bytes():
    in_git = {p for p in tracked("models_EL", "models_SL") if p.endswith(".pt")}
    assert in_git == {registry.repo_relative(registry.get(n).weights()) for n in registry.shipped()}
    for name, row in TABLE.items():
        version = registry.get(name)
        meta = json.loads(version.meta_path().read_text())
        assert meta["sha256"] == row.sha256, f"{name}: {version.meta_path().name} and the table disagree"
        assert registry.repo_relative(version.meta_path()) in tracked(registry.repo_relative(version.meta_path()))
        if row.in_git:
            assert sha256_file(version.weights()) == row.sha256, name
        ignored = subprocess.run(["git", "check-ignore", "-q", registry.repo_relative(version.weights())], cwd=ROOT,
                                 check=False).returncode == 0
        assert ignored == (not row.in_git), f"{name}: .gitignore must list exactly the archived versions' weights"


def test_no_raw_data_file_over_20_mb_is_tracked():
    big = [p for p in tracked() if (ROOT / p).is_file() and (ROOT / p).stat().st_size > 20_000_000]
    assert not big


# -- asking for an archived version -----------------------------------------------------------------------------------
@pytest.fixture
def bare_models(tmp_path, monkeypatch):
    """A checkout without any weights: every version's weights path points into an empty folder."""
    monkeypatch.setattr(registry.Version, "weights",
                        lambda self, models_dir=None: tmp_path / self.family / f"v{self.number}.pt")
    return tmp_path


def test_an_archived_version_asked_for_by_name_names_the_one_command(bare_models):
    from knights.engine.build import resolve as resolve_bot
    from knights.engine.spec import parse
    from knights.evaluate.names import EvaluatorError, resolve_name

    def resolve_play_name(name: str, here: list[str]) -> str:
        return str(resolve_bot(parse(name), here).evaluator)

    name = registry.archived("EL")[0]
    with pytest.raises(registry.MissingWeights, match=rf"{name} is archived.*`make version V={name}`") as err:
        registry.get(name).load()
    assert "\n" not in str(err.value)
    for resolve in (resolve_name, resolve_play_name):     # knights play --evaluator, the UCI option, the web page
        with pytest.raises(EvaluatorError, match=rf"`make version V={name}` rebuilds them"):
            resolve(name.lower().replace("/v", "/"), ["material"])
    kept = registry.shipped("EL")[-1]    # a committed version's missing weights: git has them
    with pytest.raises(FileNotFoundError, match=r"are missing: they are committed, so `git checkout -- "):
        registry.get(kept).load()
    with pytest.raises(EvaluatorError, match="not trained or not shipped"):
        resolve_name(kept, ["material"])


def test_an_archived_version_whose_checksum_was_kept_comes_back_from_git_history(bare_models):
    name = next(n for n, row in TABLE.items() if row.weights_commit)
    row = TABLE[name]
    here = subprocess.run(["git", "cat-file", "-e", f"{row.weights_commit}^{{commit}}"], cwd=ROOT, check=False)
    if here.returncode:
        pytest.skip(f"a shallow clone: {row.weights_commit[:9]}, which holds {name}'s weights, is not here")
    said: list[str] = []
    rebuilt = versions.rebuild(name, report=said.append)    # make version: restored, not retrained
    path = rebuilt.installed
    assert rebuilt.matches and path == registry.get(name).weights() and sha256_file(path) == row.sha256
    assert len(said) == 1 and "restored from git history" in said[0] and "equals the recorded checksum" in said[0]
    version = registry.get(name)
    shutil.copy(ROOT / registry.FAMILIES[version.family][1] / f"v{version.number}.json", path.with_suffix(".json"))
    model, _ = registry.get(name).load()      # the committed metadata's checksum accepts them
    assert sum(p.numel() for p in model.parameters()) > 0
    rerecorded = next(n for n, r in TABLE.items() if r.rebuilt)
    with pytest.raises(versions.RebuildError, match=rf"re-recorded.*`make version V={rerecorded}`"):
        versions.restore(rerecorded)


# -- one recipe -------------------------------------------------------------------------------------------------------
def test_ship_models_trains_the_tables_recipes():
    from knights.lab.notebooks.ship import RUNS

    assert {name: row.recipe for name, row in TABLE.items()} == RUNS
    assert RUNS["SL/v1"] == {"epochs": 1, "batch_size": 64, "train": "every 26th except j",
                             "val": "every 25th except j"}


@pytest.mark.parametrize("name", ["EL/v1", "SL/v2"])
def test_the_notebooks_full_run_trains_the_recipe_and_a_quick_run_the_sample(name, monkeypatch):
    """The committed notebook's parameters and run cell, executed with run_version recording what it is asked:
    the full run asks for the table's recipe, the quick run for the quick settings."""
    nb = nbformat.read(registry.get(name).notebook, as_version=4)
    params = next(c.source for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    run = next(c.source for c in nb.cells if c.cell_type == "code" and "run_version(" in c.source)
    asked: list[dict] = []

    class Teach:
        QUICK_EPOCHS = 3

        @staticmethod
        def history_table(history):
            return history

    for quick in (False, True):
        scope = {"run_version": lambda version, **kw: asked.append({"version": version, **kw}) or
                 type("R", (), {"history": None})(), "teach": Teach}
        exec(params, scope)
        scope["quick"] = quick
        exec(run, scope)
    full, quick_run = asked
    recipe = TABLE[name].recipe
    assert full["epochs"] == recipe["epochs"] and full["batch_size"] == recipe.get("batch_size")
    assert (full["train"], full["val"]) == (recipe.get("train"), recipe.get("val")) and not full["quick"]
    assert quick_run["quick"] and quick_run["epochs"] == 3 and quick_run["train"] is None


# -- rebuilding -------------------------------------------------------------------------------------------------------
def test_reading_the_tables_imports_no_torch():
    code = ("import sys; from knights.learn import registry; registry.table(); registry.recipe('EL/v2'); "
            "registry.missing_weights('EL/v2'); assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_a_rebuild_refuses_data_that_is_not_what_the_version_trained_on(tmp_path, monkeypatch):
    from knights.learn import experiment

    name = "EL/v2"   # trains on data/full's chunks a, validates on b
    monkeypatch.setattr(experiment, "FULL_DATA", str(tmp_path / "full"))
    with pytest.raises(versions.RebuildError, match=r"EL/v2 trains on data/full, which is not here: `make data`"):
        versions.data_check(name)
    (tmp_path / "full").mkdir()
    for letter, sample in (("a", "Sample_a"), ("b", "Sample_b"), ("j", "Sample_c")):
        shutil.copy(ROOT / "data" / "sample" / sample, tmp_path / "full" / f"Chess_Gen_{letter}a")
    with pytest.raises(versions.RebuildError, match=r"EL/v2: the train chunks in .* are not the ones it trained on"):
        versions.data_check(name)


@pytest.mark.slow   # a short training run on the committed sample in its own process (seconds to a minute)
@pytest.mark.parametrize("name", [n for n, row in TABLE.items() if row.quick_sha256])
def test_a_quick_rebuild_is_bit_for_bit_the_recorded_one(name):
    """What CI rebuilds without data/full: the version's quick run on the committed sample, in a fresh process
    under the rebuild's environment (one thread, AVX2 kernels), equals the quick checksum recorded for this CPU.
    The promise holds on x86-64 CPUs with AVX2 (docs/versions.md, "Bit for bit"); elsewhere torch computes with
    other kernels, and a convolution's bytes differ between CPU models (an AMD EPYC's and an Intel Xeon 6/167's
    are both recorded): a CPU with no checksum recorded is told how to record one, not failed. The AMD's model
    was not written down when its checksums were, so they stand for every AMD CPU until another one differs."""
    import platform

    import torch

    if platform.machine().lower() not in ("x86_64", "amd64") or torch.backends.cpu.get_cpu_capability() not in (
            "AVX2", "AVX512"):
        pytest.skip(f"the recorded checksums are an x86-64 AVX2 CPU's; this is {platform.machine()} "
                    f"({torch.backends.cpu.get_cpu_capability()})")
    cpu = versions.cpu_name()
    expected = TABLE[name].quick_checksum(cpu)
    if expected is None:
        version = registry.get(name)
        weights = registry.repo_relative(versions.work_dir(version, quick=True) / version.weights().name)
        pytest.skip(f"{name}: no quick checksum is recorded for this CPU ({cpu}); a convolution's bytes differ "
                    f"between CPU models: python -m knights.learn.versions rebuild {name} --quick, then add "
                    f"'\"{cpu}\" = \"<sha256sum {weights}>\"' to its quick_sha256")
    assert versions.quick_in_process(name) == expected


def test_the_table_records_a_quick_checksum_for_an_el_and_an_sl_version():
    quick = [n for n, row in TABLE.items() if row.quick_sha256]
    assert any(n.startswith("EL/") for n in quick) and any(n.startswith("SL/") for n in quick)
    v2 = TABLE["EL/v2"]     # a convolution: one checksum per CPU model, picked by the name's start
    assert v2.quick_checksum("AuthenticAMD 25/17") == v2.quick_checksum("AuthenticAMD") != v2.quick_checksum(
        "GenuineIntel 6/167")
    assert v2.quick_checksum("GenuineIntel 6/85") is None and TABLE["SL/v1"].quick_checksum("anything")
    assert v2.quick_checksum("GenuineIntel 6/16") is None and v2.quick_checksum("AuthenticAMDX 1/2") is None
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists() and "vendor_id" in cpuinfo.read_text():   # x86 Linux
        assert re.fullmatch(r"\S+ \d+/\d+", versions.cpu_name()), versions.cpu_name()


def test_the_make_target_names_the_rebuild():
    make = subprocess.run(["make", "-n", "version", "V=EL/v2"], cwd=ROOT, capture_output=True, text=True, check=True)
    assert "-m knights.learn.versions rebuild" in make.stdout and "EL/v2" in make.stdout
    assert registry.rebuild_command("el/2") == "make version V=EL/v2"


def test_the_docs_say_the_rule():
    text = (ROOT / "docs" / "versions.md").read_text()
    assert "earns its place" in text and "make version V=" in text
    assert "](versions.md)" in (ROOT / "docs" / "architecture.md").read_text()
