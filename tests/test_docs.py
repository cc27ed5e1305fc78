"""The documents a newcomer reads hold to the tree they describe.

* ``docs/architecture.md`` names every module of the ``knights`` package (each file, and each
  package as ``name/``), and names nothing that does not exist.
* Every command shown in README.md and docs/usage.md still exists: a ``knights ...`` line parses
  with the command line's own parser (nothing is run), a ``make X`` line names a target of the
  Makefile, a ``python -m M`` / ``torchrun ... -m M`` line names a module that can be found, and a
  script named by its path exists.
* README.md stays a five-minute read (at most 900 words, a headline of at most eight rows that
  carries the always-level yardstick); docs/usage.md opens with a table of contents that links
  every section, and tells no history.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "knights"
README = ROOT / "README.md"
USAGE = ROOT / "docs" / "usage.md"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
COMMAND_DOCS = (README, USAGE)


# -- architecture.md lists every module ---------------------------------------------------------
def modules_on_disk() -> set[str]:
    """Every module under knights/ as architecture.md writes it: ``engine/build.py`` for a file,
    ``engine/`` for a package (its ``__init__.py``), ``__init__.py`` for the package itself."""
    out = set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if "__pycache__" in rel.parts or "node_modules" in rel.parts:
            continue
        if rel.name == "__init__.py" and rel.parent != Path("."):
            out.add(rel.parent.as_posix() + "/")
        else:
            out.add(rel.as_posix())
    return out


def modules_listed(text: str) -> list[str]:
    """The first column of every row of the module tables (those headed ``module (under
    `knights/`)``)."""
    listed = []
    for table in re.findall(r"^\| module \(under `knights/`\) \|.*?\n((?:\|.*\n?)+)", text, flags=re.M):
        for row in table.splitlines()[1:]:          # the separator row first
            cell = row.split("|")[1].strip()
            found = re.fullmatch(r"`([\w/.]+)`", cell)
            assert found, f"architecture.md: a module row whose first cell is not one `path`: {row}"
            listed.append(found.group(1))
    return listed


def test_architecture_lists_every_module_and_only_those():
    listed = modules_listed(ARCHITECTURE.read_text())
    on_disk = modules_on_disk()
    assert len(listed) == len(set(listed)), "architecture.md lists a module twice"
    missing = sorted(on_disk - set(listed))
    stale = sorted(set(listed) - on_disk)
    assert not missing, f"docs/architecture.md does not list {missing}: add a line for each"
    assert not stale, f"docs/architecture.md lists {stale}, which do not exist under knights/"


def test_the_module_check_can_fail():
    text = "| module (under `knights/`) | what |\n|---|---|\n| `engine/` | x |\n| `engine/nowhere.py` | y |\n"
    assert modules_listed(text) == ["engine/", "engine/nowhere.py"]
    assert "engine/nowhere.py" not in modules_on_disk()
    assert "engine/build.py" in modules_on_disk() and "engine/" in modules_on_disk()


# -- every command shown still exists -----------------------------------------------------------
STARTS = ("knights ", ".venv/bin/knights ", "make ", "python -m ", ".venv/bin/python -m ", "torchrun ",
          "python report/", "data/split.sh ")


def commands(text: str) -> list[tuple[str, bool]]:
    """The command lines of a Markdown text, each with whether it is whole: each line of a ``sh``
    block (comments cut) is; an inline code span that starts like a command is a mention, which
    may leave out what a command requires (`knights train` in a sentence)."""
    found = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                found.append((line, True))
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    found += [(span.strip(), False) for span in re.findall(r"`([^`\n]+)`", prose) if span.startswith(STARTS)]
    return found


def is_placeholder(token: str) -> bool:
    """``...``, ``SRC``, ``N``, ``<name>``, a glob or ``[--cut]``: the reader fills it in."""
    return ("..." in token or bool(re.fullmatch(r"[A-Z][A-Z_0-9]*", token)) or token.startswith(("<", "["))
            or "*" in token)


def makefile_targets() -> set[str]:
    targets = set()
    for line in (ROOT / "Makefile").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.\- ]+):(?!=)", line)
        if m:
            targets.update(m.group(1).split())
    return targets


def knights_parser() -> argparse.ArgumentParser:
    from knights.cli import build_parser

    return build_parser()


def subparser_for(parser: argparse.ArgumentParser, words: list[str]) -> tuple[argparse.ArgumentParser, list[str]]:
    """Walk ``words`` down the subcommands: the deepest parser reached and the words it consumed."""
    used: list[str] = []
    for word in words:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or word not in subs[0].choices:
            break
        parser = subs[0].choices[word]
        used.append(word)
    return parser, used


def knights_problem(parser: argparse.ArgumentParser, argv: list[str], whole: bool = True) -> str | None:
    """Why ``knights ARGV`` would not parse, or None. With placeholders in it, or when it is a
    mention (not ``whole``), only the subcommands and the option names are checked; else the
    whole line is parsed."""
    if all(is_placeholder(t) for t in argv):      # `knights ...`: the command line itself
        return None
    if is_placeholder(argv[0]):                   # `knights COMMAND --help`: any command
        unknown = [t for t in argv if t.startswith("-") and t not in parser._option_string_actions]
        return f"unknown options {unknown}" if unknown else None
    sub, used = subparser_for(parser, argv)
    if not used:
        return f"no knights command {argv[:1]}"
    if not whole or any(is_placeholder(t) for t in argv):
        known = sub._option_string_actions
        unknown = [t.split("=")[0] for t in argv if t.startswith("-") and t.split("=")[0] not in known]
        return f"unknown options {unknown}" if unknown else None
    out = io.StringIO()
    try:
        with contextlib.redirect_stderr(out), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(argv)
    except SystemExit as exc:
        return f"does not parse ({exc.code}): {out.getvalue().strip().splitlines()[-1:]}" if exc.code else None
    return None


def command_problem(line: str, parser: argparse.ArgumentParser, targets: set[str], whole: bool = True) -> str | None:
    try:
        words = shlex.split(line)
    except ValueError as exc:
        return f"cannot be split into words: {exc}"
    words = [w for w in words if not re.fullmatch(r"[A-Z_]+=.*", w)] if words[0] != "make" else words
    head = words[0]
    if head in ("knights", ".venv/bin/knights"):
        return knights_problem(parser, words[1:], whole)
    if head == "make":
        named = [w for w in words[1:] if "=" not in w and not w.startswith("-")]
        missing = [w for w in named if not is_placeholder(w) and w not in targets]
        return f"the Makefile has no target {missing}" if missing else None
    if "-m" in words:
        module = words[words.index("-m") + 1]
        if importlib.util.find_spec(module) is None:
            return f"no module {module}"
        if module == "knights.cli":
            return knights_problem(parser, words[words.index("-m") + 2:], whole)
        return None
    script = ROOT / head.removeprefix("python ").split()[-1] if head != "python" else ROOT / words[1]
    return None if script.exists() else f"no file {script.relative_to(ROOT)}"


@pytest.mark.parametrize("doc", COMMAND_DOCS, ids=lambda p: p.name)
def test_every_command_shown_still_exists(doc: Path):
    parser, targets = knights_parser(), makefile_targets()
    lines = commands(doc.read_text())
    assert len(lines) >= 5, f"{doc.name}: found only {lines}"
    problems = [f"{line}: {why}" for line, whole in lines if (why := command_problem(line, parser, targets, whole))]
    assert not problems, f"{doc.name} shows commands that no longer work:\n" + "\n".join(problems)


def test_the_command_check_can_fail():
    parser, targets = knights_parser(), makefile_targets()
    assert command_problem("knights play --depth 1", parser, targets) is None
    assert command_problem("knights play --no-such-option", parser, targets) is not None
    assert command_problem("knights nosuch", parser, targets) is not None
    assert command_problem("knights train", parser, targets) is not None            # a line to run: incomplete
    assert command_problem("knights train", parser, targets, whole=False) is None   # a mention
    assert command_problem("knights train --bogus", parser, targets, whole=False) is not None
    assert command_problem("knights data convert SRC DST --bogus", parser, targets) is not None
    assert command_problem("make play", parser, targets) is None
    assert command_problem("make no-such-target", parser, targets) is not None
    assert command_problem("python -m knights.no_such_module", parser, targets) is not None
    assert command_problem("python -m knights.learn.verify verify x.pt", parser, targets) is None
    text = "```sh\nmake play   # a comment\n```\nrun `knights uci` or `knights/cli.py`"
    assert commands(text) == [("make play", True), ("knights uci", False)]


# -- README.md: a five-minute read --------------------------------------------------------------
def test_readme_is_short_and_its_headline_carries_the_yardstick():
    text = README.read_text()
    assert len(text.split()) <= 900, f"README.md has {len(text.split())} words (at most 900)"
    block = re.search(r"<!-- results:begin.*?<!-- results:end -->", text, flags=re.S)
    assert block, "README.md has no generated results block"
    rows = [r for r in block.group(0).splitlines() if r.startswith("|") and not r.startswith("|---")][1:]
    assert 4 <= len(rows) <= 8, f"the headline has {len(rows)} rows (at most 8)"
    assert any("always guessing level" in r for r in rows), "the headline leaves out the always-level yardstick"
    assert "report/report.pdf" in text


# -- usage.md: a table of contents, no history ---------------------------------------------------
def anchor(title: str) -> str:
    """GitHub's anchor of a heading."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def test_usage_has_a_table_of_contents_of_every_section():
    text = USAGE.read_text()
    sections = re.findall(r"^##+ (.+)$", text, flags=re.M)
    start = text.find("\n## Contents\n")
    toc = text[start: text.index("\n## ", start + 1)] if start >= 0 else text[: text.index("\n## ")]
    links = re.findall(r"\]\(#([^)]+)\)", toc)
    assert links, "docs/usage.md has no table of contents before its first section"
    wanted = [anchor(s) for s in sections if s.strip().lower() != "contents"]
    assert [a for a in wanted if a not in links] == [], "sections the contents leave out"
    assert [a for a in links if a not in wanted] == [], "contents that link no section"


HISTORY = re.compile(r"\b(until this round|this round|used to|no longer|any more|anymore|now|previously|"
                     r"formerly|earlier versions?|at first)\b", re.I)


@pytest.mark.parametrize("doc", (USAGE, ARCHITECTURE), ids=lambda p: p.name)
def test_the_docs_tell_no_history(doc: Path):
    """A reference says what is, not what changed: those lines go stale the day they are written."""
    prose = re.sub(r"```.*?```|`[^`\n]*`", "", doc.read_text(), flags=re.S)
    found = sorted({m.group(0).lower() for m in HISTORY.finditer(prose)})
    assert not found, f"{doc.name} tells history: {found}"
