"""Reproducible builds (issue 26): the same model gives the same generated files however
loaded the machine, whatever the hash seed, the working directory and the output path.

Each model is compiled twice by ``nnopt optimize`` into two directories: once in this
process with a clock running 20x slower than real time (a heavily loaded machine, as
the order search's own test does) patched in for every search, and once in a fresh
interpreter with another ``PYTHONHASHSEED``, from another working directory with a
relative output path. Every file written (generated C and header, plan and report
JSON, memory pictures in PNG and SVG, the model blob where the blob format has the
model's kernels, and for the shipped model the sealed swap blob of a given key) must
be byte-identical, the JSON with its ``planning_seconds`` timing aside. The time
guard (passes.plan_budget.GUARD_FACTOR, the order search's WALL_GUARD) is moved out of the
way in the slowed run: on this shared machine the slowed clock can pass it, and the
guard is what the plan says depends on the machine; it has its own test here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from unittest.mock import patch

import pytest

from conftest import model_path
from nnopt.cli import main
from nnopt.frontend.tflite import load_model
from nnopt.passes import plan_budget as budget_mod
from nnopt.planner import PlanOptions, plan_model
from nnopt.report.text import budget_note
from nnopt.zephyr_build import workspace_modules

#: The heaviest shared models to plan (the default plan's CPU time: ~1.5, 1.1, 0.3 s),
#: then the shipped mobilenet_v2 224x224 (~2.8 s), which CI without ../shared runs.
HEAVY = ("keras/mobilenet_v2_035_96.tflite", "keras/nasnet_mobile_64.tflite",
         "keras/densenet121_64.tflite")
SHIPPED = "tflm/mobilenet_v2_quantized_1x3x224x224.tflite"
#: A swap key for the shipped model on nucleo_f767zi (its 3.5 MB of weights stream).
KEY = "5a" * 32
TIMING = re.compile(rb'"planning_seconds": [0-9.e+-]+')


#: nasnet_mobile_64's int8 RELU kernel is not in the model blob format yet: C only.
NO_MODEL_BLOB = {"keras/nasnet_mobile_64.tflite"}


def _args(rel: str, model: Path, out: str, swap: bool) -> list[str]:
    extra = ["-b", "nucleo_f767zi", "--swap-key", KEY] if swap else []
    if rel not in NO_MODEL_BLOB:
        extra += ["--emit", "c", "--emit", "blob"]
    return ["optimize", str(model), "-o", out, "--plot", f"{out}/memory.svg",
            "--table", "none", "--quiet", *extra]


def _files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative path, JSON timing fields blanked."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            data = p.read_bytes()
            if p.suffix == ".json":
                data = TIMING.sub(b'"planning_seconds": 0', data)
            out[str(p.relative_to(root))] = data
    return out


def _slow_clock() -> object:
    """The guard clock running 20x slower than real time (20 s read per real second)."""
    real = time.process_time
    start = real()
    return lambda: start + 20 * (real() - start)


@pytest.mark.slow
@pytest.mark.parametrize("rel", [*HEAVY, SHIPPED])
def test_generated_files_identical_under_load_and_hash_seed(rel: str, tmp_path: Path
                                                            ) -> None:
    import nnopt.planner as planner

    model = model_path(rel)
    swap = rel == SHIPPED
    slowed = tmp_path / "slowed"
    with patch.object(budget_mod, "GUARD_FACTOR", 1e6), \
            patch.object(planner, "WALL_GUARD", 1e6), \
            patch.object(budget_mod.time, "process_time", _slow_clock()):
        assert main(_args(rel, model, str(slowed), swap)) == 0
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    seed = "4242" if os.environ.get("PYTHONHASHSEED") != "4242" else "17"
    env = {**os.environ, "PYTHONHASHSEED": seed}
    proc = subprocess.run([sys.executable, "-m", "nnopt", *_args(rel, model, "out", swap)],
                          cwd=fresh, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    a, b = _files(slowed), _files(fresh / "out")
    name = model.stem
    want = {f"{name}_model.c", f"{name}_model.h", f"{name}_plan.json",
            f"{name}_report.json", f"{name}_memory.png", "memory.svg"}
    if rel not in NO_MODEL_BLOB:
        want.add(f"{name}.nnmb")
    if swap:
        want.add(f"{name}_swap.bin")
    assert set(a) == set(b) == want
    assert [f for f in a if a[f] != b[f]] == []
    plan = json.loads(a[f"{name}_plan.json"])
    # the defaults reached the searches' own limits: nothing was cut, the guard silent
    assert plan["planning_time_budget"] == {"seconds": 30.0, "exhausted": []}
    for data in a.values():  # no path of either run in any output
        assert str(tmp_path).encode() not in data and b"/out/" not in data


def test_a_budget_that_runs_out_cuts_the_same_plan_under_load() -> None:
    """A small --plan-budget is a count of work, not seconds: vww_96_int8 with 0.2 s
    (100 hill-climbing swaps, 2 strategies, 4 + 2 depthwise trials) is cut short, and
    cut at the same place with the 20x slow clock: the same plan, the same report line.
    (The guard is moved out of the way in both runs: it has its own test below.)"""
    import nnopt.planner as planner

    g = load_model(model_path("mlperf_tiny/vww_96_int8.tflite"))
    opts = PlanOptions(inplace_ops="auto", tiling="auto", plan_budget_s=0.2)
    with patch.object(budget_mod, "GUARD_FACTOR", 1e6), \
            patch.object(planner, "WALL_GUARD", 1e6):
        quick = plan_model(g, opts).plan
        with patch.object(budget_mod.time, "process_time", _slow_clock()):
            slow = plan_model(g, opts).plan
    assert quick.planning_time_budget["exhausted"]
    assert "wall_clock_guard" not in quick.planning_time_budget
    assert replace_timing(slow.to_json()) == replace_timing(quick.to_json())
    assert "plan budget (0.2 s of work) exhausted in" in budget_note(quick)
    full = plan_model(g, PlanOptions(inplace_ops="auto", tiling="auto")).plan
    assert full.arena_bytes <= quick.arena_bytes


def replace_timing(doc: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in doc.items() if k != "planning_seconds"}


def test_wall_clock_guard_stops_the_searches_and_says_so(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Past the guard (a clock that jumps an hour per reading) every search stops with
    its best result so far, the plan is valid and no worse than the classic one, and
    the plan JSON and the report say that the wall clock stopped them."""
    ticks = iter(range(0, 10**9, 3600))
    out = tmp_path / "r.json"
    with patch.object(budget_mod.time, "process_time", lambda: float(next(ticks))):
        rc = main(["optimize", str(model_path("mlperf_tiny/vww_96_int8.tflite")),
                   "--table", "none", "--swap", "off", "--quiet", "--json", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "the time guard stopped" in text and "depends on the machine" in text
    info = json.loads(out.read_text())["planning_time_budget"]
    assert info["wall_clock_guard"] and set(info["wall_clock_guard"]) <= set(info["exhausted"])


# ----- Zephyr: the same zephyr.elf from two build directories -----

REPO = Path(__file__).resolve().parents[1]
#: The build version pinned as Zephyr documents (ZEPHYR_BASE/CMakeLists.txt: a defined
#: BUILD_VERSION replaces `git describe`, and kernel/banner.c prints it).
BUILD_VERSION = "nnopt-reproducible"


def _zephyr_modules(zephyr_base: Path) -> str:
    """$ZEPHYR_MODULES, else every module of the workspace around ZEPHYR_BASE
    (:func:`nnopt.zephyr_build.workspace_modules`) but this checkout."""
    env = os.environ.get("ZEPHYR_MODULES")
    if env:
        return env
    return ";".join(str(p) for p in workspace_modules(zephyr_base, exclude=REPO))


def _zephyr_build(build: Path, zephyr_base: Path, modules: str) -> bytes:
    """Build samples/hello for mps2/an385 in ``build``; zephyr.elf's bytes. The build
    directory is mapped to "." in every file name the compiler records, through
    Zephyr's EXTRA_CPPFLAGS (C and assembler alike): -ffile-prefix-map for C (__FILE__
    and debug information), -fdebug-prefix-map as well because GCC 12's driver passes
    only that one on to the assembler (the .S files' DW_AT_comp_dir). The build
    directory is the builder's own path, the one thing two build directories differ
    in; without the mapping only the debug sections differ (zephyr.bin is the same)."""
    gcc = shutil.which("arm-none-eabi-gcc")
    assert gcc is not None
    env = {**os.environ, "ZEPHYR_BASE": str(zephyr_base),
           "ZEPHYR_TOOLCHAIN_VARIANT": "gnuarmemb",
           "GNUARMEMB_TOOLCHAIN_PATH": str(Path(gcc).resolve().parent.parent),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    cfg = subprocess.run(
        ["cmake", "-GNinja", "-S", str(REPO / "samples" / "hello"), "-B", str(build),
         "-DBOARD=mps2/an385", f"-DZEPHYR_MODULES={modules};{REPO}",
         f"-DPython3_EXECUTABLE={sys.executable}", f"-DBUILD_VERSION={BUILD_VERSION}",
         f"-DEXTRA_CPPFLAGS=-ffile-prefix-map={build}=. -fdebug-prefix-map={build}=."],
        env=env, capture_output=True, text=True, timeout=900)
    assert cfg.returncode == 0, cfg.stdout[-3000:] + cfg.stderr[-3000:]
    b = subprocess.run(["ninja", "-C", str(build), "-j2"], env=env, capture_output=True,
                       text=True, timeout=1800)
    assert b.returncode == 0, b.stdout[-3000:] + b.stderr[-3000:]
    return (build / "zephyr" / "zephyr.elf").read_bytes()


@pytest.mark.slow
def test_zephyr_elf_identical_from_two_build_directories(tmp_path: Path) -> None:
    """samples/hello (nnopt runs inside the build) built twice on the real workspace,
    in two directories of different depth, with BUILD_VERSION pinned: the same
    zephyr.elf byte for byte, debug information included, and no build path in it."""
    base = os.environ.get("ZEPHYR_BASE")
    if not base or not (Path(base) / "cmake" / "modules" / "version.cmake").is_file():
        pytest.skip("no Zephyr workspace: set ZEPHYR_BASE (and ZEPHYR_MODULES) to one")
    for tool in ("cmake", "ninja", "arm-none-eabi-gcc"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not found")
    zephyr_base = Path(base)
    modules = _zephyr_modules(zephyr_base)
    one = _zephyr_build(tmp_path / "one", zephyr_base, modules)
    two = _zephyr_build(tmp_path / "two" / "deeper" / "build", zephyr_base, modules)
    assert str(tmp_path).encode() not in one
    assert BUILD_VERSION.encode() in one  # the pinned version is the one in the banner
    assert one == two
