"""The README is a door: at most 150 lines, no line over 200 characters, the first
command within the first 40 lines, and every link resolves. The repository layout table
(docs/layout.md) matches the tree: every path it lists exists, and every module and
package of ``scripts/nnopt/`` (and every module of ``passes/``, which the table lists one
by one) is listed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "scripts" / "nnopt"
#: The packages (relative to scripts/nnopt/; "" the package itself) the table lists in
#: full: each module (``name.py``) and subpackage (``name/``) must appear.
FULLY_LISTED = ("", "passes")


README = ROOT / "README.md"
LAYOUT = ROOT / "docs" / "layout.md"


def test_readme_is_short() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines (at most 150)"
    long = [i + 1 for i, line in enumerate(lines) if len(line) > 200]
    assert not long, f"README.md lines over 200 characters: {long}"
    first = next(i for i, line in enumerate(lines) if line.lstrip("$ ").startswith("nnopt "))
    assert first < 40, "the first command comes after line 40"


def test_readme_links_resolve() -> None:
    text = README.read_text()
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert len(links) >= 10
    for link in links:
        if link.startswith(("http://", "https://")):
            continue
        path = ROOT / link.split("#", 1)[0]
        assert path.exists(), f"README.md links a file that is not in the repository: {link}"
    # every file path the README names in backticks exists too (templates aside, and
    # paths outside the repository such as ../shared/models, absent in a user's clone)
    for span in re.findall(r"`([^`\s]+/[^`\s]*)`", text):
        top = span.split("/", 1)[0]
        if not re.search(r"[<*$]", span) and top not in ("build", "..") \
                and (ROOT / top).is_dir():
            assert (ROOT / span).exists(), f"README.md names a missing path: {span}"


def _rows() -> dict[str, str]:
    """The layout table: its first column's path -> its second column's text."""
    section = LAYOUT.read_text()
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
    assert not missing, f"docs/layout.md rows name missing paths: {missing}"


def test_every_listed_module_exists() -> None:
    listed = _listed(_rows()["scripts/nnopt/"])
    assert len(listed) > 30
    missing = [p for p in listed if not (PACKAGE / p).exists()]
    assert not missing, f"docs/layout.md lists missing scripts/nnopt/ paths: {missing}"


def test_every_module_is_listed() -> None:
    listed = set(_listed(_rows()["scripts/nnopt/"]))
    unlisted = sorted(m for pkg in FULLY_LISTED for m in _modules(pkg) - listed)
    assert not unlisted, f"docs/layout.md does not list: {unlisted}"
