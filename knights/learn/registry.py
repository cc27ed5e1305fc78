"""The one place that knows where versions and their model files live.

A version is addressed by name, ``"EL/v8"`` or ``"SL/v2"``: its library is
``source_EL/v8/library.py``, its notebook ``source_EL/v8/train.ipynb``, its weights
``models_EL/v8.pt`` and its metadata ``models_EL/v8.json``. Nothing else in the
project builds these paths. It also names what is shipped by default (the default
network, the democracy's folder and its candidate networks, the threat-term suffix), so
that a program that must not wait for torch (``knights uci`` answering ``uci``) can list
and choose evaluators from the files alone: importing this module imports no torch
(the network is built and loaded lazily).
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torch import nn

REPO_ROOT = Path(__file__).resolve().parents[2]
FAMILIES = {"EL": ("source_EL", "models_EL"), "SL": ("source_SL", "models_SL")}
VERSION_TABLES = {family: REPO_ROOT / source / "versions.toml" for family, (source, _) in FAMILIES.items()}
"""Each family's versions table (``source_EL/versions.toml``): every version's parent, what changed, status,
checksum and recipe (:func:`table`; docs/versions.md)."""
ENSEMBLE_MODELS = REPO_ROOT / "ensemble" / "models"
"""The shipped democracy's folder (its manifest ``democracy.json`` and the learners' files)."""

FAST_NETWORKS = ("EL/v13", "EL/v15", "EL/v16", "EL/v17", "EL/v18", "EL/v19", "EL/v20", "EL/v21", "EL/v22", "EL/v23",
                 "EL/v24", "EL/v25", "EL/v26")
"""The versions the compiled search (knights.engine) evaluates: EL/v13's sparse network (768
features a side, accumulators of any width, 128 or 256 so far, a head of three layers), trained on different
data (a test checks that these are exactly the versions with its layers). Named here, beside the files, so
that the UCI engine lists their ``+quiesce`` names without importing the compiled code."""

def repo_path(path: str | Path) -> Path:
    """``path`` as given when absolute, else taken from the repository root."""
    p = Path(path)
    return p if p.is_absolute() else REPO_ROOT / p


def repo_relative(path: str | Path) -> str:
    """``path`` written relative to the repository root when it lies inside it (for
    metadata that should read the same on every machine)."""
    p = Path(path)
    return str(p.relative_to(REPO_ROOT) if p.is_relative_to(REPO_ROOT) else p)


@dataclass(frozen=True)
class Version:
    family: str   # "EL" or "SL"
    number: int

    @property
    def name(self) -> str:
        return f"{self.family}/v{self.number}"

    @property
    def source_dir(self) -> Path:
        return REPO_ROOT / FAMILIES[self.family][0] / f"v{self.number}"

    @property
    def library_path(self) -> Path:
        return self.source_dir / "library.py"

    @property
    def notebook(self) -> Path:
        return self.source_dir / "train.ipynb"

    def weights(self, models_dir: str | Path | None = None) -> Path:
        return (repo_path(models_dir) if models_dir else REPO_ROOT / FAMILIES[self.family][1]) / f"v{self.number}.pt"

    def meta_path(self, models_dir: str | Path | None = None) -> Path:
        return self.weights(models_dir).with_suffix(".json")

    @property
    def library(self) -> ModuleType:
        return _import_library(self.library_path, f"knights_{self.family.lower()}_v{self.number}")

    def build(self) -> nn.Module:
        """A freshly initialised network of this version."""
        model: nn.Module = self.library.build_model()
        return model

    def load(self, models_dir: str | Path | None = None) -> tuple[nn.Module, dict[str, Any]]:
        """The trained network (eval mode, CPU) and its metadata. Weights that are not here are a
        :class:`MissingWeights` in one line: for an archived version, the command that rebuilds them."""
        from knights.learn import modelfile

        path = self.weights(models_dir)
        if not path.is_file():
            raise MissingWeights(missing_weights(self.name, path))
        model = modelfile.load_into(self.build(), path)
        meta_file = self.meta_path(models_dir)
        meta = modelfile.read_meta(meta_file) if meta_file.exists() else {}
        return model.eval(), meta

    def is_trained(self, models_dir: str | Path | None = None) -> bool:
        return self.weights(models_dir).is_file()


@cache
def _import_library(path: Path, module_name: str) -> ModuleType:
    if not path.is_file():
        raise FileNotFoundError(f"version library not found: {path}")
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def get(name: str) -> Version:
    """``"EL/v8"`` (also ``"el/8"``, ``"EL/V8"``) to its :class:`Version`."""
    m = re.fullmatch(r"\s*(EL|SL)\s*/\s*v?(\d+)\s*", name, flags=re.IGNORECASE)
    if not m:
        raise ValueError(f"not a version name: {name!r} (expected e.g. 'EL/v8' or 'SL/v2')")
    version = Version(m.group(1).upper(), int(m.group(2)))
    if not version.library_path.is_file():
        raise ValueError(f"unknown version {version.name}: known are {', '.join(v.name for v in all_versions())}")
    return version


def all_versions(family: str | None = None) -> list[Version]:
    """Every version with a library on disk, EL then SL, by number."""
    out = []
    for fam, (src, _) in FAMILIES.items():
        if family and fam != family.upper():
            continue
        for lib in (REPO_ROOT / src).glob("v*/library.py"):
            digits = lib.parent.name[1:]
            if digits.isdigit():
                out.append(Version(fam, int(digits)))
    return sorted(out, key=lambda v: (v.family, v.number))


# -- the versions table ---------------------------------------------------------------------------------------------
SHIPPED, KEPT, ARCHIVED = "shipped", "kept", "archived"
STATUSES = (SHIPPED, KEPT, ARCHIVED)
"""shipped: a bot plays it, a notebook teaches with it or the report's story needs it re-measured; kept: its weights
stay in git only because a test loads them; archived: its weights are not in git (``make version V=...``)."""
DIFFERENCES = ("network", "inputs", "target", "loss", "training", "data", "start")
"""The kinds of change from a parent a versions table names (``differs``); see source_EL/versions.toml."""
BOTS = ("search", "one-ply", "democracy", "fallback")
"""What ``bot:`` names in ``used_by``: the searching bot (:data:`SEARCH_NETWORK`), the one-ply bot
(:data:`SPARSE_DEMOCRACY`), the shipped democracy (its manifest's members) and :data:`DEFAULT_NETWORK`."""
USES = ("bot", "notebook", "report", "test")
RECIPE_KEYS = ("epochs", "batch_size", "train", "val")
"""What a recipe may set: :func:`knights.learn.experiment.run_version`'s keywords of the same names."""
REBUILD = "make version V={name}"
"""The one command that brings an archived version's weights back (``python -m knights.learn.versions rebuild``)."""


class MissingWeights(FileNotFoundError):
    """A version's weights are not here: the message says why in one line and, for an archived version, the
    command that rebuilds them."""


class VersionTableError(ValueError):
    """A versions table that does not parse or breaks its own rules (named with the file and the version)."""


@dataclass(frozen=True)
class Entry:
    """One version's row of its family's versions table (:data:`VERSION_TABLES`)."""

    name: str
    parent: str | None
    changed: str
    differs: tuple[str, ...]
    status: str
    used_by: tuple[str, ...]
    sha256: str
    recipe: dict[str, Any] = field(default_factory=dict, hash=False)
    notes: str = ""
    rebuilt: dict[str, Any] = field(default_factory=dict, hash=False)
    quick_sha256: str | dict[str, str] | None = field(default=None, hash=False)
    """The quick run's checksum: one for every CPU, or one per CPU (keys: the start of
    :func:`knights.learn.versions.cpu_name`, as the bytes of a convolution depend on the CPU's model)."""
    weights_commit: str | None = None

    def quick_checksum(self, cpu: str) -> str | None:
        """The quick run's recorded checksum on ``cpu`` (:func:`knights.learn.versions.cpu_name`); ``None``: none
        is recorded for it."""
        if isinstance(self.quick_sha256, dict):    # the longest key that is the name or its first words
            keys = [k for k in self.quick_sha256 if cpu == k or cpu.startswith(k + " ")]
            return self.quick_sha256[max(keys, key=len)] if keys else None
        return self.quick_sha256

    @property
    def in_git(self) -> bool:
        """Whether the version's weights are committed (shipped or kept)."""
        return self.status != ARCHIVED

    def uses(self, kind: str) -> list[str]:
        """What ``used_by`` names of ``kind`` (``"bot"``, ``"notebook"``, ``"report"``, ``"test"``)."""
        return [ref.partition(":")[2] for ref in self.used_by if ref.partition(":")[0] == kind]


ENTRY_KEYS = {"parent", "changed", "differs", "status", "used_by", "sha256", "recipe", "notes", "rebuilt",
              "quick_sha256", "weights_commit"}


def _entry(family: str, key: str, row: dict[str, Any], where: Path) -> Entry:
    name = f"{family}/{key}"

    def bad(what: str) -> VersionTableError:
        return VersionTableError(f"{repo_relative(where)}: [{key}] {what}")

    if not re.fullmatch(r"v\d+", key) or not isinstance(row, dict):
        raise bad("is not a version table ([vN] with keys)")
    unknown = set(row) - ENTRY_KEYS
    missing = {"parent", "changed", "differs", "status", "used_by", "sha256", "recipe"} - set(row)
    if unknown or missing:
        raise bad(f"unknown keys {sorted(unknown)}" if unknown else f"lacks {sorted(missing)}")
    if row["status"] not in STATUSES:
        raise bad(f"status {row['status']!r} is not one of {', '.join(STATUSES)}")
    odd = [d for d in row["differs"] if d not in DIFFERENCES]
    if odd:
        raise bad(f"differs names {odd}, not among {', '.join(DIFFERENCES)}")
    refs = [r for r in row["used_by"] if r.partition(":")[0] not in USES or not r.partition(":")[2]]
    if refs:
        raise bad(f"used_by {refs}: each is kind:what, kind one of {', '.join(USES)}")
    if set(row["recipe"]) - set(RECIPE_KEYS):
        raise bad(f"recipe sets {sorted(set(row['recipe']) - set(RECIPE_KEYS))}; it may set {', '.join(RECIPE_KEYS)}")
    quick = row.get("quick_sha256", "0" * 64)
    for digest in (row["sha256"], *(quick.values() if isinstance(quick, dict) else [quick])):
        if not re.fullmatch(r"[0-9a-f]{64}", str(digest)):
            raise bad(f"{digest!r} is not a SHA-256 (64 hex digits)")
    return Entry(name=name, parent=row["parent"] or None, changed=row["changed"], differs=tuple(row["differs"]),
                 status=row["status"], used_by=tuple(row["used_by"]), sha256=row["sha256"], recipe=dict(row["recipe"]),
                 notes=row.get("notes", "").strip(), rebuilt=dict(row.get("rebuilt", {})),
                 quick_sha256=dict(quick) if isinstance(quick, dict) else row.get("quick_sha256"),
                 weights_commit=row.get("weights_commit"))


@cache
def _table(family: str) -> dict[str, Entry]:
    where = VERSION_TABLES[family]
    try:
        doc = tomllib.loads(where.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise VersionTableError(f"{repo_relative(where)}: {exc}") from None
    entries = {f"{family}/{key}": _entry(family, key, row, where) for key, row in doc.items()}
    return dict(sorted(entries.items(), key=lambda kv: int(kv[0].rpartition("/v")[2])))


def table(family: str | None = None) -> dict[str, Entry]:
    """Every version's :class:`Entry` by name (``"EL/v8"``), EL then SL, by number: the versions tables
    (:data:`VERSION_TABLES`; docs/versions.md). Reading them imports no torch."""
    out: dict[str, Entry] = {}
    for fam in FAMILIES:
        if family is None or fam == family.upper():
            out.update(_table(fam))
    return out


def entry(name: str) -> Entry:
    """The versions-table row of version ``name`` (any spelling :func:`get` takes)."""
    version = get(name)
    row = table(version.family).get(version.name)
    if row is None:
        raise VersionTableError(f"{version.name} has a library but no row in "
                                f"{repo_relative(VERSION_TABLES[version.family])}")
    return row


def recipe(name: str) -> dict[str, Any]:
    """The shipped run's settings of version ``name`` as keywords of
    :func:`knights.learn.experiment.run_version` (``epochs``, and ``batch_size``, ``train``, ``val`` where they are
    not the library's): what ``knights ship-models``, the notebook's full run and ``make version`` train with."""
    return dict(entry(name).recipe)


def shipped(family: str | None = None) -> list[str]:
    """The versions whose weights are committed (status shipped or kept)."""
    return [name for name, row in table(family).items() if row.in_git]


def archived(family: str | None = None) -> list[str]:
    """The versions whose weights are not in git: ``make version V=<name>`` rebuilds them."""
    return [name for name, row in table(family).items() if not row.in_git]


def rebuild_command(name: str) -> str:
    """The one command that rebuilds version ``name``'s weights from its recipe and checks their checksum."""
    return REBUILD.format(name=get(name).name)


def missing_weights(name: str, path: Path | None = None) -> str:
    """One line on why version ``name``'s weights are not here (at ``path``, default its models folder): for an
    archived version the command that rebuilds them; for a committed one, that git should have them."""
    version = get(name)
    where = path or version.weights()
    if where != version.weights():
        return f"{version.name} has no weights in {repo_relative(where.parent)} ({where.name} not found)"
    try:
        row = entry(version.name)
    except VersionTableError:
        row = None
    if row is not None and not row.in_git:
        return (f"{version.name} is archived, its weights are not in git: `{rebuild_command(version.name)}` rebuilds "
                "them from the recipe and checks their checksum")
    return (f"{version.name}'s weights {repo_relative(where)} are missing: they are committed, so "
            f"`git checkout -- {repo_relative(where)}` restores them")
