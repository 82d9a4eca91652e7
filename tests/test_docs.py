"""The documentation site builds (strict: a broken link or a page missing from the nav
fails), and its command-line reference is generated from the parser: every command and
every option is on the page."""

from __future__ import annotations

import argparse
import html
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from nnopt.cli import build_parser
from nnopt.commands.reference import MARKER, markdown

ROOT = Path(__file__).resolve().parents[1]


def _mkdocs() -> list[str]:
    exe = Path(sys.executable).with_name("mkdocs")
    if exe.is_file():
        return [str(exe)]
    found = shutil.which("mkdocs")
    if found is None:
        pytest.skip("mkdocs is not installed (pip install -c constraints.txt mkdocs)")
    return [found]


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("nnopt has no commands")


def test_reference_lists_every_command_and_option() -> None:
    text = markdown(build_parser())
    for name, sub in _subparsers().items():
        assert f"## nnopt {name}\n" in text, name
        for action in sub._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}`" in text, (name, option)
    assert "<name>" not in text.replace("`<name>", "")  # templates are code, not HTML


def test_docs_build_strict(tmp_path: Path) -> None:
    cmd = _mkdocs()
    site = tmp_path / "site"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "scripts")}
    res = subprocess.run([*cmd, "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
                          "--site-dir", str(site)], cwd=ROOT, capture_output=True, text=True,
                         env=env, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    cli = html.unescape((site / "cli" / "index.html").read_text())
    assert MARKER not in cli and "nnopt optimize MODEL [options]" in cli
    assert "--keep-elf" in cli and "64" in cli
    # every page of the nav is built; every Markdown page of docs/ is in the nav
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text().replace("!!python", "#"))

    def pages(nav: object) -> list[str]:
        if isinstance(nav, str):
            return [nav]
        if isinstance(nav, list):
            return [p for item in nav for p in pages(item)]
        if isinstance(nav, dict):
            return [p for v in nav.values() for p in pages(v)]
        return []

    listed = set(pages(config["nav"]))
    on_disk = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert listed == on_disk
    for page in listed:
        out = site / ("index.html" if page == "index.md" else
                      f"{page.removesuffix('.md')}/index.html")
        assert out.is_file(), page
