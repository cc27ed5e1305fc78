"""README.md for a first visit: what the project is, the two commands, how to run ``knights``,
and no measured figure typed by hand outside the generated results block (those went stale
and contradicted the block); the long material lives in docs/ and is linked."""

from __future__ import annotations

import json
import re

from knights.learn import registry

ROOT = registry.REPO_ROOT
README = (ROOT / "README.md").read_text()
BLOCK = re.compile(r"<!-- results:begin.*?<!-- results:end -->", re.S)


def test_readme_opens_with_what_the_project_is_then_the_two_commands():
    lines = README.splitlines()
    assert lines[0] == "# Knights and Kernels"
    first_code = README.index("```sh")
    intro = README[README.index("\n") : first_code]
    assert len(re.findall(r"[.!?](?:\s|$)", intro.strip())) == 2   # two sentences, not a page
    commands = README[first_code : README.index("```", first_code + 5)]
    assert "make play" in commands and "make test" in commands
    assert ".venv/bin/knights" in README and "source .venv/bin/activate" in README


def test_no_measured_figure_is_typed_outside_the_generated_block():
    assert len(BLOCK.findall(README)) == 1
    outside = BLOCK.sub("", README)
    outside = re.sub(r"[\w.-]+==[\d.]+|python3\.\d+|127\.0\.0\.1:\d+", "", outside)   # versions, addresses
    decimals = re.findall(r"(?<![\w.])\d+\.\d+(?![\w.])", outside)
    assert not decimals, f"README quotes {decimals} by hand: generate them or point to the results file"
    ratings = re.findall(r"\b1[0-9]{3}\b(?! \()", outside)
    assert not ratings, f"README quotes ratings {ratings} by hand"


def test_every_linked_document_exists():
    for text, base in ((README, ROOT), *(((ROOT / "docs" / d).read_text(), ROOT / "docs")
                                        for d in ("usage.md", "architecture.md"))):
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
            if not target.startswith("http"):
                assert (base / target).exists(), target


def test_the_sets_and_the_bots_have_one_name_each():
    """games/tactics/endgames are the selection sets (choices were made on them), data/final the final test set; the
    bots are the default bot (the search `make play` starts), the one-ply bot (--depth 1) and the fallback, named
    alike here and in the notebook map."""
    from knights.engine.spec import ONE_PLY_EVALUATOR, SEARCH_NETWORK, SPARSE_DEMOCRACY
    from knights.evaluate.names import DEFAULT_NETWORK

    assert "independent test set" not in README.lower() and "**selection sets**" in README
    assert "nothing was chosen on it" in README
    notebooks = (ROOT / "notebooks" / "README.md").read_text()
    for text in (README, notebooks):
        assert "default bot" in text and "one-ply bot" in text and "fallback" in text
        assert "fallback bot" not in text
    bots = README[README.index("**The bots.**"):]
    bots = bots[: bots.index("\n\n")]
    assert f"over {SEARCH_NETWORK}" in bots and f"`{ONE_PLY_EVALUATOR}`" in bots and "`--depth 1`" in bots
    assert f"{SPARSE_DEMOCRACY[0]} to\n  {SPARSE_DEMOCRACY[-1]}" in bots or \
        f"{SPARSE_DEMOCRACY[0]} to {SPARSE_DEMOCRACY[-1]}" in bots.replace("\n  ", " ")
    assert f"the democracy of {DEFAULT_NETWORK}" in bots


def test_the_democracy_question_has_its_notebook_and_its_paired_answer():
    """The democracy notebook is linked, and the final set's row carries the democracy's paired difference from
    its best member with the standard error, at the four decimals that show it (report/results/democracy.json)."""
    assert "](notebooks/democracy.ipynb)" in README
    final = json.loads((ROOT / "report" / "results" / "democracy.json").read_text())["final"]
    paired = final["chosen"]["paired_wp"]["best member on the selection sets"]["overall"]
    block = BLOCK.search(README)
    assert block is not None
    assert f"{paired['difference']:.4f} ± {paired['standard_error']:.4f}" in block.group(0)
    assert f"{final['chosen']['figures']['win_probability_error']:.4f}" in block.group(0)
