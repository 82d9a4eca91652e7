"""mbedTLS comes from the Debian archive the machine already trusts: the deb-src lines
are derived from its apt configuration, in both apt source formats."""

from __future__ import annotations

from pathlib import Path

from nnopt.swap.mbedtls_build import deb_src_lines


def test_one_line_and_deb822_sources(tmp_path: Path) -> None:
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text(
        "deb [arch=amd64 signed-by=/k.gpg] http://mirror.invalid/debian bookworm main contrib\n"
        "deb http://mirror.invalid/debian bookworm-updates main\n"
        "# deb http://commented.invalid/debian bookworm main\n")
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://other.invalid/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main\nSigned-By: /usr/share/keyrings/x.gpg\n\n"
        "Types: deb\nURIs: http://disabled.invalid/debian\nSuites: bookworm\n"
        "Components: main\nEnabled: no\n")
    (tmp_path / "sources.list.d" / "other.list").write_text(
        "deb http://third.invalid/apt stable main\n")
    assert deb_src_lines(tmp_path, "bookworm") == [
        "deb-src [signed-by=/usr/share/keyrings/x.gpg] http://other.invalid/debian bookworm main\n",
        "deb-src [signed-by=/k.gpg] http://mirror.invalid/debian bookworm main\n",
    ]


def test_nothing_configured(tmp_path: Path) -> None:
    assert deb_src_lines(tmp_path, "bookworm") == []
