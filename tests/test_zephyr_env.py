"""scripts/zephyr-env.sh BOARD: the export lines that make west build / twister work for a
board here (toolchain by the board's architecture, from its devicetree's CPU)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nnopt.zephyr_tree import find_zephyr_base

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "zephyr-env.sh"


def _run(board: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", os.fspath(SCRIPT), board], env={**env, "PYTHON": sys.executable},
                          cwd=cwd, capture_output=True, text=True, check=False)


def _clean_env(tmp_path: Path) -> dict[str, str]:
    drop = ("ZEPHYR_BASE", "NNOPT_ZEPHYR_WORKSPACE", "ZEPHYR_MODULES", "ZEPHYR_SDK_INSTALL_DIR",
            "ZEPHYR_TOOLCHAIN_VARIANT")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["HOME"] = os.fspath(tmp_path / "home")  # no ~/zephyr-sdk-* of the machine's
    env["NNOPT_CACHE_DIR"] = os.fspath(tmp_path / "cache")
    return env


def _exports(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if line.startswith("export "):
            key, _, value = line[len("export "):].partition("=")
            out[key] = value.strip('"')
    return out


def _fake_tree(tmp_path: Path) -> Path:
    top = tmp_path / "ws"
    (top / "zephyr").mkdir(parents=True)
    (top / "zephyr" / "VERSION").write_text("VERSION_MAJOR = 4\n")
    (top / "modules" / "lib" / "picolibc").mkdir(parents=True)
    return top


def test_without_a_zephyr_tree_it_says_how(tmp_path: Path) -> None:
    proc = _run("mps2/an385", _clean_env(tmp_path), tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "no Zephyr tree" in proc.stderr and "hint: set ZEPHYR_BASE" in proc.stderr


def test_the_zephyr_sdk_wins_when_installed(tmp_path: Path) -> None:
    top = _fake_tree(tmp_path)
    sdk = tmp_path / "home" / "zephyr-sdk-0.17.0"
    sdk.mkdir(parents=True)
    (sdk / "sdk_version").write_text("0.17.0\n")
    env = {**_clean_env(tmp_path), "ZEPHYR_BASE": os.fspath(top / "zephyr")}
    proc = _run("mps2/an385", env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    ex = _exports(proc.stdout)
    assert ex["ZEPHYR_TOOLCHAIN_VARIANT"] == "zephyr"
    assert ex["ZEPHYR_SDK_INSTALL_DIR"] == os.fspath(sdk)
    # no west: the modules around the tree, picolibc among them, and this checkout
    assert ex["ZEPHYR_MODULES"].split(";") == [os.fspath(top / "modules" / "lib" / "picolibc"),
                                               os.fspath(REPO)]


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                    reason="gcc-arm-none-eabi not installed")
def test_arm_boards_get_gnuarmemb(tmp_path: Path) -> None:
    top = _fake_tree(tmp_path)
    env = {**_clean_env(tmp_path), "ZEPHYR_BASE": os.fspath(top / "zephyr")}
    proc = _run("nucleo_f767zi", env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    ex = _exports(proc.stdout)
    assert ex["ZEPHYR_TOOLCHAIN_VARIANT"] == "gnuarmemb"
    gcc = Path(shutil.which("arm-none-eabi-gcc") or "").resolve()
    assert ex["GNUARMEMB_TOOLCHAIN_PATH"] == os.fspath(gcc.parent.parent)
    # the lines are shell: eval gives the variables
    shown = subprocess.run(["bash", "-c", f'eval "$({SCRIPT} nucleo_f767zi)"; '
                            'echo "$ZEPHYR_TOOLCHAIN_VARIANT"'],
                           env={**env, "PYTHON": sys.executable}, cwd=tmp_path,
                           capture_output=True, text=True, check=False)
    assert shown.stdout.strip() == "gnuarmemb", shown.stderr


_ZB = find_zephyr_base(os.environ)


@pytest.mark.skipif(_ZB is None or not (_ZB / "VERSION").is_file(),
                    reason="no Zephyr tree: set ZEPHYR_BASE or NNOPT_ZEPHYR_WORKSPACE")
@pytest.mark.skipif(shutil.which("riscv64-unknown-elf-gcc") is None,
                    reason="gcc-riscv64-unknown-elf not installed")
def test_a_riscv_board_from_the_devicetree_gets_the_riscv_block(tmp_path: Path) -> None:
    assert _ZB is not None
    env = {**_clean_env(tmp_path), "ZEPHYR_BASE": os.fspath(_ZB)}
    proc = _run("hifive1", env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "# RISC-V:" in proc.stdout and "(riscv, arch riscv)" in proc.stdout
    ex = _exports(proc.stdout)
    assert ex["ZEPHYR_TOOLCHAIN_VARIANT"] == "cross-compile"
    assert ex["CROSS_COMPILE"].endswith("riscv64-unknown-elf-")
    unknown = _run("nosuchboard", env, tmp_path)
    assert unknown.returncode == 1 and unknown.stdout == "" and "unknown board" in unknown.stderr
