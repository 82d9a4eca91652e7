"""``west nn-optimize`` in a real west workspace without Zephyr, and the manifests.

The workspace is built once per module: the repository's files are copied to
``<tmp>/ws/nnopt``, ``west init -l nnopt`` makes it a workspace of ``west.yml``, and
``west config manifest.project-filter -- -zephyr`` leaves Zephyr out (its import is
not resolved: an import whose project is not cloned would hide every extension
command), as the README documents for using only the compiler. Every command runs
through the ``west`` executable next to this Python, as a user would run it.

``west-offline.yml`` (the same workspace from local snapshot repositories) is checked
here for what it resolves; with ``NNOPT_ZEPHYR_MIRRORS`` naming the repositories
``scripts/zephyr-mirrors.sh`` made, also that every revision it needs is in them. The
workspace it gives is built and run by tests/test_twister.py.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from west.configuration import Configuration
from west.manifest import ImportFlag, Manifest

from conftest import REPO, model_path
from nnopt import cli
from nnopt.commands import optimize

WEST = Path(sys.executable).with_name("west")
ENOUGH_OPS_MISSING = "has no code generator yet"  # kernels still being written


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str


@dataclass(frozen=True)
class Workspace:
    top: Path
    env: dict[str, str]

    def run(self, args: Sequence[str], python: Sequence[str] | None = None) -> Result:
        """Run ``west <args>`` (or ``<python...>``) in the workspace top directory."""
        cmd = list(python) if python else [os.fspath(WEST), *args]
        proc = subprocess.run(cmd, cwd=self.top, env=self.env, capture_output=True,
                              text=True, timeout=120, check=False)
        return Result(proc.returncode, proc.stdout, proc.stderr)


def _repo_files() -> list[str]:
    """The repository's files as the tree has them: tracked plus untracked-but-not-
    ignored (other work in progress), without deleted ones."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                          "--exclude-standard"], cwd=REPO, capture_output=True,
                         check=True).stdout.decode()
    return [f for f in out.split("\0") if f and (REPO / f).is_file()]


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    if not WEST.is_file():
        pytest.skip(f"no west executable next to {sys.executable}")
    if shutil.which("git") is None:
        pytest.skip("west init needs the git executable")
    base = tmp_path_factory.mktemp("west")
    top = base / "ws"
    for rel in _repo_files():
        dst = top / "nnopt" / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / rel, dst)
    env = {k: v for k, v in os.environ.items() if k != "ZEPHYR_BASE"}
    # Keep the user's and the system's west configuration out of the test.
    env["WEST_CONFIG_GLOBAL"] = os.fspath(base / "global.cfg")
    env["WEST_CONFIG_SYSTEM"] = os.fspath(base / "system.cfg")
    env.pop("NNOPT_DEBUG", None)
    w = Workspace(top, env)
    r = w.run(["init", "-l", "nnopt"])
    assert r.returncode == 0, r.stderr
    assert (top / ".west" / "config").is_file()
    r = w.run(["config", "manifest.project-filter", "--", "-zephyr"])
    assert r.returncode == 0, r.stderr
    return w


def _skip_if_kernels_missing(r: Result) -> None:
    if r.returncode == 1 and ENOUGH_OPS_MISSING in r.stderr:
        pytest.skip("the model's kernels are not in the tree yet: " + r.stderr.strip()[:200])


def _option_strings() -> list[str]:
    p = argparse.ArgumentParser()
    optimize.add_arguments(p)
    return [s for a in p._actions for s in a.option_strings if s not in ("-h", "--help")]


def test_help_lists_every_option(ws: Workspace) -> None:
    r = ws.run(["nn-optimize", "--help"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: west nn-optimize")
    assert "MODEL.tflite" in r.stdout and "exit status" in r.stdout.lower()
    for opt in _option_strings():
        assert re.search(rf"(^|[\s,\[]){re.escape(opt)}\b", r.stdout), opt
    # and west lists the command among the workspace's extensions
    r = ws.run(["help"])
    assert "nn-optimize" in r.stdout


def test_small_model_report_and_json_match_nnopt_optimize(
        ws: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = model_path("tflm/hello_world_int8.tflite")
    west_json = tmp_path / "west.json"
    r = ws.run(["nn-optimize", os.fspath(model), "--json", os.fspath(west_json),
                "--table", "full"])
    _skip_if_kernels_missing(r)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert "model hello_world_int8: 3 ops" in r.stdout
    assert "peak after optimisation" in r.stdout and "<- peak" in r.stdout
    report = json.loads(west_json.read_text())
    for key in ("format", "model", "schedule", "steps", "buffers", "peak_live_bytes",
                "peak_live_bytes_file_order", "lower_bound_bytes", "arena_bytes",
                "optimal", "ops"):
        assert key in report, key
    assert report["model"] == "hello_world_int8" and len(report["schedule"]) == 3
    assert report["arena_bytes"] >= report["peak_live_bytes"] > 0

    # Same behaviour as `nnopt optimize` with the same arguments.
    cli_json = tmp_path / "cli.json"
    status = cli.main(["optimize", os.fspath(model), "--json", os.fspath(cli_json),
                       "--table", "full"])
    out = capsys.readouterr().out
    assert status == r.returncode

    def stable(text: str) -> str:
        return re.sub(r"planned in [\d.]+ s|wrote \S+", "", text)

    assert stable(out) == stable(r.stdout)
    a, b = json.loads(cli_json.read_text()), report
    a.pop("planning_seconds")
    b.pop("planning_seconds")
    assert a == b


def test_over_budget_exits_2_with_the_numbers(ws: Workspace) -> None:
    model = model_path("mlperf_tiny/vww_96_int8.tflite")
    r = ws.run(["nn-optimize", os.fspath(model), "--sram", "1000", "--table", "none",
                "--inplace-ops", "off", "--tiling", "off"])  # the classic plan's numbers
    _skip_if_kernels_missing(r)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    assert re.search(r"ERROR: the activation arena needs 55,[0-9]{3} bytes but the --sram budget "
                     r"has 1,000 bytes", r.stderr), r.stderr
    assert "Hint:" in r.stderr
    assert re.search(r"OVER by 54,[0-9]{3} B", r.stdout)  # the report is still printed


@pytest.mark.parametrize("kind", ["truncated", "not_tflite"])
def test_corrupt_model_exits_1_without_traceback(ws: Workspace, tmp_path: Path,
                                                 kind: str) -> None:
    bad = tmp_path / f"{kind}.tflite"
    if kind == "truncated":
        bad.write_bytes(model_path("tflm/hello_world_int8.tflite").read_bytes()[:1000])
    else:
        bad.write_bytes(b"PK\x03\x04 this is a zip file, not a model" * 4)
    r = ws.run(["nn-optimize", os.fspath(bad)])
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert re.search(rf"^FATAL ERROR: .*{re.escape(bad.name)}", r.stderr, re.M), r.stderr
    assert "Hint:" in r.stderr


def test_runs_from_the_workspace_copy_when_nnopt_is_not_installed(ws: Workspace) -> None:
    # -S: site-packages without .pth files, so the editable nnopt install is invisible;
    # the command must fall back to <workspace>/nnopt/scripts. From the workspace top,
    # "nnopt" would otherwise import as the repository directory (a namespace package).
    purelib = sysconfig.get_paths()["purelib"]
    code = ("import sys; sys.path.append(sys.argv[1]); from west.app.main import main; "
            "main(sys.argv[2:])")
    model = model_path("tflm/hello_world_int8.tflite")
    r = ws.run([], python=[sys.executable, "-S", "-c", code, purelib, "-v", "nn-optimize",
                           os.fspath(model), "--table", "none"])
    _skip_if_kernels_missing(r)
    assert r.returncode == 0, r.stderr
    expected = ws.top / "nnopt" / "scripts" / "nnopt" / "commands" / "optimize.py"
    assert f"nnopt.commands.optimize from {expected}" in r.stdout
    assert "model hello_world_int8" in r.stdout


def test_missing_dependency_is_reported_not_raised(ws: Workspace) -> None:
    code = ("import sys; sys.modules['numpy'] = None; from west.app.main import main; "
            "main(sys.argv[1:])")
    r = ws.run([], python=[sys.executable, "-c", code, "nn-optimize", "model.tflite"])
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert "FATAL ERROR: cannot import nnopt" in r.stderr and "pip install" in r.stderr


def _manifest(name: str) -> Manifest:
    return Manifest.from_data((REPO / name).read_text(), import_flags=ImportFlag.IGNORE)


def _allowlist() -> list[str]:
    data = yaml.safe_load((REPO / "west.yml").read_text())
    (entry,) = data["manifest"]["projects"]
    return list(entry["import"]["name-allowlist"])


def test_real_manifest_pins_the_zephyr_release_the_tests_build() -> None:
    m = _manifest("west.yml")
    assert m.projects[0].name == "manifest"
    assert m.projects[0].west_commands == ["scripts/west-commands.yml"]
    zephyr = m.get_projects(["zephyr"], allow_paths=False, only_cloned=False)[0]
    assert zephyr.url == "https://github.com/zephyrproject-rtos/zephyr"
    # tests/test_twister.py builds with 4.1.0 (and checks the workspace's VERSION).
    assert zephyr.revision == "v4.1.0"
    allow = _allowlist()
    # cmsis: Zephyr 4.1's Cortex-M core headers; picolibc: the gnuarmemb C library.
    assert {"cmsis", "hal_stm32", "mbedtls", "picolibc"} <= set(allow)
    assert len(allow) == len(set(allow)) <= 10  # an allow-list, not everything


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> Manifest:
    """west-offline.yml as west resolves it in a workspace (Zephyr's import ignored)."""
    top = tmp_path_factory.mktemp("offline")
    (top / ".west").mkdir()
    (top / ".west" / "config").write_text("[manifest]\npath = nnopt\nfile = west-offline.yml\n")
    (top / "nnopt").mkdir()
    for name in ("west.yml", "west-offline.yml"):
        shutil.copyfile(REPO / name, top / "nnopt" / name)
    return Manifest.from_topdir(topdir=top, config=Configuration(topdir=top),
                                import_flags=ImportFlag.IGNORE_PROJECTS)


def test_offline_manifest_is_west_yml_with_snapshot_revisions(offline: Manifest) -> None:
    real = _manifest("west.yml")
    assert offline.projects[0].west_commands == real.projects[0].west_commands
    (zephyr,) = offline.get_projects(["zephyr"], only_cloned=False)
    (real_zephyr,) = real.get_projects(["zephyr"], only_cloned=False)
    assert (zephyr.url, zephyr.revision, zephyr.path) == \
        (real_zephyr.url, real_zephyr.revision, real_zephyr.path)
    # Every module it resolves itself is one west.yml allow-lists, and is kept out of
    # Zephyr's import (else Zephyr's entry, imported first, would win).
    raw = yaml.safe_load((REPO / "west-offline.yml").read_text())["manifest"]
    own = [p["name"] for p in raw["projects"]]
    assert own and set(own) <= set(_allowlist())
    assert sorted(raw["self"]["import"]["name-blocklist"]) == sorted(own)
    assert sorted(p.name for p in offline.projects[1:]) == sorted(["zephyr", *own])
    for p in offline.get_projects(own, only_cloned=False):
        assert p.url == f"https://github.com/zephyrproject-rtos/{p.name}"  # upstream


def _git_has(repo: Path, rev: str) -> bool:
    return subprocess.run(["git", "-C", os.fspath(repo), "rev-parse", "--verify", "-q",
                           f"{rev}^{{commit}}"], capture_output=True, check=False).returncode == 0


def test_offline_revisions_are_in_the_mirrors(offline: Manifest) -> None:
    mirrors = os.environ.get("NNOPT_ZEPHYR_MIRRORS")
    if not mirrors:
        pytest.skip("NNOPT_ZEPHYR_MIRRORS is not set (the output of scripts/zephyr-mirrors.sh)")
    root = Path(mirrors)
    (zephyr,) = offline.get_projects(["zephyr"], only_cloned=False)
    assert _git_has(root / "zephyr", zephyr.revision), f"{root}/zephyr lacks {zephyr.revision}"
    # The rest of the allow-list at Zephyr's own pins, from Zephyr's west.yml as tagged.
    # (tflite-micro is in its submanifests/optional.yaml).
    pins = {}
    for path in ("west.yml", "submanifests/optional.yaml"):
        text = subprocess.run(["git", "-C", os.fspath(root / "zephyr"), "show",
                               f"{zephyr.revision}:{path}"], capture_output=True, text=True,
                              check=True).stdout
        pins.update({p.name: p.revision for p in Manifest.from_data(
            text, import_flags=ImportFlag.IGNORE).projects[1:]})
    pins.update({p.name: p.revision for p in offline.projects[1:] if p.name != "zephyr"})
    for name in _allowlist():
        assert _git_has(root / name, pins[name]), f"{root}/{name} lacks {pins[name]}"


def test_west_commands_yml_points_at_the_command_classes() -> None:
    spec = yaml.safe_load((REPO / "scripts" / "west-commands.yml").read_text())
    names = []
    for i, entry in enumerate(spec["west-commands"]):
        path = REPO / entry["file"]  # relative to the project root, not to the yml
        assert path.is_file()
        (command,) = entry["commands"]
        module_spec = importlib.util.spec_from_file_location(f"west_cmd_under_test_{i}", path)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        cls = getattr(module, command["class"])
        assert cls().name == command["name"]
        names.append(command["name"])
    assert names == ["nn-optimize", "nn-check"]


def test_onnx_model_through_west(ws: Workspace, tmp_path: Path) -> None:
    from support import onnx_models

    model = tmp_path / "cnn.onnx"
    model.write_bytes(onnx_models.cnn_model())
    r = ws.run(["nn-optimize", os.fspath(model), "--table", "none"])
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert "model cnn:" in r.stdout and "layout: NHWC inside" in r.stdout
