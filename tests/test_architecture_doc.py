"""docs/ARCHITECTURE.md tells the truth: every path it cites exists and every code name
it cites is defined in the code."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ARCHITECTURE.md"


def _cited() -> list[str]:
    """The `backticked` spans of the page, templates (``<name>``, ``*``) and commands
    (with a space) aside."""
    spans = re.findall(r"`([^`\n]+)`", DOC.read_text())
    return [s for s in spans if not re.search(r"[<*\s]", s) and not s.startswith(".")]


def _code_words() -> set[str]:
    words: set[str] = set()
    for pattern in ("scripts/**/*.py", "modules/**/*.h", "modules/**/*.c"):
        for p in ROOT.glob(pattern):
            words.update(re.findall(r"[A-Za-z_]\w*", p.read_text(errors="replace")))
    return words


def test_every_cited_path_exists() -> None:
    paths = [s for s in _cited() if "/" in s]
    assert len(paths) > 20
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, f"docs/ARCHITECTURE.md cites missing paths: {missing}"


def test_every_cited_name_is_defined() -> None:
    words = _code_words()
    names = [s.removesuffix("()") for s in _cited() if "/" not in s]
    assert len(names) > 20
    missing = [n for n in names if not all(part in words for part in n.split("."))]
    assert not missing, f"docs/ARCHITECTURE.md cites names the code lacks: {missing}"
