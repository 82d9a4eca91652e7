"""MkDocs hooks of the documentation site (mkdocs.yml ``hooks:``): docs/cli.md's
``{{ cli_reference }}`` line becomes the reference generated from nnopt's argument
parser at build time (:mod:`nnopt.commands.reference`), never a hand-made copy."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/: this tree's nnopt

from nnopt.cli import build_parser
from nnopt.commands.reference import MARKER, markdown


def on_page_markdown(text: str, page: Any, **_kwargs: Any) -> str:
    if MARKER in text:
        return text.replace(MARKER, markdown(build_parser()))
    return text
