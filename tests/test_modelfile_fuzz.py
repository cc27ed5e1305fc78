"""Property suite over model files (issue 25), beside the data and UCI ones: whatever bytes
or state dict a ``.pt`` holds, loading it either gives finite tensors that fit the version
or refuses it with a :class:`~knights.learn.modelfile.ModelFileError` naming the file;
never a traceback from deeper down, never an "ok" for weights that cannot be played.
Real torch and the real loaders; bounded to a few seconds."""

from __future__ import annotations

import io
import json
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knights.learn import modelfile, registry
from knights.learn.store import sha256_file
from knights.learn.verify import main as verify_main

_SETTINGS = settings(max_examples=15, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow])
VERSION = registry.get("EL/v1")
SHAPES = {k: tuple(v.shape) for k, v in VERSION.build().state_dict().items()}


def _stamped(folder: Path, payload: bytes, version: str | None = "EL/v1") -> Path:
    """``payload`` as ``v1.pt`` with metadata recording its checksum (so that the content
    checks, not the checksum, must refuse it)."""
    pt = folder / "v1.pt"
    pt.write_bytes(payload)
    meta: dict[str, object] = {"sha256": sha256_file(pt)}
    if version is not None:
        meta["version"] = version
    (folder / "v1.json").write_text(json.dumps(meta))
    return pt


def _saved(obj: object) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


_values = st.sampled_from([0.0, 1.0, -2.5, 1e30, float("nan"), float("inf"), -float("inf")])


@st.composite
def state_dicts(draw: st.DrawFn) -> dict[str, object]:
    """The version's own state dict, changed: tensors dropped, reshaped, filled with odd values
    or replaced by other objects, keys added."""
    state: dict[str, object] = {k: torch.zeros(s) for k, s in SHAPES.items()}
    for name in draw(st.lists(st.sampled_from(sorted(SHAPES)), max_size=3, unique=True)):
        change = draw(st.sampled_from(["drop", "reshape", "fill", "int", "object"]))
        if change == "drop":
            del state[name]
        elif change == "reshape":
            state[name] = torch.zeros(*[d + draw(st.integers(1, 2)) for d in SHAPES[name]] or [2])
        elif change == "fill":
            state[name] = torch.full(SHAPES[name], draw(_values))
        elif change == "int":
            state[name] = torch.zeros(SHAPES[name], dtype=torch.int64)
        else:
            state[name] = draw(st.sampled_from([[1, 2], "text", 3.0, None]))
    if draw(st.booleans()):
        state[draw(st.text(min_size=1, max_size=12))] = torch.zeros(draw(st.integers(0, 3)))
    return state


def _verify(pt: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = verify_main(["verify", str(pt)])
    return code, err.getvalue()


@_SETTINGS
@given(state_dicts())
def test_a_changed_state_dict_loads_only_when_it_fits(state: dict[str, object]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        pt = _stamped(Path(folder), _saved(state))
        fits = (set(state) == set(SHAPES) and all(
            isinstance(v, torch.Tensor) and tuple(v.shape) == SHAPES[k] and v.is_floating_point()
            and bool(torch.isfinite(v).all()) for k, v in state.items()))
        try:
            modelfile.load_into(VERSION.build(), pt)
            loaded = True
        except modelfile.ModelFileError as exc:
            assert str(pt) in str(exc)
            loaded = False
        code, err = _verify(pt)
        assert (code == 0) == fits, (state.keys(), err)
        assert loaded == fits or (loaded and all(isinstance(v, torch.Tensor) for v in state.values()))
        if code:
            assert str(pt) in err and "Traceback" not in err


@_SETTINGS
@given(st.binary(max_size=400), st.sampled_from(["EL/v1", None, "EL/v999", "nonsense"]))
def test_random_bytes_are_refused_naming_the_file(payload: bytes, version: str | None) -> None:
    with tempfile.TemporaryDirectory() as folder:
        pt = _stamped(Path(folder), payload, version)
        code, err = _verify(pt)
        assert code == 2 and str(pt) in err and "Traceback" not in err


@_SETTINGS
@given(st.one_of(st.lists(st.integers(), max_size=3), st.integers(), st.text(max_size=10),
                 st.dictionaries(st.text(max_size=5), st.integers(), max_size=3)))
def test_other_pickled_objects_are_refused(obj: object) -> None:
    with tempfile.TemporaryDirectory() as folder:
        pt = _stamped(Path(folder), _saved(obj))
        code, err = _verify(pt)
        assert code == 2 and str(pt) in err
