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
from support.twister import Setup, read_results, setup_or_skip

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
    return setup_or_skip(REPO)


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
    console and ztest harnesses of every sample pass on mps2/an385 through
    DeviceHandler, as on a real board (hello's console lines are checked by name)."""
    if not setup.extra:
        pytest.skip("a west workspace: its flash target runs `west flash`, which mps2/an385 "
                    "has no runner for (see scripts/qemu-serial-pty.py)")
    out = tmp_path / "twister-out"
    script = REPO / "scripts" / "qemu-serial-pty.py"
    cmd = [*setup.command, *setup.extra, "--device-testing", "-p", "mps2/an385",
           "--device-serial-pty", f"{script},--outdir,{out}",
           "-T", os.fspath(REPO / "samples"), "--outdir", os.fspath(out), "-j", "1",
           "--inline-logs"]
    proc = subprocess.run(cmd, cwd=setup.cwd, env=setup.env, capture_output=True, text=True,
                          check=False)
    report = out / "twister.json"
    assert report.is_file(), (proc.stdout + proc.stderr)[-3000:]
    results = read_results(report)
    print(f"device testing, mps2/an385: {results.summary()}")
    assert not results.failures(), results.failure_report()
    # every scenario Twister did not filter out for mps2/an385 ran and passed, and that
    # is most of the samples (each sample folder with a passing scenario)
    ran = [o for o in results.outcomes if o.status != "filtered"]
    assert ran and all(o.status == "passed" for o in ran), results.summary()
    samples = {p.parent.name for p in (REPO / "samples").glob("*/sample.yaml")}
    # Twister names a scenario <folder>/<scenario id> (hello/sample.nnopt.hello)
    ids = [o.name.rsplit("/", 1)[-1] for o in ran]
    passed = {i.split(".")[2] for i in ids if i.startswith("sample.nnopt.")}
    assert len(passed) >= len(samples) - 1, (sorted(passed), sorted(samples))
    hello = [p for p in out.rglob("handler.log") if "sample.nnopt.hello" in os.fspath(p)]
    assert hello and "hello: PASS" in hello[0].read_text(errors="replace")


# -- nnopt_add_model() in plain CMake (no Zephyr): several models keep their results --

CMAKE_APP = """\
cmake_minimum_required(VERSION 3.20)
project(nnopt_two_models LANGUAGES C)
add_executable(app main.c)
set(CONFIG_NNRT y)
set(PYTHON_EXECUTABLE "{python}")
include("{repo}/zephyr/cmake/nnopt.cmake")
nnopt_add_model(app MODEL "{repo}/models/hello_world_int8.tflite" BOARD mps2_an385
                NO_ELF_CHECK OUT HELLO)
nnopt_add_model(app MODEL "{repo}/models/lenet5_int8.tflite" BOARD nucleo_f767zi
                NO_ELF_CHECK OUT LENET)
nnopt_model_definitions(app MODEL hello_world_int8)
get_target_property(models app NNOPT_MODELS)
get_target_property(hello_dir app NNOPT_MODEL_DIR_hello_world_int8)
get_target_property(lenet_budget app NNOPT_MODEL_BUDGET_lenet5_int8)
get_target_property(defs app COMPILE_DEFINITIONS)
file(WRITE "${{CMAKE_BINARY_DIR}}/results.json" "{{
  \\"models\\": \\"${{models}}\\",
  \\"hello\\": [\\"${{HELLO_NAME}}\\", \\"${{HELLO_DIR}}\\", \\"${{HELLO_BUDGET}}\\"],
  \\"lenet\\": [\\"${{LENET_NAME}}\\", \\"${{LENET_DIR}}\\", \\"${{LENET_BUDGET}}\\"],
  \\"last\\": \\"${{NNOPT_MODEL_NAME}}\\", \\"hello_dir\\": \\"${{hello_dir}}\\",
  \\"lenet_budget\\": \\"${{lenet_budget}}\\"
}}")
file(WRITE "${{CMAKE_BINARY_DIR}}/defs.txt" "${{defs}}")
"""


def test_several_models_keep_their_own_results(tmp_path: Path) -> None:
    """nnopt.cmake outside Zephyr (a host C project): two nnopt_add_model() calls, each
    with its OUT variables and target properties; NNOPT_MODEL_NAME is the last call's."""
    if subprocess.run(["cmake", "--version"], capture_output=True, check=False).returncode:
        pytest.skip("cmake not installed")
    src = tmp_path / "app"
    src.mkdir()
    (src / "main.c").write_text("int main(void) { return 0; }\n")
    (src / "CMakeLists.txt").write_text(CMAKE_APP.format(python=sys.executable, repo=REPO))
    build = tmp_path / "build"
    env = {**os.environ, "PYTHONPATH": os.fspath(REPO / "scripts")}
    proc = subprocess.run(["cmake", "-S", os.fspath(src), "-B", os.fspath(build)], env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    r = json.loads((build / "results.json").read_text())
    assert r["models"] == "hello_world_int8;lenet5_int8"
    assert r["hello"] == ["hello_world_int8", os.fspath(build / "nnopt" / "hello_world_int8"),
                          "board mps2_an385"]
    assert r["lenet"][0] == "lenet5_int8" and r["lenet"][2] == "board nucleo_f767zi"
    assert r["hello_dir"] == r["hello"][1] and r["lenet_budget"] == "board nucleo_f767zi"
    assert r["last"] == "lenet5_int8"
    assert "MODEL_SYMBOL=hello_world_int8_model" in (build / "defs.txt").read_text()
    # a model added twice to one target is refused (its sources would collide)
    text = (src / "CMakeLists.txt").read_text().replace("lenet5_int8.tflite",
                                                         "hello_world_int8.tflite")
    (src / "CMakeLists.txt").write_text(text)
    again = subprocess.run(["cmake", "-S", os.fspath(src), "-B", os.fspath(tmp_path / "b2")],
                           env=env, capture_output=True, text=True, check=False)
    assert again.returncode != 0 and "already added" in again.stderr.replace("\n", " ")
