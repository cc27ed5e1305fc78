"""Evaluators that are broken are refused loudly, never played around (issue 25, items 4 and 5).

Before: a damaged ``ensemble/models/democracy.json`` was reported as "democracy has no
trained weights yet" and the bot played another evaluator; weights scaled by 1e30 (the
checksum updated) loaded, evaluated every position to NaN, and the bot played on,
reporting "eval +0.00" (``score cp 0`` over UCI).
"""

from __future__ import annotations

import io
import json
import shutil
import sys

import chess
import numpy as np
import pytest
import torch

from knights import cli
from knights.engine.one_ply import OnePlyEngine
from knights.engine.search import SearchEngine
from knights.evaluate import democracy, names
from knights.evaluate import load as evaluator_load
from knights.evaluate.base import NonFiniteEvaluation
from knights.frontends.uci import UciSession
from knights.learn import modelfile, registry
from knights.learn.store import sha256_file


# ------------------------------------------------------------------- item 4: a damaged democracy
@pytest.fixture
def ensemble(tmp_path, monkeypatch):
    """A copy of the shipped ensemble folder, used as the shipped one."""
    folder = tmp_path / "ensemble"
    shutil.copytree(registry.ENSEMBLE_MODELS, folder)
    monkeypatch.setattr(democracy, "MODELS_DIR", folder)
    return folder / democracy.MANIFEST


def _damage(manifest, how: str) -> str:
    """Damage the manifest; returns what the error must say."""
    doc = json.loads(manifest.read_text())
    if how == "bad JSON":
        manifest.write_text(manifest.read_text()[:-40])
        return "not valid JSON"
    if how == "negative weight":
        doc["members"][0]["weight"] = -0.5
        expected = "bad weight -0.5"
    elif how == "unknown format version":
        doc["format_version"] = 99
        expected = "format_version 99"
    elif how == "unknown member version":
        doc["members"][0]["version"] = "EL/v99"
        expected = "unknown version EL/v99"
    else:   # a learner file outside the folder
        doc["members"].append({"name": "knn", "kind": "learner", "weight": 0.1, "file": "../knn.json"})
        expected = "file must be a bare .json name"
    manifest.write_text(json.dumps(doc))
    return expected


DAMAGES = ["bad JSON", "negative weight", "unknown format version", "unknown member version", "learner path"]


@pytest.mark.parametrize("how", DAMAGES)
def test_a_damaged_democracy_is_reported_with_its_real_reason(ensemble, how, capsys):
    expected = _damage(ensemble, how)
    assert "democracy" in names.available_evaluators()      # there, but broken: not "not trained"
    notices: list[str] = []
    with pytest.raises(ValueError, match=expected) as caught:
        evaluator_load.select_evaluator(None, notice=notices.append)   # the evaluate layer's default
    assert str(ensemble) in str(caught.value) and not notices
    with pytest.raises(ValueError, match=expected):
        evaluator_load.select_evaluator("democracy")


def test_play_stops_on_a_damaged_democracy_instead_of_playing_another_evaluator(ensemble, tmp_path, monkeypatch,
                                                                                capsys):
    _damage(ensemble, "negative weight")
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    assert cli.main(["play", "--depth", "1", "--evaluator", "democracy+qsearch",
                     "--games-dir", str(tmp_path / "games")]) == 2
    captured = capsys.readouterr()
    assert "bad weight -0.5" in captured.err and "no trained weights" not in captured.err + captured.out


def test_play_stops_on_a_damaged_member_of_the_one_ply_default(tmp_path, monkeypatch, capsys):
    """The one-ply bot's default, sparse+quiesce, with one member's weights NaN (its checksum recorded
    again, so only the values are wrong): knights play names the file and stops; it plays no other evaluator."""
    from knights.engine.spec import ONE_PLY_EVALUATOR, SPARSE_DEMOCRACY

    if ONE_PLY_EVALUATOR != "sparse+quiesce" or not all(registry.get(m).is_trained() for m in SPARSE_DEMOCRACY):
        pytest.skip("the sparse democracy is not the default, or its members are not all trained here")
    models = tmp_path / "models_EL"
    shutil.copytree(registry.REPO_ROOT / "models_EL", models, ignore=shutil.ignore_patterns("*.png", "*.md"))
    damaged = models / f"v{SPARSE_DEMOCRACY[0].split('v')[-1]}.pt"
    state = torch.load(damaged, weights_only=True)
    first = next(k for k, v in state.items() if v.is_floating_point())
    state[first] = state[first].clone()
    state[first].view(-1)[0] = float("nan")
    torch.save(state, damaged)
    meta = json.loads(damaged.with_suffix(".json").read_text())
    meta["sha256"] = sha256_file(damaged)
    modelfile.write_meta(damaged.with_suffix(".json"), meta)
    monkeypatch.setitem(registry.FAMILIES, "EL", ("source_EL", str(models)))
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    assert cli.main(["play", "--depth", "1", "--games-dir", str(tmp_path / "games")]) == 2
    captured = capsys.readouterr()
    assert SPARSE_DEMOCRACY[0] in captured.err and "no trained weights" not in captured.err + captured.out


# ------------------------------------------------------------------- item 5: non-finite evaluations
@pytest.fixture
def scaled_el(tmp_path, monkeypatch):
    """The EL models folder pointed at a copy of v10 whose weights are multiplied by 1e30,
    the checksum recorded again: the file is finite and verified, its evaluations are not."""
    for suffix in (".pt", ".json"):
        shutil.copy(registry.REPO_ROOT / "models_EL" / f"v10{suffix}", tmp_path / f"v10{suffix}")
    pt = tmp_path / "v10.pt"
    state = torch.load(pt, weights_only=True)
    torch.save({k: v * 1e30 if v.is_floating_point() else v for k, v in state.items()}, pt)
    meta = json.loads(pt.with_suffix(".json").read_text())
    meta["sha256"] = sha256_file(pt)
    modelfile.write_meta(pt.with_suffix(".json"), meta)
    monkeypatch.setitem(registry.FAMILIES, "EL", ("source_EL", str(tmp_path)))
    return pt


def test_weights_giving_non_finite_evaluations_are_refused_at_load(scaled_el):
    with pytest.raises(NonFiniteEvaluation, match=r"EL/v10.*non-finite"):
        evaluator_load.load_evaluator("EL/v10")


class FlakyEvaluator:
    """Finite on the start position's children, NaN once a knight has moved (as a broken
    network would be on some positions only)."""

    name = "flaky"

    def evaluate(self, positions):
        squares = np.asarray(positions.squares).reshape(len(positions.squares), -1)
        start = chess.Board()
        knights = {sq for sq in chess.SQUARES if start.piece_type_at(sq) == chess.KNIGHT}
        out = np.zeros(len(squares), np.float32)
        for i, row in enumerate(squares):
            if any(row[sq] == 0 for sq in knights):
                out[i] = np.nan
        return out


@pytest.mark.parametrize("make", [lambda ev: OnePlyEngine(ev, stochastic=False),
                                  lambda ev: SearchEngine(ev, depth=2, stochastic=False)])
def test_the_engines_refuse_to_play_on_a_nan_evaluation(make):
    engine = make(FlakyEvaluator())
    with pytest.raises(NonFiniteEvaluation, match=r"flaky.*non-finite"):
        engine.choose(chess.Board())


def test_uci_never_reports_score_cp_0_for_nan_and_still_answers_a_legal_move(scaled_el):
    lines: list[str] = []
    session = UciSession(lines.append, evaluator="EL/v10", seed=1, engine_process=False)
    try:
        for command in ("uci", "isready", "position startpos", "go movetime 500"):
            session.handle(command)
            session.drain()
    finally:
        session.close()
    errors = [line for line in lines if line.startswith("info string error:")]
    assert errors and any("non-finite" in line and "EL/v10" in line for line in errors), lines
    assert not any(" score cp 0 " in line for line in lines), lines
    assert not any("playing with the material evaluator" in line for line in lines), lines
    move = lines[-1].split()
    assert move[0] == "bestmove" and chess.Move.from_uci(move[1]) in chess.Board().legal_moves
