"""Check model files against the version they are for: ``python -m knights.learn.verify verify FILE...``.

:mod:`knights.learn.modelfile` checks what a file holds (its checksum, a plain state dict,
finite tensors); this module adds what only the registry knows: that the tensors are those of
the version the metadata names (every one of its network's tensors, of its shape and kind of
number, and no other), so a file with a tensor of the wrong shape and a re-recorded checksum
is not called "ok". ``stamp`` records the checksum of a file you trust
(:func:`~knights.learn.modelfile.stamp`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from knights.learn import registry
from knights.learn.modelfile import ModelFileError, expand_state, load_state, meta_of, stamp


def verify(path: str | Path) -> str:
    """Everything :func:`load_state` checks, and that the weights fit the version their metadata
    names (``"version"``: every tensor that version's network has, of its shape, and no other);
    returns what was checked, for ``verify``'s "ok" line."""
    path = Path(path)
    state = expand_state(load_state(path))
    name = (meta_of(path) or {}).get("version")
    if name is None:
        return "checksum and tensors (no version recorded: shapes not checked)"
    try:
        version = registry.get(str(name))
    except ValueError as exc:
        raise ModelFileError(f"{path}: its metadata names version {name!r}, which is not here ({exc})") from None
    own = version.build().state_dict()
    want = {k: tuple(v.shape) for k, v in own.items()}
    got = {k: tuple(v.shape) for k, v in state.items()}
    kinds = [f"{k} ({state[k].dtype}, expected {v.dtype})" for k, v in own.items()
             if k in state and v.is_floating_point() != state[k].is_floating_point()]
    missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
    wrong = [f"{k} {list(got[k])} (expected {list(want[k])})" for k in want if k in got and got[k] != want[k]]
    problems = ([f"missing {', '.join(missing[:3])}"] if missing else []) + \
               ([f"not in {version.name}: {', '.join(extra[:3])}"] if extra else []) + \
               ([f"wrong shape: {', '.join(wrong[:3])}"] if wrong else []) + \
               ([f"wrong kind of number: {', '.join(kinds[:3])}"] if kinds else [])
    if problems:
        raise ModelFileError(f"{path}: the weights do not fit {version.name}: {'; '.join(problems)}")
    return f"checksum, tensors and {version.name}'s shapes"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m knights.learn.verify stamp|verify FILE...``"""
    parser = argparse.ArgumentParser(prog="python -m knights.learn.verify",
                                     description="record or check the SHA-256 of model weight files")
    sub = parser.add_subparsers(dest="command", required=True)
    st = sub.add_parser("stamp", help="record each file's checksum in its metadata (files you trust)")
    st.add_argument("files", nargs="+")
    st.add_argument("--force", action="store_true", help="replace a different recorded checksum")
    ve = sub.add_parser("verify", help="check each file against its recorded checksum, load it, and compare its "
                                       "tensors with the version its metadata names")
    ve.add_argument("files", nargs="+")
    args = parser.parse_args(argv)
    failed = 0
    for name in args.files:
        try:
            if args.command == "stamp":
                print(f"{name}: sha256 {stamp(name, force=args.force)}")
            else:
                print(f"{name}: ok ({verify(name)})")
        except (FileNotFoundError, ModelFileError, OSError) as exc:
            print(f"{parser.prog} {args.command}: error: {exc}", file=sys.stderr)
            failed += 1
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
