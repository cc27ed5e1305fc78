"""The labelled-data store: CSV files packed into moves and labels come back byte for byte
(gaps, odd labels and hand-edited cells included), restoring resumes and keeps equal files,
and a damaged store is refused naming the file, with nothing overwritten."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from knights.cli import main
from knights.data import csslab
from knights.data.store import MANIFEST, StoreError, label_code, label_text, restore, store

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


def _lines(name: str) -> list[str]:
    return (SAMPLE / name).read_text().splitlines(keepends=True)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A project root with a games.csv (a sample chunk with rows dropped, as dedup drops them, and
    edited cells) and a grown set's two parts (no header) and recipe."""
    root = tmp_path / "src"
    gen = root / "data" / "generated"
    gen.mkdir(parents=True)
    lines = _lines("Sample_a")
    kept = [line for i, line in enumerate(lines) if i == 0 or i % 97 != 5]   # gaps inside games
    rows = [line.rstrip("\n").split(",") for line in kept]
    col = csslab.COLUMNS.index
    rows[10][col("cp_rel")] = "12.5"                 # a label the packed bits do not hold as written
    rows[11][col("cp_rel")] = "#+3"
    rows[12][col("num_legal_moves")] = "999"         # a cell no replay predicts
    rows[13][col("white_elo")] = "1500"
    (gen / "games.csv").write_text("".join(",".join(r) + "\n" for r in rows))
    parts = gen / "more" / "odds.csv.parts"
    parts.mkdir(parents=True)
    body = _lines("Sample_b")[1:]
    (parts / "part-000000.csv").write_text("".join(body[:1200]))
    (parts / "part-000001.csv").write_text("".join(body[1200:]))
    (parts / "part-000002.csv.tmp").write_text("unfinished")
    (parts / "recipe.json").write_text('{"seed": 7}\n')
    return root


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_store_restores_every_file_byte_for_byte(tree, tmp_path):
    shelf = tmp_path / "store"
    manifest = store(shelf, root=tree, progress=False)
    assert manifest["positions"] == sum(f["rows"] for f in manifest["files"]) > 4000
    assert {f["path"] for f in manifest["files"]} == {"data/generated/games.csv",
                                                      "data/generated/more/odds.csv.parts/part-000000.csv",
                                                      "data/generated/more/odds.csv.parts/part-000001.csv"}
    csv_bytes = sum(len(b) for p, b in _files(tree).items() if p.endswith(".csv"))
    shard_bytes = sum(s["bytes"] for s in manifest["shards"].values())
    assert shard_bytes * 20 < csv_bytes          # moves and labels, not the text
    for shard in shelf.glob("*.npz"):
        with np.load(shard, allow_pickle=False) as z:   # plain arrays: nothing to unpickle
            assert "moves" in z.files
    out = tmp_path / "restored"
    summary = restore(shelf, root=out, progress=False)
    assert summary["written"] == 3 and summary["kept"] == 0
    want = {p: b for p, b in _files(tree).items() if not p.endswith(".tmp")}
    assert _files(out) == want


def test_restoring_again_keeps_equal_files_and_mends_a_changed_one(tree, tmp_path):
    shelf = tmp_path / "store"
    store(shelf, root=tree, progress=False)
    out = tmp_path / "restored"
    restore(shelf, root=out, progress=False)
    assert restore(shelf, root=out, progress=False)["written"] == 0
    part = out / "data/generated/more/odds.csv.parts/part-000001.csv"
    part.write_text(part.read_text()[:-50])       # a file cut short, as by a crash
    again = restore(shelf, root=out, progress=False)
    assert again["written"] == 1
    assert part.read_bytes() == (tree / "data/generated/more/odds.csv.parts/part-000001.csv").read_bytes()


def test_storing_again_keeps_unchanged_shards(tree, tmp_path):
    shelf = tmp_path / "store"
    first = store(shelf, root=tree, progress=False)
    stamps = {p.name: p.stat().st_mtime_ns for p in shelf.glob("*.npz")}
    (tree / "data/generated/more/odds.csv.parts/part-000002.csv").write_text(_lines("Sample_c")[1])
    second = store(shelf, root=tree, progress=False)
    assert second["positions"] == first["positions"] + 1
    games_shard = next(f["shard"] for f in second["files"] if f["path"].endswith("games.csv"))
    assert (shelf / games_shard).stat().st_mtime_ns == stamps[games_shard]   # not packed again


def test_a_damaged_shard_is_refused_by_name_and_nothing_is_overwritten(tree, tmp_path):
    shelf = tmp_path / "store"
    manifest = store(shelf, root=tree, progress=False)
    out = tmp_path / "restored"
    target = out / "data/generated/games.csv"
    target.parent.mkdir(parents=True)
    target.write_text("a file the user had\n")
    name = next(f["shard"] for f in manifest["files"] if f["path"].endswith("games.csv"))
    data = bytearray((shelf / name).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (shelf / name).write_bytes(bytes(data))
    with pytest.raises(StoreError, match=name):
        restore(shelf, root=out, progress=False, workers=1)
    assert target.read_text() == "a file the user had\n"
    (shelf / name).unlink()
    with pytest.raises(StoreError, match="missing"):
        restore(shelf, root=out, progress=False)


def test_a_malformed_csv_is_refused_naming_file_and_row(tmp_path):
    root = tmp_path / "src"
    (root / "data/generated").mkdir(parents=True)
    lines = _lines("Sample_a")[:20]
    lines[7] = "gen1,too,few\n"
    (root / "data/generated/games.csv").write_text("".join(lines))
    with pytest.raises(StoreError, match=r"games\.csv: row 8 has 3 fields"):
        store(tmp_path / "store", root=root, progress=False)
    assert not list((tmp_path / "store").glob("*.npz"))


def test_the_commands_name_a_missing_store(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["data", "restore", "--store", "nowhere", "--quiet"]) != 0
    err = capsys.readouterr().err
    assert str(Path("nowhere") / MANIFEST) in err
    (tmp_path / "nowhere").mkdir()
    (tmp_path / "nowhere" / MANIFEST).write_text("{not json")
    assert main(["data", "restore", "--store", "nowhere", "--quiet"]) != 0
    assert "not JSON" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["0.00", "0.35", "-1.20", "9.99", "-15.00", "#1", "#-4", "#0"])
def test_labels_round_trip(text):
    code = label_code(text)
    assert code is not None and label_text(code) == text


@pytest.mark.parametrize("text", ["12.5", "#+3", "-0.00", "0.350", "", "x"])
def test_labels_written_otherwise_are_kept_as_text(text):
    assert label_code(text) is None


def test_the_manifest_lists_checksums_that_hold(tree, tmp_path):
    shelf = tmp_path / "store"
    store(shelf, root=tree, progress=False)
    manifest = json.loads((shelf / MANIFEST).read_text())
    import hashlib

    for name, shard in manifest["shards"].items():
        assert hashlib.sha256((shelf / name).read_bytes()).hexdigest() == shard["sha256"]
        assert shard["bytes"] <= 16 * 2**20
    for f in manifest["files"]:
        assert hashlib.sha256((tree / f["path"]).read_bytes()).hexdigest() == f["sha256"]
    assert manifest["whole"] == {"data/generated/more/odds.csv.parts/recipe.json": '{"seed": 7}\n'}
    shutil.rmtree(tree)   # the store alone restores it
    assert restore(shelf, root=tmp_path / "again", progress=False)["written"] == 3


def _game(moves: list[str], labels: list[str], game_id: str = "gen9") -> list[list[str]]:
    """Rows of a made-up game in the generator's layout: each row's board, move and label, the rest blank but
    the columns a replay fills (so only the cells the replay gets wrong become exceptions)."""
    import chess

    board = chess.Board()
    rows = []
    for ply, (uci, label) in enumerate(zip(moves, labels, strict=True)):
        row = [""] * len(csslab.COLUMNS)
        row[0], row[csslab.COLUMNS.index("move_ply")] = game_id, str(ply)
        row[csslab.COLUMNS.index("board")] = board.fen()
        row[csslab.COLUMNS.index("move")] = uci
        row[csslab.COLUMNS.index("cp_rel")] = label
        rows.append(row)
        board.push(chess.Move.from_uci(uci) if uci else chess.Move.null())
    return rows


def _round_trip(tmp_path: Path, rows: list[list[str]]) -> tuple[bytes, bytes]:
    root = tmp_path / "src"
    (root / "data/generated").mkdir(parents=True, exist_ok=True)
    text = csslab.HEADER_LINE + "\n" + "".join(",".join(r) + "\n" for r in rows)
    (root / "data/generated/games.csv").write_text(text)
    store(tmp_path / "store", root=root, progress=False)
    restore(tmp_path / "store", root=tmp_path / "out", progress=False)
    return text.encode(), (tmp_path / "out/data/generated/games.csv").read_bytes()


def test_null_moves_repetitions_and_unreadable_rows_come_back(tmp_path):
    shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"] * 2 + ["g1f3"]
    rows = _game(shuffle, ["0.30", "-0.30"] * 4 + ["0.30"])              # a threefold repetition on the way
    rows += _game(["e2e4", "0000", "d2d4", "d7d5"], ["0.30", "-0.30", "0.30", "-0.30"], "gen10")   # a null move
    odd = _game(["e2e4", "e7e5", "g1f3", "b8c6", "f1b5"], ["0.30", "", "inf", "0.10", "#2"], "gen11")
    odd[2][csslab.COLUMNS.index("board")] = "not a fen"                   # the rows a replay cannot read
    odd[3][csslab.COLUMNS.index("move")] = "e2e9"
    odd[4][csslab.COLUMNS.index("move")] = "a3a4"                         # from an empty square
    rows += odd
    original, restored = _round_trip(tmp_path, rows)
    assert restored == original


@pytest.mark.parametrize(("text", "why"), [
    (csslab.HEADER_LINE + "\n" + "x," * 46 + "x", "does not end in a newline"),
    (csslab.HEADER_LINE + "\r\n", "Windows line endings"),
    (csslab.HEADER_LINE + "\n" + "gen\x1f1," + "x," * 45 + "x\n", "unit separator"),
    (csslab.HEADER_LINE + "\n" + "gen\x001," + "x," * 45 + "x\n", "NUL"),
])
def test_files_the_store_cannot_keep_are_refused_by_name(tmp_path, text, why):
    root = tmp_path / "src"
    (root / "data/generated").mkdir(parents=True)
    (root / "data/generated/games.csv").write_text(text, newline="")
    with pytest.raises(StoreError, match=rf"games\.csv: .*{why}"):
        store(tmp_path / "store", root=root, progress=False)


def test_a_manifest_naming_paths_outside_the_project_is_refused(tree, tmp_path):
    shelf = tmp_path / "store"
    store(shelf, root=tree, progress=False)
    manifest = json.loads((shelf / MANIFEST).read_text())
    manifest["files"][0]["path"] = "../../etc/evil.csv"
    (shelf / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(StoreError, match="outside the project"):
        restore(shelf, root=tmp_path / "out", progress=False)
    del manifest["shards"]
    (shelf / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(StoreError, match="not a store manifest"):
        restore(shelf, root=tmp_path / "out", progress=False)


def test_storing_again_packs_a_damaged_shard_anew(tree, tmp_path):
    shelf = tmp_path / "store"
    first = store(shelf, root=tree, progress=False)
    name = next(iter(first["shards"]))
    (shelf / name).write_bytes(b"damaged")
    second = store(shelf, root=tree, progress=False)
    assert second["shards"][name]["sha256"] == first["shards"][name]["sha256"]
    assert restore(shelf, root=tmp_path / "out", progress=False)["written"] == 3


def test_a_store_kept_inside_the_checkout_is_said_to_go_with_the_machine(tree, tmp_path, capsys, monkeypatch):
    # the default data/store/ is ignored by git: a new machine starts without it (as one did), so storing there says so
    monkeypatch.chdir(tree)
    assert main(["data", "store", "--store", "data/store", "--quiet"]) == 0
    out = capsys.readouterr()
    assert "stored" in out.out and "data/store/" in out.err and "goes with this machine" in out.err
    assert main(["data", "store", "--store", str(tmp_path / "lasting"), "--quiet"]) == 0
    assert "goes with this machine" not in capsys.readouterr().err
    assert (tmp_path / "lasting" / MANIFEST).is_file()
