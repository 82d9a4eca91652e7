"""The C header generated from nnopt.cdefs is the one checked in."""

from __future__ import annotations

from conftest import REPO
from nnopt.cdefs import render_header


def test_defs_header_is_generated_from_python() -> None:
    checked_in = (REPO / "modules/nnrt/include/nnrt/defs.h").read_text()
    assert checked_in == render_header(), (
        "modules/nnrt/include/nnrt/defs.h is stale: regenerate with "
        "`python -m nnopt.cdefs > modules/nnrt/include/nnrt/defs.h`")
