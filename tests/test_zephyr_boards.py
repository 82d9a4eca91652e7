"""Zephyr boards with no boards/nnopt file: samples/hello builds for them with the budget
from the build's devicetree (nnopt_add_model, zephyr/cmake/nnopt.cmake), and Twister's
device-testing path on QEMU behind a pty (scripts/qemu-serial-pty.py).

With a workspace (``NNOPT_ZEPHYR_WORKSPACE``, or ``ZEPHYR_BASE`` + ``ZEPHYR_MODULES``: the
setup of tests/support/twister.py); skipped with the reason otherwise. Builds go to
``NNOPT_BOARD_BUILD_DIR`` when set (kept, so a rerun is incremental), else a temporary
directory. Run one at a time (``-k``); each is a full Zephyr build.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nnopt.zephyr_tree import zephyr_board
from support.twister import (
    Setup,
    TwisterSetupError,
    find_setup,
    read_results,
)

REPO = Path(__file__).resolve().parents[1]

#: Real boards with no boards/nnopt file and the SRAM of their zephyr,sram node
#: (the issue's figures where it gives them).
BOARDS = [
    ("nucleo_h743zi", 524_288),
    ("stm32f746g_disco", 262_144),
    ("b_u585i_iot02a", 786_432),
    ("nrf52840dk/nrf52840", 262_144),
    ("frdm_k64f", 196_608),
]


@pytest.fixture(scope="module")
def setup() -> Setup:
    try:
        found = find_setup(REPO, dict(os.environ))
    except TwisterSetupError as e:
        error = str(e)
    else:
        error = ""
    if error:
        pytest.fail(error, pytrace=False)
    if isinstance(found, str):
        pytest.skip(found)
    return found


def _build_env(setup: Setup) -> dict[str, str]:
    """Twister's environment (toolchain, ZEPHYR_MODULES with this checkout) with
    ZEPHYR_BASE, which a west workspace's setup leaves to west."""
    return {**setup.env, "ZEPHYR_BASE": os.fspath(setup.zephyr_base)}


def _build_dir(tmp_path: Path, board: str) -> Path:
    root = os.environ.get("NNOPT_BOARD_BUILD_DIR")
    return (Path(root) if root else tmp_path) / board.replace("/", "_")


@pytest.mark.slow
@pytest.mark.parametrize(("board", "sram"), BOARDS, ids=[b.replace("/", "_") for b, _ in BOARDS])
def test_hello_builds_with_the_devicetree_budget(setup: Setup, tmp_path: Path, board: str,
                                                 sram: int) -> None:
    build = _build_dir(tmp_path, board)
    env = _build_env(setup)
    cmd = ["cmake", "-GNinja", "-S", os.fspath(REPO / "samples" / "hello"),
           "-B", os.fspath(build), f"-DBOARD={board}", f"-DPython3_EXECUTABLE={sys.executable}"]
    conf = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    assert conf.returncode == 0, (conf.stdout + conf.stderr)[-3000:]
    out = conf.stdout
    # the budget table, printed at configure time from the build's edt.pickle
    assert "nnopt: memory budget from the devicetree" in out, out[-3000:]
    table = out[out.index("nnopt: memory budget from the devicetree"):].split("\n-- ")[0]
    print(table)
    assert f"{sram:,}" in table and "<- arena" in table
    made = subprocess.run(["ninja", "-C", os.fspath(build)], env=env, capture_output=True,
                          text=True, check=False)
    assert made.returncode == 0, (made.stdout + made.stderr)[-3000:]
    plan = json.loads((build / "nnopt" / "hello_world_int8" /
                       "hello_world_int8_plan.json").read_text())
    assert plan["sram_budget_bytes"] == sram
    # the same budget as `nnopt optimize --board BOARD` reads outside the build
    assert zephyr_board(board, env=env).sram_bytes == sram
    check = json.loads((build / "zephyr" / "nnopt_elf_check.json").read_text())
    regions = {r["name"]: r for r in check["regions"]}
    assert regions["sram"]["size"] == sram and 0 < regions["sram"]["used"] <= sram
    assert regions["flash"]["used"] > 0 and not check["over_budget"]
    elf_report = [line for line in made.stdout.splitlines() if "sram" in line or "flash" in line]
    print("\n".join(elf_report[:6]))


def _pty_script() -> object:
    spec = importlib.util.spec_from_file_location("qemu_serial_pty",
                                                  REPO / "scripts" / "qemu-serial-pty.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pty_script_finds_the_build_twister_is_reading(tmp_path: Path) -> None:
    """The build whose handler.log Twister opened after the script started; older logs
    and folders inside build directories do not count."""
    mod = _pty_script()
    old = tmp_path / "mps2_an385" / "samples" / "old"
    new = tmp_path / "mps2_an385" / "samples" / "hello" / "sample.nnopt.hello"
    for d in (old, new):
        d.mkdir(parents=True)
        (d / "build.ninja").write_text("")
    (old / "handler.log").write_text("")
    os.utime(old / "handler.log", (time.time() - 100, time.time() - 100))
    inner = new / "zephyr"
    inner.mkdir()
    (inner / "handler.log").write_text("")  # inside a build directory: not a test's
    since = time.time() - 10
    assert mod.fresh_handler_logs(tmp_path, since) == []  # type: ignore[attr-defined]
    (new / "handler.log").write_text("")
    found = mod.fresh_handler_logs(tmp_path, since)  # type: ignore[attr-defined]
    assert [p for _, p in found] == [new / "handler.log"]


def test_pty_script_gives_up_with_a_message(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, os.fspath(REPO / "scripts" / "qemu-serial-pty.py"),
                           "--outdir", os.fspath(tmp_path), "--timeout", "0.5"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1 and "no test started" in proc.stderr


@pytest.mark.slow
@pytest.mark.qemu
def test_twister_device_testing_on_qemu_behind_a_pty(setup: Setup, tmp_path: Path) -> None:
    """`twister --device-testing --device-serial-pty` with the QEMU pty script: the
    console harness of samples/hello passes on mps2/an385 through DeviceHandler."""
    if not setup.extra:
        pytest.skip("a west workspace: its flash target runs `west flash`, which mps2/an385 "
                    "has no runner for (see scripts/qemu-serial-pty.py)")
    out = tmp_path / "twister-out"
    script = REPO / "scripts" / "qemu-serial-pty.py"
    cmd = [*setup.command, *setup.extra, "--device-testing", "-p", "mps2/an385",
           "--device-serial-pty", f"{script},--outdir,{out}",
           "-T", os.fspath(REPO / "samples" / "hello"), "--outdir", os.fspath(out), "-j", "1",
           "--inline-logs"]
    proc = subprocess.run(cmd, cwd=setup.cwd, env=setup.env, capture_output=True, text=True,
                          check=False)
    report = out / "twister.json"
    assert report.is_file(), (proc.stdout + proc.stderr)[-3000:]
    results = read_results(report)
    print(f"device testing, mps2/an385: {results.summary()}")
    assert not results.failures(), results.failure_report()
    assert results.counts()["passed"] >= 1, results.summary()
    handler = next(out.rglob("handler.log")).read_text(errors="replace")
    assert "hello: PASS" in handler
