"""Every version's notebook runs end to end on the committed sample (quick=True)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from knights.learn import registry
from knights.learn.notebooks import run_notebook, version_notebook

VERSIONS = registry.all_versions()


@pytest.mark.slow
@pytest.mark.parametrize("version", VERSIONS, ids=[v.name for v in VERSIONS])
def test_notebook_runs_quick(version, tmp_path):
    out_dir = tmp_path / "models"
    executed = run_notebook(version.notebook, tmp_path / "run.ipynb",
                            {"quick": True, "out_dir": str(out_dir)}, progress=False)
    nb = json.loads(executed.read_text())
    errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    model, meta = version.load(out_dir)
    assert meta["quick"] is True and meta["version"] == version.name
    assert (out_dir / f"v{version.number}_loss.png").stat().st_size > 1000
    from knights.data.cache import ChunkCache, load_encoded
    from knights.data.chunks import select_chunks
    from knights.learn.experiment import SAMPLE_DATA

    data = load_encoded(select_chunks(registry.REPO_ROOT / SAMPLE_DATA, "k"), ChunkCache(tmp_path / "c"))
    with torch.no_grad():
        out = model(*version.library.INPUTS.tensors(data.take(slice(0, 64))))
    assert np.isfinite(out.numpy()).all()


def test_committed_notebooks_match_the_template():
    import nbformat

    for version in VERSIONS:
        committed = nbformat.read(version.notebook, as_version=4)
        fresh = version_notebook(version)
        assert [c.source for c in committed.cells] == [c.source for c in fresh.cells], version.name
        assert "parameters" in committed.cells[1].metadata.get("tags", [])
        assert all(not c.get("outputs") for c in committed.cells if c.cell_type == "code")
