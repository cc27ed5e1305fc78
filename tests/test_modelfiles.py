"""Network weight files are verified before they are used (issue 12, "Models").

Before the checksum, a copy of ``models_EL/v10.pt`` with 64 bytes flipped loaded
silently (and evaluated the start position at tens of pawns), all-NaN weights
loaded, and a zero-byte file failed with "list index out of range" without naming
the file. Each test below failed on that code: the refusals did not happen, or
happened without the file's name (``load_state`` then had no ``verify``, no
``stamp`` and no ``main``, and nothing read the ``"sha256"`` key).
"""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
from pathlib import Path

import chess
import pytest
import torch

from knights import cli
from knights.evaluate.base import network_evaluator
from knights.frontends.uci import serve
from knights.learn import modelfile, registry
from knights.learn.nets import ConvNet
from knights.learn.store import sha256_file
from knights.learn.verify import main as verify_main

# the weights in git: every version but the archived ones (whose rebuilt or restored weights may also lie here,
# ignored by git, on a machine that made them: they are not what a clone ships)
SHIPPED = sorted(v.weights() for v in registry.all_versions() if v.name not in registry.archived())


def shipped_copy(tmp_path: Path, name: str = "v10") -> Path:
    """``models_EL/<name>.pt`` and its ``.json`` copied into ``tmp_path``."""
    for suffix in (".pt", ".json"):
        shutil.copy(registry.REPO_ROOT / "models_EL" / f"{name}{suffix}", tmp_path / f"{name}{suffix}")
    return tmp_path / f"{name}.pt"


def record_checksum(path: Path) -> None:
    """Metadata whose checksum matches ``path``'s bytes, so the content checks are the
    ones that must refuse it (a mismatch alone would refuse every damaged file)."""
    modelfile.write_meta(path.with_suffix(".json"), {"sha256": sha256_file(path)})


def flip(path: Path, count: int = 64) -> None:
    data = bytearray(path.read_bytes())
    start = len(data) // 2
    for i in range(start, start + count):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def test_every_shipped_model_records_and_matches_its_checksum():
    here = {*(registry.REPO_ROOT / "models_EL").glob("v*.pt"), *(registry.REPO_ROOT / "models_SL").glob("v*.pt")}
    assert set(SHIPPED) <= here        # every version not archived ships its weights; archived ones may be here too
    assert here - set(SHIPPED) <= {registry.get(name).weights() for name in registry.archived()}
    for pt in SHIPPED:
        meta = json.loads(pt.with_suffix(".json").read_text())
        assert meta["sha256"] == sha256_file(pt), pt
        assert modelfile.verify_checksum(pt) == meta["sha256"]
        assert modelfile.load_state(pt)   # finite, a state dict


def test_stamping_adds_only_the_checksum(tmp_path):
    """What stamped the shipped metadata: the key is added last, every other byte kept;
    stamping again changes nothing."""
    pt = shipped_copy(tmp_path)
    shipped_text = (registry.REPO_ROOT / "models_EL" / "v10.json").read_text()
    meta = json.loads(shipped_text)
    del meta["sha256"]
    modelfile.write_meta(pt.with_suffix(".json"), meta)
    with pytest.raises(modelfile.ModelFileError, match=r"v10\.pt: v10\.json records no 'sha256'.*stamp .*v10\.pt"):
        modelfile.load_state(pt)
    assert modelfile.stamp(pt) == sha256_file(pt)
    assert pt.with_suffix(".json").read_text() == shipped_text
    modelfile.stamp(pt.with_suffix(".json"))
    assert pt.with_suffix(".json").read_text() == shipped_text


def test_flipped_bytes_are_refused_naming_the_file(tmp_path):
    pt = shipped_copy(tmp_path)
    flip(pt)
    with pytest.raises(modelfile.ModelFileError, match=rf"{re.escape(str(pt))}: checksum mismatch .*altered"):
        modelfile.load_state(pt)
    with pytest.raises(modelfile.ModelFileError, match=r"v10\.pt: checksum mismatch"):
        network_evaluator("EL/v10", tmp_path)
    # stamp does not bless the altered bytes over the recorded checksum without --force
    with pytest.raises(modelfile.ModelFileError, match=r"v10\.pt: v10\.json records a different checksum.*--force"):
        modelfile.stamp(pt)


def test_unflipped_copy_loads_and_evaluates_like_the_shipped_file(tmp_path):
    shipped_copy(tmp_path)
    here = network_evaluator("EL/v10", tmp_path).evaluate_boards([chess.Board()])
    there = network_evaluator("EL/v10").evaluate_boards([chess.Board()])
    assert here.tolist() == there.tolist() and abs(float(here[0])) < 2


def test_missing_metadata_is_refused_with_the_fixing_command(tmp_path):
    model = ConvNet(6, [(4, 3)], [8], n_extra=2)
    pt = tmp_path / "m.pt"
    torch.save(model.state_dict(), pt)   # a file from before the checksum: no metadata at all
    with pytest.raises(modelfile.ModelFileError,
                       match=r"m\.pt: no metadata m\.json.*python -m knights\.learn\.verify stamp .*m\.pt"):
        modelfile.load_state(pt)
    modelfile.stamp(pt)
    assert modelfile.read_meta(tmp_path / "m.json") == {"sha256": sha256_file(pt)}
    modelfile.load_into(ConvNet(6, [(4, 3)], [8], n_extra=2), pt)
    (tmp_path / "m.json").write_text("{not json")
    with pytest.raises(modelfile.ModelFileError, match=r"m\.json: model metadata is not valid JSON"):
        modelfile.load_state(pt)


def test_non_finite_weights_are_refused(tmp_path):
    model = ConvNet(6, [(4, 3)], [8], n_extra=2)
    with torch.no_grad():
        for p in model.parameters():
            p.fill_(float("nan"))
    pt = tmp_path / "nan.pt"
    with pytest.raises(modelfile.ModelFileError, match=r"nan\.pt: not written: the weights are non-finite"):
        modelfile.save_model(model, pt, {"version": "nan"})   # never written (issue 25)
    assert not pt.exists() and not (tmp_path / "nan.json").exists()
    torch.save(model.state_dict(), pt)                           # a NaN file made some other way
    record_checksum(pt)
    with pytest.raises(modelfile.ModelFileError, match=r"nan\.pt: tensor '.*' holds non-finite values"):
        modelfile.load_into(ConvNet(6, [(4, 3)], [8], n_extra=2), pt)
    with pytest.raises(modelfile.ModelFileError, match=r"nan\.pt: tensor .* non-finite"):
        modelfile.stamp(pt, force=True)   # nor can it be stamped
    # one infinity is enough
    state = ConvNet(6, [(4, 3)], [8], n_extra=2).state_dict()
    state["head.2.bias"] = torch.tensor([float("inf")])
    torch.save(state, tmp_path / "inf.pt")
    record_checksum(tmp_path / "inf.pt")
    with pytest.raises(modelfile.ModelFileError, match=r"inf\.pt: tensor 'head\.2\.bias' holds non-finite"):
        modelfile.load_state(tmp_path / "inf.pt")


def test_empty_truncated_and_foreign_files_are_refused_naming_the_file(tmp_path):
    empty = tmp_path / "empty.pt"
    empty.write_bytes(b"")
    record_checksum(empty)
    with pytest.raises(modelfile.ModelFileError, match=r"empty\.pt: empty file \(0 bytes\)"):
        modelfile.load_state(empty)

    whole = (registry.REPO_ROOT / "models_EL" / "v10.pt").read_bytes()
    for cut in (len(whole) // 2, 100, len(whole) - 1):
        truncated = tmp_path / f"cut{cut}.pt"
        truncated.write_bytes(whole[:cut])
        record_checksum(truncated)
        with pytest.raises(modelfile.ModelFileError, match=rf"cut{cut}\.pt: not a plain PyTorch state dict"):
            modelfile.load_state(truncated)

    (tmp_path / "junk.pt").write_bytes(b"\x00" * 1000)
    record_checksum(tmp_path / "junk.pt")
    with pytest.raises(modelfile.ModelFileError, match=r"junk\.pt: not a plain PyTorch state dict"):
        modelfile.load_state(tmp_path / "junk.pt")

    for name, obj in (("list", [torch.zeros(2)]), ("tensor", torch.zeros(3)), ("ints", {"a": 1}),
                      ("nested", {"model": {"w": torch.zeros(2)}})):
        torch.save(obj, tmp_path / f"{name}.pt")
        record_checksum(tmp_path / f"{name}.pt")
        with pytest.raises(modelfile.ModelFileError, match=rf"{name}\.pt: expected a mapping of parameter names"):
            modelfile.load_state(tmp_path / f"{name}.pt")
    torch.save({}, tmp_path / "none.pt")
    record_checksum(tmp_path / "none.pt")
    with pytest.raises(modelfile.ModelFileError, match=r"none\.pt: holds no tensors"):
        modelfile.load_state(tmp_path / "none.pt")


def test_module_command_stamps_and_verifies_with_one_line_per_bad_file(tmp_path, capsys):
    good = shipped_copy(tmp_path)
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"")
    assert verify_main(["verify", str(good)]) == 0
    assert verify_main(["verify", str(good), str(bad), str(tmp_path / "gone.pt")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "bad.pt: no metadata bad.json" in err[0] and "gone.pt" in err[1]
    assert verify_main(["stamp", str(bad)]) == 2
    assert "bad.pt: empty file" in capsys.readouterr().err
    assert not (tmp_path / "bad.json").exists()


@pytest.fixture
def flipped_el(tmp_path, monkeypatch):
    """The EL models folder pointed at a folder holding only a flipped copy of v10."""
    pt = shipped_copy(tmp_path)
    flip(pt)
    monkeypatch.setitem(registry.FAMILIES, "EL", ("source_EL", str(tmp_path)))
    return pt


def test_play_reports_a_damaged_model_in_one_line(flipped_el, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    assert cli.main(["play", "--evaluator", "EL/v10", "--games-dir", str(tmp_path / "games")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"knights play: error: {flipped_el}: checksum mismatch ")


def test_uci_reports_a_damaged_model_and_keeps_playing(flipped_el):
    """The damaged model is refused, named, at ``isready`` and at every ``go``, each ``go``
    still answered with a legal move; it is never replaced by material play with one notice
    (issue 25: "a broken evaluator under knights uci becomes material play")."""
    out = io.StringIO()
    serve(io.StringIO("uci\nsetoption name Evaluator value EL/v10\nisready\nposition startpos\ngo\n"
                      "position startpos moves e2e4\ngo\nquit\n"), out)
    lines = out.getvalue().splitlines()
    refusals = [line for line in lines if "checksum mismatch" in line]
    assert len(refusals) == 3, [x for x in lines if not x.startswith("option")]
    assert all(r.startswith("info string error: ") for r in refusals)
    assert all("cannot load evaluator 'EL/v10': " in r and str(flipped_el) in r for r in refusals)
    assert not any("playing with the material evaluator" in line for line in lines)
    moves = [line.split()[1] for line in lines if line.startswith("bestmove ")]
    board = chess.Board()
    assert len(moves) == 2 and chess.Move.from_uci(moves[0]) in board.legal_moves


class _Runs:
    """Unpickled, it makes the folder ``marker``: what a hostile model file would do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.mkdir, (str(self.marker),))


@pytest.mark.parametrize("how", ["pickle", "torch.save"])
def test_a_pickle_of_python_objects_is_refused_in_one_line_without_advice_to_load_it_unsafely(
        how, tmp_path, monkeypatch, capsys):
    """Before: refused, but the message passed on torch's advice to re-run ``torch.load`` with
    ``weights_only=False``, and torch's UserWarning on the pickle protocol leaked."""
    import pickle
    import warnings

    marker = tmp_path / "ran"
    pt = tmp_path / "v10.pt"
    if how == "pickle":
        pt.write_bytes(pickle.dumps({"w": _Runs(marker)}, protocol=4))
    else:
        torch.save({"w": _Runs(marker)}, pt)
    record_checksum(pt)
    monkeypatch.setitem(registry.FAMILIES, "EL", ("source_EL", str(tmp_path)))
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = cli.main(["play", "--evaluator", "EL/v10", "--games-dir", str(tmp_path / "games")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"knights play: error: {pt}: not a plain PyTorch state dict (it holds ")
    assert "could run code" in err[0] and "weights_only" not in err[0] and "trusted" not in err[0]
    if how == "torch.save":
        assert "posix.mkdir" in err[0]          # the object it would have called, named
    assert not [w for w in caught if "torch" in str(w.filename)], [str(w.message) for w in caught]
    assert not marker.exists()
