"""Labelling in shards: three shards played apart and merged give the single-machine file,
byte for byte; a merge that lacks parts writes nothing and says which shard to run, how."""

from __future__ import annotations

import json
import shlex

import pytest

from knights.cli import main
from knights.data.generate import Recipe, generate
from knights.data.shards import Shard, ShardsIncomplete, Share, merge, prefix, scan_parts

RECIPE = Recipe(seed=11, depth=3, games_per_part=2, max_plies=60)
POSITIONS = 300


def test_every_part_has_exactly_one_shard():
    for n in (1, 2, 3, 7):
        shards = [Shard(k, n) for k in range(1, n + 1)]
        for part in range(50):
            owners = [s for s in shards if s.owns(part)]
            assert owners == [Shard.owner(part, n)]
        # a shard's parts, in order, are the ones it owns
        for s in shards:
            assert [s.part(j) for j in range(5)] == [p for p in range(5 * n) if s.owns(p)]


@pytest.mark.parametrize("text", ["0/3", "4/3", "x", "3", "1/0", "-1/3", "2/3/4", ""])
def test_bad_shard_values_are_refused_naming_the_flag(text, capsys):
    with pytest.raises(ValueError, match="use K/N with 1 <= K <= N"):
        Shard.parse(text)
    with pytest.raises(SystemExit) as exit_:
        main(["data", "generate", f"--shard={text}", "--out", "unused.csv"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "argument --shard" in err and repr(text) in err


def test_until_part_needs_a_shard(capsys, tmp_path):
    assert main(["data", "generate", "--until-part", "3", "--out", str(tmp_path / "g.csv")]) == 2
    assert "--until-part" in capsys.readouterr().err and not (tmp_path / "g.csv.parts").exists()
    with pytest.raises(SystemExit):
        main(["data", "generate", "--shard", "1/2", "--until-part", "x"])
    assert "argument --until-part" in capsys.readouterr().err


def test_a_share_stops_at_its_target_and_until_part():
    share = Share(Shard(2, 3), target=100)
    assert not share.complete({})
    assert share.next_parts({}, 2) == [1, 4]
    assert not share.complete({1: 60, 7: 60})         # part 4 missing: 7 does not count yet
    assert share.complete({1: 60, 4: 40})
    assert share.next_parts({1: 60}, 2) == [4, 7]
    further = Share(Shard(2, 3), target=100, until_part=10)
    assert not further.complete({1: 60, 4: 40}) and further.complete({1: 60, 4: 40, 7: 1, 10: 1})
    assert further.next_parts({1: 60, 4: 40}, 1) == [7, 10]
    assert prefix({0: 10, 1: 10, 3: 10}, 25) == (2, 20)   # part 2 missing: the prefix stops there
    assert prefix({0: 10, 1: 10, 3: 10}, 15) == (2, 20)


@pytest.mark.stockfish
def test_three_shards_merge_to_the_single_machine_file(stockfish, tmp_path, capsys):
    one = tmp_path / "one" / "games.csv"
    generate(one, POSITIONS, RECIPE, progress=False, stockfish_path=stockfish)
    single_parts = scan_parts(tmp_path / "one" / "games.csv.parts")

    runs = [tmp_path / f"machine{k}" / "games.csv" for k in (1, 2, 3)]
    for k, out in enumerate(runs, start=1):
        report = generate(out, POSITIONS, RECIPE, progress=False, stockfish_path=stockfish, shard=Shard(k, 3))
        assert not out.exists()            # a shard writes parts, never the CSV
        parts = scan_parts(out.parent / "games.csv.parts")
        assert parts and all(p % 3 == k - 1 for p in parts)
        assert report.rows >= Shard(k, 3).target(POSITIONS) and report.parts == len(parts)
        for p, path in parts.items():      # the same part is the same bytes wherever it is played
            if p in single_parts:
                assert path.read_bytes() == single_parts[p].read_bytes()

    merged = tmp_path / "merged.csv"
    result = merge(merged, None, runs)     # positions: the one the shards recorded
    assert merged.read_bytes() == one.read_bytes()
    assert result.rows == sum(1 for _ in merged.open()) - 1 >= POSITIONS

    # the same through the command line, from the .parts folders, and with --dedup
    generate(one, POSITIONS, RECIPE, dedup=True, progress=False, stockfish_path=stockfish)  # reuses every part
    argv = ["data", "merge", "--out", str(merged), "--positions", str(POSITIONS), "--dedup",
            "--from", *(f"{r}.parts" for r in runs)]
    assert main(argv) == 0
    assert "positions from" in capsys.readouterr().out
    assert merged.read_bytes() == one.read_bytes()


@pytest.mark.stockfish
def test_a_short_merge_writes_nothing_and_names_the_shard_to_run(stockfish, tmp_path, capsys):
    one = tmp_path / "one.csv"
    generate(one, POSITIONS, RECIPE, progress=False, stockfish_path=stockfish)
    runs = [tmp_path / f"m{k}" / "g.csv" for k in (1, 2, 3)]
    for k, out in enumerate(runs, start=1):
        generate(out, POSITIONS, RECIPE, progress=False, stockfish_path=stockfish, shard=Shard(k, 3))

    # the last part the file needs goes missing (as if its shard had stopped one part short)
    rows = {p: sum(1 for _ in path.open()) for r in runs for p, path in scan_parts(r.parent / "g.csv.parts").items()}
    last = prefix(rows, POSITIONS)[0] - 1
    owner = Shard.owner(last, 3)
    home = runs[owner.index - 1]
    (home.parent / "g.csv.parts" / f"part-{last:06d}.csv").unlink()

    merged = tmp_path / "merged.csv"
    with pytest.raises(ShardsIncomplete) as short:
        merge(merged, POSITIONS, runs)
    assert not merged.exists() and not (tmp_path / "merged.csv.tmp").exists()
    message = str(short.value)
    assert f"part {last} is missing" in message
    commands = [line.split(": ", 1)[1] for line in message.splitlines() if "knights data generate" in line]
    assert len(commands) == 1 and f"--shard {owner} " in commands[0] and f"--until-part {last}" in commands[0]
    assert f"--out {home}" in commands[0]

    # the command line says the same, and running the command it names completes the run
    assert main(["data", "merge", "--out", str(merged), "--from", *map(str, runs)]) == 2
    assert commands[0] in capsys.readouterr().err
    argv = shlex.split(commands[0])
    assert argv[:3] == ["knights", "data", "generate"]
    assert main([*argv[1:], "--quiet"]) == 0
    marker = json.loads((home.parent / "g.csv.parts" / f"shard-{owner.index}-of-3.json").read_text())
    assert marker["finished"] and marker["until_part"] == last
    merge(merged, POSITIONS, runs)
    assert merged.read_bytes() == one.read_bytes()


def test_folders_of_other_recipes_or_without_parts_are_refused(tmp_path):
    for name, seed in (("a", 1), ("b", 2)):
        folder = tmp_path / f"{name}.csv.parts"
        folder.mkdir()
        (folder / "recipe.json").write_text(json.dumps({**Recipe(seed=seed).key("Stockfish 15.1")}))
    with pytest.raises(RuntimeError, match="different recipes"):
        merge(tmp_path / "out.csv", 10, [tmp_path / "a.csv", tmp_path / "b.csv.parts"])
    with pytest.raises(FileNotFoundError, match=r"nothing\.parts holds no generated parts"):
        merge(tmp_path / "out.csv", 10, [tmp_path / "nothing"])
    with pytest.raises(ValueError, match="--positions"):
        merge(tmp_path / "out.csv", None, [tmp_path / "a.csv"])
    with pytest.raises(ShardsIncomplete, match="part 0 is missing"):
        merge(tmp_path / "out.csv", 10, [tmp_path / "a.csv"])
    assert not (tmp_path / "out.csv").exists()
