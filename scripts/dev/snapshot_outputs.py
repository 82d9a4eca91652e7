#!/usr/bin/env python3
"""Snapshot nnopt's generated outputs over every model, and compare two snapshots.

A refactor that must not change what nnopt writes is proved with this script: run
``snapshot`` at the base commit, again after each step, and ``compare`` the two trees.

    PYTHONPATH=scripts python scripts/dev/snapshot_outputs.py snapshot /tmp/before
    PYTHONPATH=scripts python scripts/dev/snapshot_outputs.py snapshot /tmp/after
    python scripts/dev/snapshot_outputs.py compare /tmp/before /tmp/after

``snapshot`` runs ``nnopt optimize -o DIR --emit c --emit blob`` over every ``.tflite``
and ``.onnx`` under ``models/`` and ``../shared/models`` in three variants (the default
options, ``--board nucleo_f767zi`` and ``--allocator dynamic``), each into its own
directory, with a fixed ``--swap-key`` so that sealed weight blobs are reproducible. A
model nnopt refuses leaves its error text (``error.txt``), compared like any output; a
model the blob cannot carry leaves ``blob_error.txt`` and is run again for the C alone.
The JSON plan and report are compared without their wall-clock fields (``*seconds*``).
``hashes.txt`` in the snapshot root lists every file's SHA-256.

To snapshot a commit while editing the tree, run nnopt from an export of it:
``git archive COMMIT | tar -x -C /tmp/src`` and ``PYTHONPATH=/tmp/src/scripts``."""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MODEL_DIRS = (ROOT / "models", ROOT.parent / "shared" / "models")
KEY = "000102030405060708090a0b0c0d0e0f"
VARIANTS: dict[str, tuple[str, ...]] = {
    "default": (),
    "f767": ("--board", "nucleo_f767zi"),
    "dynamic": ("--allocator", "dynamic"),
}


def models() -> list[tuple[str, Path]]:
    found: list[tuple[str, Path]] = []
    for base in MODEL_DIRS:
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.suffix in (".tflite", ".onnx") and path.is_file():
                ident = f"{base.parent.name}_{base.name}/{path.relative_to(base)}"
                found.append((ident.replace("/", "__"), path))
    return found


def _optimize(argv: list[str]) -> tuple[int, str]:
    from nnopt.cli import main

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exc:  # argparse
            status = int(exc.code or 0)
    return status, err.getvalue()


def run_one(job: tuple[str, str, Path, Path]) -> str:
    variant, ident, model, out = job
    target = out / variant / ident
    target.mkdir(parents=True, exist_ok=True)
    base = ["optimize", str(model), "-o", str(target), "--table", "none", "-q",
            "--swap-key", KEY, *VARIANTS[variant]]
    t0 = time.perf_counter()
    status, err = _optimize([*base, "--emit", "c", "--emit", "blob"])
    note = ""
    if status not in (0, 2):  # no blob for this model (or no model): the C alone
        (target / "blob_error.txt").write_text(f"exit {status}\n{err}")
        status, err = _optimize([*base, "--emit", "c"])
        note = ", no blob"
        if status not in (0, 2):
            (target / "error.txt").write_text(f"exit {status}\n{err}")
    return f"{variant}/{ident}: exit {status}{note} ({time.perf_counter() - t0:.1f} s)"


def _strip_clock(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_clock(v) for k, v in value.items() if "seconds" not in k}
    if isinstance(value, list):
        return [_strip_clock(v) for v in value]
    return value


def digest(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".json":
        data = json.dumps(_strip_clock(json.loads(data)), sort_keys=True).encode()
    return hashlib.sha256(data).hexdigest()


def hash_tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): digest(p) for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "hashes.txt"}


def snapshot(out: Path, jobs: int, only: str | None) -> int:
    work = [(v, ident, path, out) for v in VARIANTS for ident, path in models()
            if only is None or only in ident]
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        for line in pool.imap_unordered(run_one, work):
            print(line, flush=True)
    tree = hash_tree(out)
    (out / "hashes.txt").write_text("".join(f"{h}  {p}\n" for p, h in tree.items()))
    print(f"{len(tree)} files hashed into {out / 'hashes.txt'}")
    return 0


def compare(before: Path, after: Path) -> int:
    a, b = hash_tree(before), hash_tree(after)
    missing = sorted(set(a) - set(b))
    extra = sorted(set(b) - set(a))
    changed = sorted(p for p in set(a) & set(b) if a[p] != b[p])
    for label, paths in (("missing", missing), ("new", extra), ("changed", changed)):
        for p in paths:
            print(f"{label}: {p}")
    same = len(set(a) & set(b)) - len(changed)
    print(f"{len(a)} files before, {len(b)} after: {same} identical, {len(changed)} changed, "
          f"{len(missing)} missing, {len(extra)} new")
    return 0 if not (missing or extra or changed) else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("snapshot", help="run nnopt over every model into OUT")
    s.add_argument("out", type=Path)
    s.add_argument("-j", "--jobs", type=int, default=1)
    s.add_argument("--only", help="only models whose id contains this")
    c = sub.add_parser("compare", help="compare two snapshots' hash trees")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = ap.parse_args()
    if args.cmd == "snapshot":
        return snapshot(args.out, args.jobs, args.only)
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
