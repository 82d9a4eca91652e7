"""The README's layout table matches the tree: every path it lists exists, and every
module and package of ``scripts/nnopt/`` (and every module of ``passes/``, which the
table lists one by one) is listed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "scripts" / "nnopt"
#: The packages (relative to scripts/nnopt/; "" the package itself) the table lists in
#: full: each module (``name.py``) and subpackage (``name/``) must appear.
FULLY_LISTED = ("", "passes")


def _rows() -> dict[str, str]:
    """The layout table: its first column's path -> its second column's text."""
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = line.split(" | ")
        if line.startswith("| `") and len(cells) == 2:
            rows[cells[0].removeprefix("| ").strip("`")] = cells[1].removesuffix(" |")
    return rows


def _listed(text: str) -> list[str]:
    """The paths ``text`` names (backticked spans ending in ``.py`` or ``/``), relative
    to scripts/nnopt/: a name inside the parentheses after a package (``passes/``
    (``fuse.py`` ...)) is the package's, unless it already exists from the top."""
    out: list[str] = []
    stack: list[str] = []
    pending = ""  # the package whose "(" may come next
    for tok in re.findall(r"`[^`]+`|\(|\)", text):
        if tok == "(":
            stack.append(pending)
        elif tok == ")":
            if stack:
                stack.pop()
        else:
            name = tok.strip("`")
            pending = ""
            if not (name.endswith(".py") or name.endswith("/")) or " " in name:
                continue
            inner = "".join(stack) + name
            path = name if (PACKAGE / name).exists() and not stack else inner
            if not (PACKAGE / path).exists() and (PACKAGE / name).exists():
                path = name
            out.append(path)
            if name.endswith("/"):
                pending = path
    return out


def _modules(package: str) -> set[str]:
    """The modules and subpackages of ``package``, as the table spells them."""
    base = PACKAGE / package
    prefix = f"{package}/" if package else ""
    mods = {f"{prefix}{p.name}" for p in base.glob("*.py") if p.name != "__init__.py"}
    pkgs = {f"{prefix}{p.name}/" for p in base.iterdir() if (p / "__init__.py").exists()}
    return mods | pkgs


def test_every_row_path_exists() -> None:
    rows = _rows()
    assert "scripts/nnopt/" in rows and len(rows) > 5
    missing = [p for p in rows for part in p.split("`, `") if not (ROOT / part).exists()]
    assert not missing, f"README layout rows name missing paths: {missing}"


def test_every_listed_module_exists() -> None:
    listed = _listed(_rows()["scripts/nnopt/"])
    assert len(listed) > 30
    missing = [p for p in listed if not (PACKAGE / p).exists()]
    assert not missing, f"README layout lists missing scripts/nnopt/ paths: {missing}"


def test_every_module_is_listed() -> None:
    listed = set(_listed(_rows()["scripts/nnopt/"]))
    unlisted = sorted(m for pkg in FULLY_LISTED for m in _modules(pkg) - listed)
    assert not unlisted, f"README layout does not list: {unlisted}"
