"""The versions table at work: rebuild an archived version, check what the table says, and keep the tree small.

``source_EL/versions.toml`` and ``source_SL/versions.toml`` (read by :func:`knights.learn.registry.table`) name
every version's parent, what changed, its status and the checksum of its weights; only the weights of shipped
and kept versions are in git. This module does what the table promises (docs/versions.md):

* :func:`rebuild` (``make version V=EL/v5``, or ``python -m knights.learn.versions rebuild EL/v5``) trains an
  archived version again from its recipe (:func:`knights.learn.registry.recipe`) on the data it was trained on
  (checked first: the chunks' checksum must be the one its metadata records), the way that gives the same bytes
  every time (:func:`deterministic`), compares the weights' SHA-256 with the table's, and puts them where the
  version's weights belong (``models_EL/vN.pt``, which git ignores for an archived version). A parent whose
  weights are missing is rebuilt first. ``--quick`` rebuilds the quick run on the committed sample and checks it
  against ``quick_sha256``: what CI can rebuild without ``data/full``;
* :func:`differences`: what a version changes from its parent, worked out from the two libraries and the data
  their metadata records (the table's ``differs`` must say the same: tests/test_versions.py);
* :func:`glance`: the table as one markdown table a row a version (docs/versions.md holds it);
* :func:`tracked_bytes`: the size of the tracked tree, which must stay within :data:`TREE_LIMIT`.

Bit for bit means: the same code, torch, data and recipe, one thread (:data:`THREADS`; a run on two threads
gives other bytes than a run on one), on an x86-64 CPU. Measured in issue 55 (docs/versions.md, "Rebuilding").
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from knights.common import module_main
from knights.data.cache import file_checksum
from knights.learn import registry

TREE_LIMIT = 48 * 1024 * 1024
"""The tracked tree's ceiling in bytes (48 MiB): the working tree must travel to a machine that takes 64 MiB."""
THREADS = 1
"""Torch threads of a rebuild: the bytes of a run depend on how many threads sum its products, and every
machine has one."""
DETERMINISTIC_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "ATEN_CPU_CAPABILITY": "avx2",
                     "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "AVX2,STRICT"}
"""The environment a rebuild's process starts torch in, so that every x86-64 CPU with AVX2 computes alike: one
thread, torch's own kernels (ATen), oneDNN's convolutions and MKL's products all held to their AVX2 code (an
AVX-512 CPU's oneDNN convolutions give other bytes, and MKL picks its code by the CPU's maker unless told). The
command sets it before torch is imported (:func:`main`); :func:`rebuild` refuses to run without it."""
WORK = registry.REPO_ROOT / "runs" / "versions"
"""Where a rebuild trains (git ignores ``runs/``); the weights are copied to the models folder once checked."""


def work_dir(version: registry.Version, quick: bool = False) -> Path:
    """Where a rebuild of ``version`` trains and leaves its weights (``<family>_v<N>[.quick]`` under :data:`WORK`)."""
    return WORK / f"{version.family}_v{version.number}{'.quick' if quick else ''}"


def cpu_name() -> str:
    """The CPU as a quick checksum is recorded for: ``'<vendor> <family>/<model>'`` from ``/proc/cpuinfo``
    (``'GenuineIntel 6/167'``), else the platform's processor. oneDNN's convolutions choose their blocking by the
    CPU, so a quick run with a convolution gives one CPU model's bytes (docs/versions.md, "Bit for bit")."""
    import platform

    try:
        info = dict(line.split(":", 1) for line in Path("/proc/cpuinfo").read_text().splitlines()[:40] if ":" in line)
        fields = {k.strip(): v.strip() for k, v in info.items()}
        return f"{fields['vendor_id']} {fields['cpu family']}/{fields['model']}"
    except (OSError, KeyError, ValueError):
        return platform.processor() or platform.machine() or "unknown"


class RebuildError(RuntimeError):
    """A rebuild that could not start or whose weights are not the recorded ones (one line)."""


# -- determinism ----------------------------------------------------------------------------------------------------
def deterministic(threads: int = THREADS) -> None:
    """Make this process's training bit-reproducible: ``threads`` torch threads, and only algorithms torch calls
    deterministic (an op without one fails instead of drifting). The process must have started torch under
    :data:`DETERMINISTIC_ENV` (which only takes effect before torch is imported)."""
    wrong = {k: os.environ.get(k) for k, v in DETERMINISTIC_ENV.items()
             if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS") and os.environ.get(k) != v}
    if wrong:
        raise RebuildError(f"a rebuild needs torch started under {' '.join(f'{k}={v}' for k, v in wrong.items())}: "
                           f"run `{registry.REBUILD.format(name='EL/vN')}` or python -m knights.learn.versions")
    import torch

    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)


def sha256(path: Path) -> str:
    return file_checksum(path, "sha256")


# -- rebuilding -----------------------------------------------------------------------------------------------------
@dataclass
class Rebuilt:
    """What a rebuild gave: the weights' checksum beside the recorded one, the time, and the held-out figures of
    the rebuilt network beside the ones the version's metadata records."""

    name: str
    quick: bool
    sha256: str
    expected: str | None
    seconds: float
    weights: Path
    installed: Path | None = None
    test: dict[str, Any] = field(default_factory=dict)
    recorded_test: dict[str, Any] = field(default_factory=dict)
    parents: list[str] = field(default_factory=list)
    per_cpu: bool = False       # the quick checksums are recorded per CPU model

    @property
    def matches(self) -> bool:
        return self.sha256 == self.expected

    def line(self) -> str:
        verdict = ("equals the recorded checksum" if self.matches else
                   ("no checksum is recorded for this CPU" if self.per_cpu else "no checksum is recorded")
                   if self.expected is None else
                   f"differs from the recorded {self.expected[:12]}...")
        where = f", installed as {registry.repo_relative(self.installed)}" if self.installed else ""
        return (f"{self.name}{' (quick run)' if self.quick else ''}: sha256 {self.sha256[:12]}... {verdict} "
                f"({self.seconds:.0f} s{where})")


def data_check(name: str) -> None:
    """Refuse, in one line, a rebuild whose training or validation chunks are not the ones the version's
    metadata records (a folder missing, regenerated otherwise or grown since): before hours of training."""
    from knights.data.cache import file_checksum
    from knights.learn.experiment import run_data
    from knights.learn.modelfile import read_meta

    version = registry.get(name)
    meta = read_meta(version.meta_path())
    try:
        plan = run_data(version, **registry.recipe(name))
    except FileNotFoundError as exc:
        if "data/full" in str(exc) or "chunk folder not found" in str(exc):
            raise RebuildError(f"{name} trains on data/full, which is not here: `make data` generates it "
                               "(about 22 min of Stockfish on 2 cores)") from None
        raise RebuildError(str(exc)) from None
    for split in ("train", "val"):
        digest = hashlib.sha1("".join(file_checksum(f) for f in plan.files[split]).encode()).hexdigest()
        recorded = meta["data"][split]["sha1"]
        if digest != recorded:
            folders = sorted({registry.repo_relative(f.parent) for f in plan.files[split]})
            raise RebuildError(f"{name}: the {split} chunks in {', '.join(folders)} are not the ones it trained on "
                               f"(sha1 {digest[:12]}..., its metadata records {recorded[:12]}...): regenerate the "
                               "data as its library says, or restore the original weights from git (docs/versions.md)")


def _fresh_checkpoint(version: registry.Version) -> Path:
    """A full run keeps its checkpoint at ``runs/<family>_v<N>.ckpt`` and resumes from it: a rebuild must not.
    One there is moved aside (``.before-rebuild``), never deleted."""
    ckpt = registry.REPO_ROOT / "runs" / f"{version.family}_v{version.number}.ckpt"
    if ckpt.exists():
        os.replace(ckpt, ckpt.with_name(ckpt.name + ".before-rebuild"))
    return ckpt


def rebuild(name: str, *, quick: bool = False, install: bool = True, threads: int = THREADS, progress: bool = True,
            retrain: bool = False, report: Callable[[str], None] = print) -> Rebuilt:
    """Train version ``name`` again by its recipe, deterministically, and compare the weights' SHA-256 with the
    table's (``quick``: the quick run on the committed sample against ``quick_sha256``).

    A full rebuild checks the data first (:func:`data_check`), rebuilds a parent whose weights are missing, and,
    when the checksum matches and ``install``, copies the weights to ``models_*/vN.pt`` (the committed metadata
    beside them records the same checksum). Weights that do not match are left in :data:`WORK` and reported.
    A version whose recorded weights were trained in another environment than a rebuild's (its row names the
    ``weights_commit`` that holds them) is restored from git history instead (:func:`restore`), unless
    ``retrain`` or the history is not here."""
    from knights.learn.experiment import run_version

    version = registry.get(name)
    row = registry.entry(version.name)
    if row.weights_commit and not quick and install and not retrain:
        t0 = time.perf_counter()
        try:
            path = restore(version.name)
        except RebuildError as exc:
            report(f"{version.name}: {exc}; training it from the recipe instead")
        else:
            out = Rebuilt(version.name, False, sha256(path), row.sha256, time.perf_counter() - t0, path,
                          installed=path)
            report(f"{out.line()}: restored from git history at {row.weights_commit[:9]}, not retrained (its "
                   "recorded weights come from another environment than a rebuild's; --retrain trains it)")
            return out
    parents: list[str] = []
    parent = getattr(version.library, "PARENT", None)
    if not quick:
        data_check(version.name)
        if parent and not registry.get(parent).is_trained():
            report(f"{version.name} starts from {parent}'s weights, which are not here: rebuilding {parent} first")
            first = rebuild(parent, install=True, threads=threads, progress=progress, retrain=retrain, report=report)
            if not first.matches:
                raise RebuildError(f"{parent} rebuilt to other weights than recorded; {version.name} not rebuilt")
            parents = [parent, *first.parents]
    deterministic(threads)
    work = work_dir(version, quick)
    shutil.rmtree(work, ignore_errors=True)
    checkpoint = _fresh_checkpoint(version) if not quick else work / f"{version.family}_v{version.number}.ckpt"
    t0 = time.perf_counter()
    try:
        result = run_version(version.name, quick=quick, out_dir=work, device="cpu", progress=progress,
                             **({} if quick else registry.recipe(version.name)))
    finally:
        checkpoint.unlink(missing_ok=True)
    seconds = time.perf_counter() - t0
    from knights.learn.modelfile import read_meta

    recorded = read_meta(version.meta_path()).get("test", {}) if version.meta_path().is_file() else {}
    expected = row.quick_checksum(cpu_name()) if quick else row.sha256
    out = Rebuilt(version.name, quick, sha256(result.weights), expected, seconds, result.weights,
                  test=result.meta.get("test", {}), recorded_test=recorded, parents=parents,
                  per_cpu=quick and isinstance(row.quick_sha256, dict))
    if out.matches and install and not quick:
        target = version.weights()
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        shutil.copyfile(result.weights, tmp)
        os.replace(tmp, target)
        out.installed = target
    report(out.line())
    return out


def quick_in_process(name: str, *, threads: int = THREADS, timeout: float = 1800) -> str:
    """The SHA-256 of version ``name``'s quick run, rebuilt in a fresh process under :data:`DETERMINISTIC_ENV`
    with ``threads`` threads (what CI checks, and how tests/test_versions.py runs it: a process that has not
    touched torch's thread pool yet)."""
    env = {**os.environ, **DETERMINISTIC_ENV}
    cmd = [sys.executable, "-m", "knights.learn.versions", "rebuild", name, "--quick", "--threads", str(threads),
           "--no-progress"]
    done = subprocess.run(cmd, cwd=registry.REPO_ROOT, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)
    found = re.search(r"sha256 ([0-9a-f]{12})\.\.\.", done.stdout)
    if not found:
        raise RebuildError(f"{' '.join(cmd[1:])} failed (exit {done.returncode}): "
                           f"{(done.stderr.strip().splitlines() or ['no output'])[-1]}")
    version = registry.get(name)
    return sha256(work_dir(version, quick=True) / version.weights().name)


# -- recording and restoring ---------------------------------------------------------------------------------------
def _table_block(text: str, key: str) -> re.Match[str]:
    found = re.search(rf"^\[{key}\]\n.*?(?=^\[v\d+\]\n|\Z)", text, flags=re.S | re.M)
    if not found:
        raise RebuildError(f"no [{key}] in the versions table")
    return found


def _toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(round(value, 6))
    if isinstance(value, int):
        return str(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def record(name: str, *, commit: str, seconds: float | None = None, test: dict[str, Any] | None = None) -> str:
    """Make the weights of version ``name``'s last rebuild (in :data:`WORK`) the version's weights: their SHA-256
    goes into its versions table (``sha256``, the one before under ``rebuilt.original_sha256`` with the ``commit``
    that still holds those bytes) and its metadata (``models_*/vN.json``, every other key kept), and they are put
    in the models folder. For a version whose committed weights predate deterministic training (docs/versions.md);
    returns the new checksum."""
    from knights.learn.modelfile import read_meta, write_meta

    version = registry.get(name)
    row = registry.entry(version.name)
    built = WORK / f"{version.family}_v{version.number}" / version.weights().name
    if not built.is_file():
        raise RebuildError(f"{version.name} has no rebuilt weights in {registry.repo_relative(built.parent)}: "
                           f"rebuild it first (python -m knights.learn.versions rebuild {version.name} --no-install)")
    digest = sha256(built)
    where = registry.VERSION_TABLES[version.family]
    text = where.read_text()
    block = _table_block(text, f"v{version.number}").group(0)
    new = re.sub(r'^sha256 = "[0-9a-f]{64}"$', f'sha256 = "{digest}"', block, count=1, flags=re.M)
    new = re.sub(r"^\[v\d+\.rebuilt\]\n(?:[^\[].*\n?)*", "", new, flags=re.M).rstrip("\n") + "\n"
    original = row.rebuilt.get("original_sha256", row.sha256)
    facts: dict[str, Any] = {"original_sha256": original, "original_commit": commit, "threads": THREADS}
    if seconds is not None:
        facts["seconds"] = round(seconds)
    if test:
        facts["test"] = {k: (float(f"{v:.4g}") if isinstance(v, float) else v) for k, v in test.items()}
    new += f"\n[v{version.number}.rebuilt]\n" + "".join(f"{k} = {_toml_value(v)}\n" for k, v in facts.items())
    where.write_text(text.replace(block, new.rstrip("\n") + "\n\n" if block.endswith("\n\n") else new))
    registry._table.cache_clear()
    meta = read_meta(version.meta_path())
    meta["sha256"] = digest
    write_meta(version.meta_path(), meta)
    tmp = version.weights().with_name(f".{version.weights().name}.{os.getpid()}.tmp")
    shutil.copyfile(built, tmp)
    os.replace(tmp, version.weights())
    return digest


def restore(name: str) -> Path:
    """Bring back an archived version's weights from git history: the table's ``weights_commit`` holds them (for
    a version whose checksum was not re-recorded from a rebuild). Quicker than a rebuild, and exact; possible only
    in a clone with that history."""
    version = registry.get(name)
    row = registry.entry(version.name)
    command = registry.rebuild_command(version.name)
    if row.weights_commit is None:
        why = ("its weights were re-recorded from a deterministic rebuild, and the bytes in git history are an older "
               "run's" if row.rebuilt else "its table row names no commit holding its weights")
        raise RebuildError(f"{version.name}: {why}; `{command}` rebuilds them")
    path = f"{registry.FAMILIES[version.family][1]}/{version.weights().name}"    # as git holds it
    done = subprocess.run(["git", "show", f"{row.weights_commit}:{path}"], cwd=registry.REPO_ROOT,
                          capture_output=True, check=False)
    if done.returncode:
        raise RebuildError(f"git has no {path} at {row.weights_commit[:9]} here (a shallow clone?): `{command}` "
                           "rebuilds it")
    if hashlib.sha256(done.stdout).hexdigest() != row.sha256:
        raise RebuildError(f"{path} at {row.weights_commit[:9]} is not the recorded weights")
    version.weights().parent.mkdir(parents=True, exist_ok=True)
    tmp = version.weights().with_name(f".{version.weights().name}.{os.getpid()}.tmp")
    tmp.write_bytes(done.stdout)
    os.replace(tmp, version.weights())
    return version.weights()


# -- what the table claims ------------------------------------------------------------------------------------------
def network_signature(model: Any) -> str:
    """The architecture apart from how many inputs it reads: the layers as PyTorch prints them with every
    input width hidden, and the widths of the parameters a module holds itself (an accumulator's)."""
    text = re.sub(r"in_features=\d+", "in_features=?", repr(model))
    text = re.sub(r"(Conv2d|Embedding\w*)\(\d+,", r"\1(?,", text)
    own = [(k, tuple(v.shape[1:])) for k, v in model.named_parameters(recurse=False)]
    return f"{text}\n{own}"


def _data_of(version: registry.Version) -> tuple[Any, ...]:
    from knights.learn.modelfile import read_meta

    lib, rec = version.library, registry.recipe(version.name)
    meta = read_meta(version.meta_path()) if version.meta_path().is_file() else {}
    recorded = tuple(meta.get("data", {}).get(s, {}).get("sha1") for s in ("train", "val"))
    letters = (rec.get("train", lib.DATA["train"]), rec.get("val", lib.DATA["val"]))
    return (letters, tuple(getattr(lib, "MORE", ())), getattr(lib, "TRAIN_ON", "all"),
            getattr(lib, "TRAIN_MAIN", True), recorded)


def _training_of(version: registry.Version) -> tuple[Any, ...]:
    lib, rec = version.library, registry.recipe(version.name)
    setup = {k: v for k, v in asdict(lib.TRAIN).items() if k not in ("epochs", "batch_size")}
    return (sorted(setup.items()), rec.get("epochs", lib.TRAIN.epochs), rec.get("batch_size", lib.TRAIN.batch_size))


def differences(name: str) -> list[str]:
    """What version ``name`` changes from its parent (the table's ``parent``), in the table's kinds
    (:data:`knights.learn.registry.DIFFERENCES`), worked out from the two libraries, their recipes and the data
    their metadata records; ``[]`` for a first network."""
    version = registry.get(name)
    row = registry.entry(version.name)
    if row.parent is None:
        return []
    parent = registry.get(row.parent)
    a, b = version.library, parent.library
    found = {
        "network": network_signature(version.build()) != network_signature(parent.build()),
        "inputs": a.INPUTS != b.INPUTS,
        "target": (getattr(a, "TARGET", "pawns"), repr(getattr(a, "BUCKETS", None)))
                  != (getattr(b, "TARGET", "pawns"), repr(getattr(b, "BUCKETS", None))),
        "loss": (repr(getattr(a, "RANKING", None)), getattr(a, "PENALTY", None))
                != (repr(getattr(b, "RANKING", None)), getattr(b, "PENALTY", None)),
        "training": _training_of(version) != _training_of(parent),
        "data": _data_of(version) != _data_of(parent),
        "start": getattr(a, "PARENT", None) is not None,
    }
    return [kind for kind in registry.DIFFERENCES if found[kind]]


def glance(family: str | None = None) -> str:
    """The versions tables as one markdown table, a row a version: name, parent, what it differs by, what
    changed, status and who uses it (what docs/versions.md shows)."""
    lines = ["| version | parent | differs by | what changed | status | used by |", "|---|---|---|---|---|---|"]
    for name, row in registry.table(family).items():
        only_data = row.differs == ("data",)
        differs = "**data only**" if only_data else ", ".join(row.differs) or "(a first network)"
        used = "; ".join("report" if kind == "report" else
                         f"{kind}: {', '.join(w if kind == 'bot' else Path(w).stem for w in row.uses(kind))}"
                         for kind in registry.USES if row.uses(kind)) or "-"
        status = f"**{row.status}**" if row.status == registry.SHIPPED else row.status
        lines.append(f"| {name} | {row.parent or '-'} | {differs} | {row.changed} | {status} | {used} |")
    return "\n".join(lines) + "\n"


# -- the tree's size ------------------------------------------------------------------------------------------------
def tracked_files(root: Path = registry.REPO_ROOT) -> list[Path]:
    """The files git tracks in the working tree (``git ls-files``)."""
    done = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True)
    return [root / p for p in done.stdout.decode().split("\0") if p]


def tracked_bytes(root: Path = registry.REPO_ROOT) -> dict[str, int]:
    """Bytes of the tracked files by top-level folder (a file at the root under its own name), as
    ``git ls-files -z | xargs -0 du -cb`` counts them; files tracked but deleted count nothing."""
    out: dict[str, int] = {}
    for path in tracked_files(root):
        if path.is_file() and not path.is_symlink():
            top = path.relative_to(root).parts[0]
            out[top] = out.get(top, 0) + path.stat().st_size
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


# -- the command ----------------------------------------------------------------------------------------------------
DESCRIPTION = "rebuild archived versions from their recipes, show the versions table, check the tree's size"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="command", required=True)
    rb = sub.add_parser("rebuild", help="train versions again from their recipes and check their checksums")
    rb.add_argument("names", nargs="*", help="versions, e.g. EL/v5 SL/v2 (none: --archived)")
    rb.add_argument("--archived", action="store_true", help="every archived version whose weights are not here")
    rb.add_argument("--quick", action="store_true", help="the quick run on the committed sample (quick_sha256)")
    rb.add_argument("--no-install", action="store_true", help="leave the weights in runs/versions/")
    rb.add_argument("--threads", type=int, default=THREADS, help=f"torch threads (default {THREADS}: the "
                    "recorded checksums are one thread's)")
    rb.add_argument("--retrain", action="store_true", help="train even a version whose recorded weights git "
                    "history holds (weights_commit)")
    rb.add_argument("--no-progress", action="store_true")
    rc = sub.add_parser("record", help="make a version's last rebuild (runs/versions/) its weights: checksum into "
                        "its table and metadata, weights into the models folder (maintainers)")
    rc.add_argument("names", nargs="+")
    rc.add_argument("--commit", required=True, help="the commit that still holds the weights recorded before")
    rs = sub.add_parser("restore", help="bring an archived version's weights back from git history")
    rs.add_argument("names", nargs="+")
    sub.add_parser("table", help="the versions tables as one markdown table (docs/versions.md)")
    sz = sub.add_parser("size", help="the tracked tree's bytes by folder; exit 1 above the limit")
    sz.add_argument("--limit", type=int, default=TREE_LIMIT)


def run(args: argparse.Namespace) -> int:
    if args.command == "table":
        print(glance(), end="")
        return 0
    if args.command == "record":
        for name in args.names:
            print(f"{name}: recorded sha256 {record(name, commit=args.commit)}")
        return 0
    if args.command == "restore":
        for name in args.names:
            print(f"{name}: restored {registry.repo_relative(restore(name))}")
        return 0
    if args.command == "size":
        sizes = tracked_bytes()
        for top, size in sizes.items():
            print(f"{size:>12,}  {top}")
        total = sum(sizes.values())
        verdict = "within" if total <= args.limit else "OVER"
        print(f"{total:>12,}  tracked in all ({total / 2**20:.1f} MiB), {verdict} the limit of "
              f"{args.limit / 2**20:.0f} MiB")
        return 0 if total <= args.limit else 1
    names = [registry.get(n).name for n in args.names]
    if args.archived:
        names += [n for n in registry.archived() if n not in names and not registry.get(n).is_trained()]
    if not names:
        raise ValueError("name a version (e.g. EL/v5), or --archived")
    results = [rebuild(n, quick=args.quick, install=not args.no_install, threads=args.threads,
                       progress=not args.no_progress, retrain=args.retrain) for n in names]
    bad = [r for r in results if not r.matches]
    for r in bad:
        what = "no checksum is recorded for them" if r.expected is None else "they are not the recorded ones"
        print(f"{r.name}: the rebuilt weights are kept in {registry.repo_relative(r.weights)}; {what}: see "
              "docs/versions.md, 'When a rebuild differs'", file=sys.stderr)
    return 1 if bad else 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m knights.learn.versions rebuild NAME... | record | restore | table | size``"""
    if "torch" not in sys.modules:   # the rebuild's settings take effect only before torch starts
        os.environ.update(DETERMINISTIC_ENV)
    return module_main("knights.learn.versions", DESCRIPTION, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
