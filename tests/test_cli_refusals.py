"""Bad input to a ``knights`` command is refused before any work, in one line naming the option
and the path (issue 51), where each of these used to print a traceback, often after the work:

* ``train --out-dir F`` with F a file: ``FileExistsError`` in ``save_checkpoint`` after the epoch;
* ``data generate --out DIR`` (a folder) or ``--report F/x.json`` (under a file): a traceback once
  every game was played; ``data grow --work F``: a traceback;
* ``ship-models nope``: ``KeyError``;
* ``play --seed -5``: "expected non-negative integer" without the option; ``uci --seed 1e23``:
  a bot that stopped answering after ``uciok``;
* ``data generate --depth 0``: a run that never ended; ``--workers 0``: torch's words;
* ``train --epochs 0`` or ``--batch-size 0``: a model written with nothing learned.

The lab commands too (``results``, ``label-floor``, ``error-sources``, ``ablation``, ``ensemble``,
``match``, ``strength``, ``python -m knights.lab.seeds`` and ``knights.learn.distributed``): each
test says what its input did before. Where a regression would start minutes of work, that work is
replaced by a tripwire (:func:`no_work`), so the test fails at once and writes nothing.

Everything runs through :func:`knights.cli.main` in this process, real modules and files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from knights import cli


def refused(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run ``knights ARGV``; it must exit 2 having done nothing (no output), and say why in one
    line (after the usage, when argparse refuses an option's value): that line."""
    try:
        code = cli.main(argv)
    except SystemExit as exc:       # argparse refuses an option's value this way, after the usage
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    if err.startswith("usage: knights "):
        err = err[err.index("\nknights ") + 1:]
    lines = err.strip().splitlines()
    assert code == 2 and out == "", (code, out, err)
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "F"
    path.write_text("not a folder\n")
    return path


def test_train_refuses_an_out_dir_that_is_a_file_before_training(capsys: pytest.CaptureFixture[str],
                                                                 a_file: Path) -> None:
    line = refused(capsys, ["train", "EL/v1", "--quick", "--epochs", "1", "--out-dir", str(a_file)])
    assert line == f"knights train: error: --out-dir {a_file} is a file, not a folder: name a folder (it is made " \
                   "when missing)"
    line = refused(capsys, ["train", "EL/v1", "--quick", "--out-dir", str(a_file / "run")])
    assert line == f"knights train: error: --out-dir {a_file / 'run'}: {a_file} is a file, not a folder"
    assert a_file.read_text() == "not a folder\n"


@pytest.mark.parametrize(("option", "value"), [("--epochs", "0"), ("--epochs", "-1"), ("--batch-size", "0")])
def test_train_refuses_counts_below_one(capsys: pytest.CaptureFixture[str], tmp_path: Path, option: str,
                                        value: str) -> None:
    line = refused(capsys, ["train", "EL/v1", "--quick", option, value, "--out-dir", str(tmp_path / "out")])
    assert line == f"knights train: error: {option} must be at least 1, not {value}"
    assert not (tmp_path / "out").exists()


def test_train_names_a_device_that_is_none(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    line = refused(capsys, ["train", "EL/v1", "--quick", "--device", "nope", "--out-dir", str(tmp_path)])
    assert line.startswith("knights train: error: --device 'nope' is not a device such as cpu, cuda or cuda:1")


def test_generate_refuses_outputs_it_could_not_write_before_playing(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path, a_file: Path) -> None:
    line = refused(capsys, ["data", "generate", "--positions", "10", "--out", str(tmp_path)])
    assert line == f"knights data generate: error: --out {tmp_path} is a folder: name the file to write"
    report = a_file / "r.json"
    line = refused(capsys, ["data", "generate", "--positions", "10", "--out", str(tmp_path / "g.csv"),
                            "--report", str(report)])
    assert line == f"knights data generate: error: --report {report}: {a_file} is a file, not a folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["F"]       # no CSV, no parts


@pytest.mark.parametrize(("option", "value", "says"), [
    ("--depth", "0", "argument --depth: must be at least 1, not 0"),
    ("--workers", "0", "argument --workers: must be at least 1, not 0"),
    ("--workers", "two", "argument --workers: 'two' is not a whole number of workers")])
def test_generate_and_grow_name_a_count_out_of_range(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                     option: str, value: str, says: str) -> None:
    for command in ("generate", "grow"):
        line = refused(capsys, ["data", command, option, value, "--positions", "10", "--report",
                                str(tmp_path / "r.json")])
        assert line.endswith(f"error: {says}"), line
    assert list(tmp_path.iterdir()) == []


def test_grow_refuses_a_work_folder_that_is_a_file(capsys: pytest.CaptureFixture[str], a_file: Path) -> None:
    line = refused(capsys, ["data", "grow", "--positions", "10", "--work", str(a_file)])
    assert line.startswith(f"knights data grow: error: --work {a_file} is a file, not a folder")


@pytest.mark.parametrize("command", ["play", "uci"])
@pytest.mark.parametrize("seed", ["-5", "99999999999999999999999", "x" * 5000])
def test_a_bad_seed_is_named_and_a_long_one_cut(capsys: pytest.CaptureFixture[str], command: str, seed: str) -> None:
    line = refused(capsys, [command, "--seed", seed])
    assert line.startswith(f"knights {command}: error: argument --seed: ")
    assert len(line) < 200 and (seed in line or "\u2026" in line), line


def test_ship_models_names_a_version_it_does_not_ship(capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(capsys, ["ship-models", "nope"])
    assert line == "knights ship-models: error: not a version name: 'nope' (expected e.g. 'EL/v8' or 'SL/v2')"
    assert refused(capsys, ["ship-models", "EL/v999"]).startswith("knights ship-models: error: unknown version EL/v999")


@pytest.mark.parametrize(("argv", "what"), [(["play", "--fen"], "a FEN"),
                                            (["play", "--evaluator"], "an evaluator name"),
                                            (["uci", "--evaluator"], "an evaluator name")])
def test_a_5000_character_value_is_quoted_by_a_short_prefix(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                            what: str) -> None:
    """Before: ``play --fen`` and ``--evaluator`` echoed a 5,000-character value whole in their error."""
    line = refused(capsys, [*argv, "e2e4" + "x" * 5000])
    assert line.endswith(f"\u2026 is too long for {what} (5,004 characters; at most {100 if 'FEN' in what else 64})")
    assert len(line) < 160, line


class _Runs:
    """Unpickled, it makes the folder ``marker``: what a hostile checkpoint would do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        import os

        return (os.mkdir, (str(self.marker),))


def test_train_refuses_a_pickled_checkpoint_in_our_words(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Before: the refusal passed on torch's advice to re-run ``torch.load`` with ``weights_only=False``."""
    import warnings

    import torch

    marker = tmp_path / "ran"
    ckpt = tmp_path / "EL_v1.ckpt"
    torch.save({"model": {}, "history": {}, "optimizer": {}, "key": "k", "best": _Runs(marker)}, ckpt)
    before = ckpt.read_bytes()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cli.main(["train", "EL/v1", "--quick", "--epochs", "1", "--out-dir", str(tmp_path)]) == 2
    assert not [w for w in caught if "torch" in str(w.filename)], [str(w.message) for w in caught]
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (f"knights train: error: {ckpt}: not a training checkpoint (it holds a pickled reference to "
                       "posix.mkdir; not loaded, since loading it could run code); delete it (or move it away) to "
                       "start this run afresh"), err
    assert "Traceback" not in "\n".join(err) and not marker.exists() and ckpt.read_bytes() == before
    assert not (tmp_path / "v1.pt").exists()



def test_distributed_refuses_an_out_dir_that_is_a_file_before_any_work(capsys: pytest.CaptureFixture[str],
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       a_file: Path) -> None:
    """Before: ``python -m knights.learn.distributed --out-dir F`` joined the group, trained the epoch and
    then failed with a FileExistsError traceback; now the check ``knights train`` makes, shared."""
    import socket

    import torch.distributed as dist

    from knights.learn import distributed

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for name, value in {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1",
                        "MASTER_PORT": str(port)}.items():
        monkeypatch.setenv(name, value)
    code = distributed.main(["EL/v1", "--quick", "--device", "cpu", "--out-dir", str(a_file)])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and not dist.is_initialized()
    assert err.strip() == (f"knights.learn.distributed (rank 0): error: --out-dir {a_file} is a file, not a folder: "
                           "name a folder (it is made when missing)")
    assert a_file.read_text() == "not a folder\n"


def test_data_check_says_a_file_is_not_a_folder(capsys: pytest.CaptureFixture[str], a_file: Path) -> None:
    """Before: 'chunk folder not found: F' for a file that is there."""
    line = refused(capsys, ["data", "check", str(a_file), "all"])
    assert line == f"knights data check: error: {a_file} is a file, not a chunk folder"


def _tripwire(where: str) -> object:
    def work_started(*_args: object, **_kwargs: object) -> object:
        raise AssertionError(f"{where} started: the refusal came after the work began")

    return work_started


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lab commands' work replaced by tripwires: a refusal must come before it, and a regression
    fails at once instead of playing or training for minutes (or rewriting the repository's results)."""
    from knights.lab import ablation, seeds
    from knights.lab.arena import commands, search_strength
    from knights.lab.ensemble import train as train_democracy
    from knights.lab.results import error_sources, label_floor
    from knights.lab.results import independent as independent_results

    for module, name in ((independent_results, "run"), (label_floor, "run"), (error_sources, "run"),
                         (seeds, "run"), (ablation, "run"), (train_democracy, "train_all"),
                         (commands, "run_games"), (commands, "run_strength"), (search_strength, "run_search_strength")):
        monkeypatch.setattr(module, name, _tripwire(f"{module.__name__}.{name}"))


@pytest.mark.usefixtures("no_work")
def test_results_refuses_a_data_dir_that_is_not_a_chunk_folder_before_any_work(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, a_file: Path) -> None:
    """Before: ``knights results --data-dir /nonexistent`` fell back to the earlier table and ran Stockfish
    and every network over the independent sets for minutes (never rewritten here: :func:`no_work`)."""
    from knights.lab.results import independent as independent_results

    missing = tmp_path / "nonexistent"
    for data_dir, says in ((missing, f"chunk folder not found: {missing}"),
                           (a_file, f"{a_file} is a file, not a chunk folder")):
        line = refused(capsys, ["results", "--data-dir", str(data_dir)])
        assert line == f"knights results: error: --data-dir: {says}"
    assert independent_results.main(["--data-dir", str(missing)]) == 2    # its python -m route: the same check
    assert capsys.readouterr().err == (f"python -m knights.lab.results.independent: error: --data-dir: "
                                       f"chunk folder not found: {missing}\n")


@pytest.mark.parametrize(("argv", "says"), [
    (["--max-rows", "-1"], "--max-rows must be at least 1, not -1"),   # numpy's 'negative dimensions' after reading
    (["--test", "zz"], "--test: bad chunk selection term 'zz' in 'zz': use letters"),
    (["--independent-dir", "{missing}"], "--independent-dir {missing}: no such folder"),   # no set, no word
    (["--independent-dir", "{a_file}"], "--independent-dir {a_file} is a file, not a folder")])
@pytest.mark.usefixtures("no_work")
def test_results_names_any_other_option_no_run_could_use(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                        a_file: Path, argv: list[str], says: str) -> None:
    sample = Path(__file__).resolve().parent.parent / "data" / "sample"   # a chunk folder with the letter j
    paths = {"missing": tmp_path / "nope", "a_file": a_file}
    line = refused(capsys, ["results", "--data-dir", str(sample), *(a.format(**paths) for a in argv)])
    assert line.startswith(f"knights results: error: {says.format(**paths)}"), line


@pytest.mark.usefixtures("no_work")
@pytest.mark.parametrize(("argv", "says"), [
    # label-floor: --depth 0 was a SystemExit (exit 1, no 'error:'); -5 rows measured nothing and wrote the
    # file; an --out it could not write failed after Stockfish had labelled every set
    (["label-floor", "--depth", "0"], "--depth must be at least 1, not 0"),
    (["label-floor", "--max-rows", "-5"], "--max-rows must be at least 1, not -5"),
    (["label-floor", "--out", "{a_file}/lf.json"], "--out {a_file}/lf.json: {a_file} is a file, not a folder"),
    (["label-floor", "--out", "{tmp}"], "--out {tmp} is a folder: name the file to write"),
    (["label-floor", "--independent-dir", "{a_file}"], "--independent-dir {a_file} is a file, not a folder"),
    # error-sources: a missing folder was a SystemExit; an --out it could not write failed after minutes
    (["error-sources", "--independent-dir", "{tmp}/nope"], "--independent-dir {tmp}/nope: no such folder"),
    (["error-sources", "--out", "{a_file}/es.json"], "--out {a_file}/es.json: {a_file} is a file, not a folder"),
    # ablation: --epochs 0 ran as the default, -1 trained nothing; --device in torch's words, after the sets
    (["ablation", "--epochs", "0"], "--epochs must be at least 1, not 0"),
    (["ablation", "--epochs", "-1"], "--epochs must be at least 1, not -1"),
    (["ablation", "--device", "nope"], "--device 'nope' is not a device such as cpu, cuda or cuda:1"),
    # ensemble: scikit-learn's words for -1 rows; a missing --models-dir trained without networks; a bad
    # --data-dir (or --quick-network) came after a quick run had emptied runs/quick/ensemble; an --out it
    # could not write failed when the blend was shipped, after every learner was trained
    (["ensemble", "--quick", "--knn-rows", "-1"], "--knn-rows must be at least 1, not -1"),
    (["ensemble", "--quick", "--rf-max-leaf-nodes", "1"], "--rf-max-leaf-nodes must be at least 2, not 1"),
    (["ensemble", "--quick", "--quick-network", "nope"], "not a version name: 'nope'"),
    (["ensemble", "--quick", "--models-dir", "{tmp}/nope"], "--models-dir {tmp}/nope: no such folder"),
    (["ensemble", "--quick", "--data-dir", "{a_file}"], "--data-dir: {a_file} is a file, not a chunk folder"),
    (["ensemble", "--quick", "--out", "{a_file}"], "--out {a_file} is a file, not a folder"),
    (["ensemble", "--quick", "--results-md", "{a_file}/r.md"], "--results-md {a_file}/r.md: {a_file} is a file"),
    # match: 0 or -1 games played nothing and exited 0; a negative --movetime or --nodes was played
    (["match", "ours:material", "random", "--games", "0"], "--games must be at least 1, not 0"),
    (["match", "ours:material", "random", "--workers", "0"], "--workers must be at least 1, not 0"),
    (["match", "ours:material", "sf-elo:1500", "--movetime", "-5"], "--movetime must be at least 1, not -5"),
    (["match", "ours:material", "sf-elo:1500", "--nodes", "0"], "--nodes must be at least 1, not 0"),
    (["match", "ours:material", "random", "--max-plies", "0"], "--max-plies must be at least 1, not 0"),
    (["match", "ours:material", "random", "--out", "{a_file}"], "--out {a_file} is a file, not a folder"),
    # strength: an output folder that is a file failed once every game was played
    (["strength", "--quick", "--workers", "0"], "--workers must be at least 1, not 0"),
    (["strength", "--quick", "--results-dir", "{a_file}"], "--results-dir {a_file} is a file, not a folder"),
    (["strength", "--search", "--pgn-dir", "{a_file}/p"], "--pgn-dir {a_file}/p: {a_file} is a file, not a folder")])
def test_lab_commands_refuse_bad_options_before_any_work(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                         a_file: Path, argv: list[str], says: str) -> None:
    paths = {"a_file": a_file, "tmp": tmp_path}
    line = refused(capsys, [a.format(**paths) for a in argv])
    assert line.startswith(f"knights {argv[0]}: error: {says.format(**paths)}"), line
    assert a_file.read_text() == "not a folder\n" and sorted(p.name for p in tmp_path.iterdir()) == ["F"]


@pytest.mark.usefixtures("no_work")
@pytest.mark.parametrize(("argv", "says"), [
    (["--seeds", "x"], "--seeds 'x' is not whole numbers separated by commas"),   # int()'s words
    (["--seeds", "-1"], "--seeds must be at least 0, not -1"),        # numpy's, after the data was read
    (["--versions", "EL/v1,nope"], "not a version name: 'nope'"),    # after --out was rewritten
    (["--epochs", "0"], "--epochs must be at least 1, not 0"),
    (["--device", "nope"], "--device 'nope' is not a device such as cpu, cuda or cuda:1"),
    (["--out", "{a_file}/s.json"], "--out {a_file}/s.json: {a_file} is a file, not a folder"),   # tracebacks
    (["--out", "{tmp}"], "--out {tmp} is a folder: name the file to write"),
    (["--runs-dir", "{a_file}"], "--runs-dir {a_file} is a file, not a folder")])
def test_seeds_refuses_bad_options_before_writing(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                  a_file: Path, argv: list[str], says: str) -> None:
    from knights.lab import seeds

    paths = {"a_file": a_file, "tmp": tmp_path}
    options = {"--out": str(tmp_path / "seeds.json"), "--runs-dir": str(tmp_path / "runs")}
    options |= dict(zip(argv[::2], (a.format(**paths) for a in argv[1::2]), strict=True))
    code = seeds.main([*(x for pair in options.items() for x in pair), "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"python -m knights.lab.seeds: error: {says.format(**paths)}"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["F"]


def test_knights_help_and_every_command_help_render(capsys: pytest.CaptureFixture[str]):
    # argparse formats help with %: a bare "95% interval" in one subcommand's help once made `knights --help` raise
    import argparse

    parser = cli.build_parser()
    with pytest.raises(SystemExit) as done:
        parser.parse_args(["--help"])
    assert done.value.code == 0 and "scores" in capsys.readouterr().out
    pending = [parser]
    while pending:
        p = pending.pop()
        assert p.format_help().startswith("usage:")
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                pending += list(action.choices.values())
