"""The labelled positions as a compact, checksummed store: ``knights data store`` / ``restore``.

Labelling is the project's dearest work (about 10 h of Stockfish on 2 cores for the grown data)
and its CSV files do not outlive a machine. The store keeps what cannot be recomputed, the games'
moves and Stockfish's labels, and restores the very CSV files ``make data`` and ``make
more-data`` wrote, byte for byte (their sha256 is checked), so every recorded data checksum
still holds.

How a CSV file is kept. Rows come in *segments*: the rows of one game whose boards follow one
from another by the row's move (a deduplicated file drops rows, which starts a new segment).
A segment keeps its first board (FEN) and first ``move_ply``; each row keeps its move (16 bits)
and its label (``cp_rel``, centipawns or a mate, 32 bits); each game keeps its 13 game columns
(id, players, result, ...). Restoring replays the moves and computes every other column as
:func:`knights.data.generate.game_rows` did; the few cells that computation cannot know (the
loss columns of a game's last stored row, whose next value is not in the file) are kept as
*exceptions*, (row, column, text). Packing checks the prediction of every row against the file,
so the exceptions are exactly the cells that differ.

On disk (``--store``, default ``data/store/``, ignored by git)::

    store.json          the manifest: every file's path, rows, header flag and sha256; every
                        shard's name, bytes, rows and sha256; small text files kept whole
    <name>.npz          a shard: whole CSV files, numpy arrays only (loaded without pickle),
                        at most 16 MiB

Restoring is resumable: a file already present with the manifest's sha256 is kept; the others
are written through a temporary file and checked before they take their name.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import chess
import numpy as np

from knights.data import csslab
from knights.data.cache import file_checksum

FORMAT = 1
MANIFEST = "store.json"
SHARD_LIMIT = 16 * 1024 * 1024
"""Bytes a shard may hold (the GPU machine brings files back up to this size)."""
SHARD_ROWS = 700_000
"""Rows gathered into one shard before the next begins (about 4 MiB)."""
GAME_COLUMNS = csslab.COLUMNS[:13]
"""The columns that hold one value a game: ``game_id`` ... ``no_winner``."""
MATE_BASE = 1 << 30
"""A mate-in-n label is stored as ``MATE_BASE + n`` (n negative when the mover is mated)."""
COL = {name: i for i, name in enumerate(csslab.COLUMNS)}
SEP = "\x1f"


class StoreError(ValueError):
    """A store that cannot be restored: a missing or damaged shard, a file that comes back wrong."""


# -- labels and moves ------------------------------------------------------------
def label_code(text: str) -> int | None:
    """``"0.35"`` -> 35, ``"#-2"`` -> MATE_BASE - 2; None when the text would not come back the same."""
    try:
        code = MATE_BASE + int(text[1:]) if text.startswith("#") else round(float(text) * 100)
    except (ValueError, OverflowError):
        return None
    return code if abs(code) < 2**31 and label_text(code) == text else None


def label_text(code: int) -> str:
    if code > MATE_BASE // 2:
        return csslab.format_eval(mate=code - MATE_BASE) if code != MATE_BASE else "#0"
    return csslab.format_eval(cp=code)


def move_code(move: chess.Move) -> int:
    return move.from_square | move.to_square << 6 | (move.promotion or 0) << 12


def code_move(code: int) -> chess.Move:
    return chess.Move(code & 63, (code >> 6) & 63, (code >> 12) or None)


# -- one row predicted ------------------------------------------------------------
def predict_row(board: chess.Board, move: chess.Move, ply: int, label: str, next_label: str | None,
                game: Sequence[str]) -> list[str]:
    """Every column of a generated row from its board, move, ply, label, the next row's label
    (None at the end of a segment) and the game's 13 columns, as ``game_rows`` writes them."""
    row = [""] * len(csslab.COLUMNS)
    row[:13] = game
    b = csslab.format_bool
    white = board.turn == chess.WHITE
    before = csslab.eval_to_pawns(label)
    if next_label is not None:
        after = -csslab.eval_to_pawns(next_label)
    else:   # the game's end, if the move ends it; else no loss (an exception when that is wrong)
        board.push(move)
        end = _terminal(board)
        board.pop()
        after = before if end is None else -end
    loss = max(0.0, before - after)
    wr_before, wr_after = csslab.winrate(before), csslab.winrate(after)
    wr_loss = max(0.0, wr_before - wr_after)
    row[COL["move_ply"]] = str(ply)
    row[COL["move"]] = move.uci()
    row[COL["cp"]] = label if white else csslab.negate_eval(label)
    row[COL["cp_rel"]] = label
    row[COL["cp_loss"]] = csslab.format_pawns(loss)
    row[COL["is_blunder_cp"]] = b(loss >= csslab.BLUNDER_CP_PAWNS)
    row[COL["winrate"]] = f"{wr_before:.4f}"
    row[COL["winrate_loss"]] = f"{wr_loss:.4f}"
    row[COL["is_blunder_wr"]] = b(wr_loss >= csslab.BLUNDER_WINRATE)
    row[COL["opp_winrate"]] = f"{1.0 - wr_before:.4f}"
    row[COL["active_won"]] = game[COL["white_won"]] if white else game[COL["black_won"]]
    row[COL["is_capture"]] = b(board.is_capture(move))
    for name, value in csslab.position_columns(board).items():
        row[COL[name]] = value
    return row


def predict_or_blank(board: chess.Board, move: chess.Move, ply: int, label: str, next_label: str | None,
                     game: Sequence[str]) -> list[str]:
    """:func:`predict_row`, or every cell empty for a row it cannot read (a malformed label, an impossible move):
    such a row is kept whole as exceptions, on both sides of the store alike."""
    try:
        return predict_row(board, move, ply, label, next_label, game)
    except (ValueError, AssertionError, IndexError, KeyError):
        return [""] * len(csslab.COLUMNS)


def _terminal(board: chess.Board) -> float | None:
    from knights.data.generate import terminal_value

    return terminal_value(board)


# -- packing one shard --------------------------------------------------------------
@dataclass
class _Packed:
    moves: list[int] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    seg_row: list[int] = field(default_factory=list)
    seg_ply: list[int] = field(default_factory=list)
    seg_fen: list[str] = field(default_factory=list)
    game_row: list[int] = field(default_factory=list)
    games: list[str] = field(default_factory=list)
    exc_row: list[int] = field(default_factory=list)
    exc_col: list[int] = field(default_factory=list)
    exc_text: list[str] = field(default_factory=list)

    def arrays(self, files: Sequence[dict]) -> dict[str, np.ndarray]:
        def text(values: list[str]) -> np.ndarray:
            return np.array([v.encode() for v in values], dtype=bytes) if values else np.zeros(0, "S1")

        return {"format": np.array([FORMAT]), "moves": np.array(self.moves, np.uint16),
                "labels": np.array(self.labels, np.int32), "seg_row": np.array(self.seg_row, np.int64),
                "seg_ply": np.array(self.seg_ply, np.int32), "seg_fen": text(self.seg_fen),
                "game_row": np.array(self.game_row, np.int64), "games": text(self.games),
                "exc_row": np.array(self.exc_row, np.int64), "exc_col": np.array(self.exc_col, np.uint8),
                "exc_text": text(self.exc_text),
                "file_rows": np.array([f["rows"] for f in files], np.int64)}


def _read_rows(path: Path, header: bool) -> list[list[str]]:
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"{path}: cannot be read ({exc})") from None
    if text and not text.endswith("\n"):
        raise StoreError(f"{path}: does not end in a newline (a file cut short?)")
    if "\r" in text:
        raise StoreError(f"{path}: has Windows line endings (CRLF); the store keeps the generator's files (LF)")
    for bad, what in ((SEP, "the unit separator \\x1f"), ("\x00", "a NUL character")):
        if bad in text:
            raise StoreError(f"{path}: holds {what}, which the store cannot keep")
    lines = text.split("\n")[:-1] if text else []
    if header:
        if not lines or lines[0] != csslab.HEADER_LINE:
            raise StoreError(f"{path}: the first line is not the CSSLab header")
        lines = lines[1:]
    rows = [line.split(",") for line in lines]
    for i, row in enumerate(rows):
        if len(row) != len(csslab.COLUMNS):
            raise StoreError(f"{path}: row {i + 1 + header} has {len(row)} fields, not {len(csslab.COLUMNS)} "
                             "(the store keeps CSSLab CSV files without quoted fields)")
    return rows


def pack_rows(rows: Sequence[list[str]], out: _Packed, offset: int) -> None:
    """Add one file's rows (starting at row ``offset`` of the shard) to ``out``."""
    board: chess.Board | None = None
    last_game = None
    ply = -1
    game_columns: list[str] = []
    pending: list[tuple[int, chess.Board, chess.Move, int, list[str]]] = []   # the segment's rows, predicted at its end

    def close() -> None:
        for k, (r, before, move, p, columns) in enumerate(pending):
            label = rows[r][COL["cp_rel"]]
            nxt = rows[pending[k + 1][0]][COL["cp_rel"]] if k + 1 < len(pending) else None
            guess = predict_or_blank(before, move, p, label, nxt, columns)
            if label_code(label) is None:   # a label the 32 bits cannot hold: kept as text
                guess[COL["cp_rel"]] = label_text(out.labels[offset + r])
            for c, (want, got) in enumerate(zip(rows[r], guess, strict=True)):
                if want != got:
                    out.exc_row.append(offset + r)
                    out.exc_col.append(c)
                    out.exc_text.append(want)
        pending.clear()

    for r, row in enumerate(rows):
        game = row[0]
        same_game = game == last_game
        if not same_game:
            out.game_row.append(offset + r)
            out.games.append(SEP.join(row[:13]))
            game_columns = row[:13]
            last_game = game
        try:
            move = chess.Move.from_uci(row[COL["move"]]) if row[COL["move"]] else chess.Move.null()
            row_ply = int(row[COL["move_ply"]]) if row[COL["move_ply"]].isdigit() else -2
            follows = (board is not None and same_game and row_ply == ply + 1
                       and board.fen() == row[COL["board"]])
            start = None if follows else chess.Board(row[COL["board"]])
            current = board if start is None else start
            assert current is not None
            after = current.copy(stack=False)
            after.push(move)
        except (ValueError, AssertionError, IndexError):   # no board, no move: the row is kept whole
            close()
            out.seg_row.append(offset + r)
            out.seg_ply.append(-2)
            out.seg_fen.append("")
            out.labels.append(0)
            out.moves.append(0)
            for c, want in enumerate(row):
                if want:
                    out.exc_row.append(offset + r)
                    out.exc_col.append(c)
                    out.exc_text.append(want)
            board = None
            continue
        if start is not None:
            close()
            out.seg_row.append(offset + r)
            out.seg_ply.append(row_ply)
            out.seg_fen.append(row[COL["board"]])
            board = start
        assert board is not None
        code = label_code(row[COL["cp_rel"]])
        out.labels.append(0 if code is None else code)
        out.moves.append(move_code(move))
        pending.append((r, board.copy(stack=False), move, row_ply, game_columns))
        board = after
        ply = row_ply
    close()


def pack_shard(files: Sequence[dict], root: Path) -> bytes:
    """The ``.npz`` bytes of a shard holding ``files`` (dicts with ``path`` and ``header``)."""
    packed = _Packed()
    offset = 0
    read = []
    for f in files:
        rows = _read_rows(root / f["path"], f["header"])
        if f["rows"] != len(rows):
            raise StoreError(f"{f['path']}: {len(rows)} rows, {f['rows']} counted")
        pack_rows(rows, packed, offset)
        offset += len(rows)
        read.append(rows)
    buf = io.BytesIO()
    np.savez_compressed(buf, **packed.arrays(files))  # type: ignore[arg-type]
    data = buf.getvalue()
    lines = unpack_shard(data)                 # what a restore will write, checked now, while the files are here
    for f, rows in zip(files, read, strict=True):
        for i, row in enumerate(rows):
            if next(lines) != ",".join(row) + "\n":
                raise StoreError(f"{f['path']}: row {i + 1 + f['header']} would not come back as it is; "
                                 "the store cannot keep this file")
    return data


# -- restoring one shard ------------------------------------------------------------
def unpack_shard(data: bytes) -> Iterator[str]:
    """The CSV lines (no header, each with its newline) a shard holds, in order."""
    z = np.load(io.BytesIO(data), allow_pickle=False)
    if int(z["format"][0]) != FORMAT:
        raise StoreError(f"shard format {int(z['format'][0])}, this code reads {FORMAT}")
    moves, labels = z["moves"], z["labels"]
    n = len(moves)
    seg_row, seg_ply, seg_fen = z["seg_row"].tolist(), z["seg_ply"].tolist(), [s.decode() for s in z["seg_fen"]]
    game_row = z["game_row"].tolist()
    games = [g.decode().split(SEP) for g in z["games"]]
    exceptions: dict[int, list[tuple[int, str]]] = {}
    for r, c, t in zip(z["exc_row"].tolist(), z["exc_col"].tolist(), z["exc_text"], strict=True):
        exceptions.setdefault(r, []).append((c, t.decode()))
    texts = [label_text(int(c)) for c in labels.tolist()]
    seg_ends = [*seg_row[1:], n]
    g = -1
    for s, start in enumerate(seg_row):
        if not seg_fen[s]:                  # a row kept whole
            for r in range(start, seg_ends[s]):
                while g + 1 < len(game_row) and game_row[g + 1] <= r:
                    g += 1
                row = [""] * len(csslab.COLUMNS)
                for c, t in exceptions.get(r, ()):
                    row[c] = t
                yield ",".join(row) + "\n"
            continue
        board = chess.Board(seg_fen[s])
        for r in range(start, seg_ends[s]):
            while g + 1 < len(game_row) and game_row[g + 1] <= r:
                g += 1
            move = code_move(int(moves[r]))
            label = texts[r]
            fix = exceptions.get(r, ())
            for c, t in fix:
                if c == COL["cp_rel"]:
                    label = t
            nxt = None
            if r + 1 < seg_ends[s]:
                nxt = next((t for c, t in exceptions.get(r + 1, ()) if c == COL["cp_rel"]), texts[r + 1])
            row = predict_or_blank(board.copy(stack=False), move, seg_ply[s] + (r - start), label, nxt, games[g])
            for c, t in fix:
                row[c] = t
            yield ",".join(row) + "\n"
            board.push(move)


# -- the store ----------------------------------------------------------------------
def sha256(path: Path) -> str:
    return file_checksum(path, "sha256")


def count_lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 20), b""))


DEFAULT_SOURCES = ("data/generated/games.csv", "data/generated/*/*.csv.parts/part-*.csv")
"""What ``knights data store`` keeps: data/full's CSV and the finished parts of every grown set."""
KEPT_WHOLE = ("data/generated/games.csv.parts/recipe.json", "data/generated/*/*.csv.parts/recipe.json",
              "data/generated/*/timings.json")
"""Small text files kept whole: the recipes the generator checks before it resumes."""


def _glob(root: Path, patterns: Sequence[str]) -> list[Path]:
    found: list[Path] = []
    for pattern in patterns:
        found += sorted(p for p in root.glob(pattern) if p.is_file())
    return list(dict.fromkeys(found))


def _shard_name(files: Sequence[dict]) -> str:
    h = hashlib.sha256("".join(f["path"] + f["sha256"] for f in files).encode()).hexdigest()[:16]
    return f"{Path(files[0]['path']).parent.name.replace('.csv.parts', '')}-{h}.npz"


def store(store_dir: str | Path, *, root: str | Path = ".", sources: Sequence[str] = DEFAULT_SOURCES,
          whole: Sequence[str] = KEPT_WHOLE, workers: int = 1, progress: bool = True) -> dict:
    """Pack every CSV file under ``sources`` into shards in ``store_dir`` (a shard already there
    with the same files is kept) and write the manifest; returns it."""
    root, out = Path(root), Path(store_dir)
    paths = _glob(root, sources)
    if not paths:
        raise StoreError(f"nothing to store: no file matches {', '.join(sources)} under {root.resolve()}")
    out.mkdir(parents=True, exist_ok=True)
    files = [{"path": p.relative_to(root).as_posix(), "header": p.suffix == ".csv" and not p.name.startswith("part-"),
              "sha256": sha256(p)} for p in _progress(paths, progress, "checksums")]
    for f in files:
        f["rows"] = count_lines(root / f["path"]) - int(f["header"])
    groups: list[list[dict]] = []
    for f in files:
        same_folder = groups and Path(groups[-1][0]["path"]).parent == Path(f["path"]).parent
        if not same_folder or sum(g["rows"] for g in groups[-1]) + f["rows"] > SHARD_ROWS:
            groups.append([])
        groups[-1].append(f)
    todo = [(g, _shard_name(g)) for g in groups]
    try:            # a shard already here is kept only as the last manifest recorded it, and of this format
        before = read_manifest(out)["shards"]
    except StoreError:
        before = {}
    sound = {name: rec for name, rec in before.items()
             if (out / name).exists() and rec.get("sha256") == sha256(out / name)}
    missing = [(g, name) for g, name in todo if name not in sound]
    shards = {}
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {name: pool.submit(pack_shard, g, root) for g, name in missing}
        for name in _progress(list(futures), progress, "packing shards"):
            data = futures[name].result()
            if len(data) > SHARD_LIMIT:
                raise StoreError(f"shard {name} would hold {len(data)} bytes, over {SHARD_LIMIT}: lower SHARD_ROWS")
            tmp = out / f"{name}.tmp"
            tmp.write_bytes(data)
            os.replace(tmp, out / name)
    for g, name in todo:
        for f in g:
            f["shard"] = name
        shards[name] = {"rows": sum(f["rows"] for f in g), "bytes": (out / name).stat().st_size,
                        "sha256": sound[name]["sha256"] if name in sound else sha256(out / name)}
    manifest = {"format": FORMAT, "made": _dt.datetime.now().isoformat(timespec="seconds"),
                "positions": sum(f["rows"] for f in files), "files": files, "shards": shards,
                "whole": {p.relative_to(root).as_posix(): p.read_text() for p in _glob(root, whole)}}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    for stale in set(before) - set(shards):      # shards of the last manifest no file needs now
        if (out / stale).is_file() and Path(stale).name == stale:
            (out / stale).unlink()
    return manifest


def lasting_notice(store_dir: str | Path, root: str | Path = ".") -> str | None:
    """A word for a store kept inside the checkout it packs (as the default ``data/store/``, which git ignores): it
    lasts only as long as the machine does. ``None`` for a store kept elsewhere."""
    out, base = Path(store_dir).resolve(), Path(root).resolve()
    if not out.is_relative_to(base):
        return None
    return (f"note: the store is inside this checkout ({out.relative_to(base).as_posix()}/, which git ignores), so it "
            "goes with this machine: copy it somewhere that lasts, or store with STORE=/somewhere/that/lasts")


def read_manifest(store_dir: str | Path) -> dict:
    path = Path(store_dir) / MANIFEST
    if not path.exists():
        raise StoreError(f"{path}: no store manifest here (make it with knights data store --store {store_dir})")
    try:
        manifest = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise StoreError(f"{path}: not JSON ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        got = manifest.get("format") if isinstance(manifest, dict) else None
        raise StoreError(f"{path}: store format {got!r}, this code reads {FORMAT}")
    try:
        names = [f["path"] for f in manifest["files"]] + list(manifest["whole"])
        shards = manifest["shards"]
        if not all(f["shard"] in shards and isinstance(f["rows"], int) and isinstance(f["sha256"], str)
                   for f in manifest["files"]):
            raise KeyError("a file's shard, rows or sha256")
    except (KeyError, TypeError) as exc:
        raise StoreError(f"{path}: not a store manifest (missing {exc})") from None
    for name in names + list(shards):
        pure = Path(name)
        if pure.is_absolute() or ".." in pure.parts:
            raise StoreError(f"{path}: names {name!r}, outside the project; refused")
    return manifest


def _restore_shard(args: tuple[str, str, list[dict], str]) -> list[str]:
    """Check one shard and write its files marked ``keep: False`` (missing, or differing from the manifest);
    returns the paths written."""
    shard_path, want_sha, files, root = args
    data = Path(shard_path).read_bytes()
    if hashlib.sha256(data).hexdigest() != want_sha:
        raise StoreError(f"{shard_path}: sha256 differs from the manifest's (a damaged or partial copy)")
    lines = unpack_shard(data)
    written = []
    for f in files:
        target = Path(root) / f["path"]
        keep = f["keep"]
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".restoring")
        with open(tmp, "w", newline="") if not keep else open(os.devnull, "w") as fh:
            if f["header"]:
                fh.write(csslab.HEADER_LINE + "\n")
            for _ in range(f["rows"]):
                fh.write(next(lines))
        if keep:
            continue
        if sha256(tmp) != f["sha256"]:
            tmp.unlink()
            raise StoreError(f"{f['path']}: restored from {Path(shard_path).name} but its sha256 differs from the "
                             "manifest's")
        os.replace(tmp, target)
        written.append(f["path"])
    return written


def restore(store_dir: str | Path, *, root: str | Path = ".", workers: int = 1, progress: bool = True,
            after: Callable[[list[str]], None] | None = None) -> dict:
    """Write every file of the store under ``root`` (keeping those already equal); returns a summary."""
    manifest = read_manifest(store_dir)
    store_dir, root = Path(store_dir), Path(root)
    for name in manifest["shards"]:
        if not (store_dir / name).exists():
            raise StoreError(f"{store_dir / name}: shard named in the manifest is missing")
    by_shard: dict[str, list[dict]] = {}
    for f in manifest["files"]:               # each file present is hashed once, here
        target = root / f["path"]
        by_shard.setdefault(f["shard"], []).append({**f, "keep": target.exists() and sha256(target) == f["sha256"]})
    pending = {name: fs for name, fs in by_shard.items() if not all(f["keep"] for f in fs)}
    written: list[str] = []
    jobs = [(str(store_dir / name), manifest["shards"][name]["sha256"], fs, str(root)) for name, fs in pending.items()]
    jobs.sort(key=lambda j: -manifest["shards"][Path(j[0]).name]["rows"])   # the largest first
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for paths in _progress(pool.map(_restore_shard, jobs), progress, "restoring shards", total=len(jobs)):
            written += paths
    for path, text in manifest["whole"].items():
        target = root / path
        if not target.exists() or target.read_text() != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    if after:
        after(written)
    return {"positions": manifest["positions"], "files": len(manifest["files"]), "written": len(written),
            "kept": len(manifest["files"]) - len(written), "shards": len(manifest["shards"])}


def record(path: str | Path, key: str, figures: dict) -> None:
    """Merge one run's ``figures`` under ``key`` (``store`` or ``restore``) into the JSON file ``path``."""
    import platform

    from knights.common import write_json

    path = Path(path)
    doc = json.loads(path.read_text()) if path.exists() else {}
    doc[key] = {**figures, "made": _dt.datetime.now().isoformat(timespec="seconds"), "cores": os.cpu_count(),
                "python": platform.python_version()}
    write_json(path, doc)


def _progress(items, progress: bool, desc: str, total: int | None = None):
    if not progress:
        return items
    from tqdm import tqdm

    return tqdm(items, desc=desc, total=total, unit="shard" if "shard" in desc else "file")
