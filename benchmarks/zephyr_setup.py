"""The Zephyr workspace of ``benchmarks/bench_zephyr.py``: the board it builds for, where
Zephyr, its modules and the tools are, and the build setup (:class:`Setup`) every
application of a run shares; :class:`SetupError` names what is missing and the fix."""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from nnopt.firmware.toolchain import default_cache_dir
from nnopt.paths import repo_root
from nnopt.zephyr_build import toolchain_env, workspace_modules

ZEPHYR_BOARD = "mps2/an500/qemu"
NNOPT_BOARD = "mps2_an500"  # boards/nnopt: the budget, the ELF check's regions, QEMU
QEMU_MACHINE = "mps2-an500"
WORKSPACE_HINT = ("a Zephyr 4.1 workspace with the tflite-micro and cmsis-nn modules: set "
                  "ZEPHYR_BASE (and ZEPHYR_MODULES), NNOPT_ZEPHYR_WORKSPACE, or pass "
                  "--zephyr-base (README.md: Zephyr quick start; tflite-micro is an "
                  "optional module: west config manifest.project-filter -- +tflite-micro, "
                  "as Zephyr's samples/modules/tflite-micro/hello_world/README.rst says)")
TOOL_HINTS = {
    "cmake": "apt-get install cmake",
    "ninja": "apt-get install ninja-build",
    "arm-none-eabi-gcc": "apt-get install gcc-arm-none-eabi",
    "qemu-system-arm": "apt-get install qemu-system-arm",
}
PICOLIBC_HINT = "apt-get install picolibc-arm-none-eabi libstdc++-arm-none-eabi-picolibc"

class SetupError(Exception):
    """The Zephyr workspace or a tool is missing; the message names it and the fix."""


@dataclass(frozen=True)
class Setup:
    """Where and how to build: Zephyr, its modules (this checkout last), the
    environment of cmake and ninja (toolchain, ccache), the build root."""

    zephyr_base: Path
    version: str
    modules: tuple[Path, ...]
    env: dict[str, str]
    build_root: Path
    jobs: int
    tflm_build: str = "release"  # TFLM's release defines ("release") or none ("zephyr")
    nnopt_options: tuple[str, ...] = ()  # more `nnopt optimize` arguments
    picolibc_buildtype: str = ""  # "": the picolibc build Zephyr links; else this one

    def side_dir(self, model_dir: Path, side: str) -> Path:
        """The build directory of one side of a model: one per set of options, so that
        runs with and without them do not reconfigure each other's."""
        if side == "nnopt":
            opts = self.nnopt_options
            name = "nnopt" + ("-" + hashlib.sha256("\0".join(opts).encode()).hexdigest()[:8]
                              if opts else "")
        else:
            name = f"tflm_{side}" + ("" if self.tflm_build == "release"
                                     else f"_{self.tflm_build}")
        if self.picolibc_buildtype:
            name += f"_picolibc-{self.picolibc_buildtype}"
        return model_dir / name

    def defines(self) -> dict[str, str]:
        """The configure-time variables every application of the run gets."""
        return {"BENCH_PICOLIBC_BUILDTYPE": self.picolibc_buildtype}


def zephyr_version(zephyr_base: Path) -> str:
    """``MAJOR.MINOR.PATCH`` from ``zephyr/VERSION``."""
    fields = dict(line.split(" = ", 1) for line in
                  (zephyr_base / "VERSION").read_text().splitlines() if " = " in line)
    return f"{fields['VERSION_MAJOR']}.{fields['VERSION_MINOR']}.{fields['PATCHLEVEL']}"


def find_zephyr_base(given: Path | None, env: dict[str, str]) -> Path:
    """``--zephyr-base``, ``$ZEPHYR_BASE``, or ``$NNOPT_ZEPHYR_WORKSPACE/zephyr``."""
    cands: list[tuple[str, Path]] = []
    if given is not None:
        cands.append(("--zephyr-base", given))
    if env.get("ZEPHYR_BASE"):
        cands.append(("ZEPHYR_BASE", Path(env["ZEPHYR_BASE"])))
    if env.get("NNOPT_ZEPHYR_WORKSPACE"):
        cands.append(("NNOPT_ZEPHYR_WORKSPACE", Path(env["NNOPT_ZEPHYR_WORKSPACE"]) / "zephyr"))
    if not cands:
        raise SetupError(f"no Zephyr workspace: needs {WORKSPACE_HINT}")
    origin, base = cands[0]
    if not (base / "VERSION").is_file() or not (base / "cmake" / "modules").is_dir():
        raise SetupError(f"{origin} gives {base}, which is not a Zephyr tree (no VERSION, "
                         f"cmake/modules); needs {WORKSPACE_HINT}")
    return base.resolve()


#: Modules left out of every build: nothing here uses CMSIS-DSP (CMSIS_NN selects it
#: by habit; tflm_app/Kconfig lets the select stand without it), and a workspace may
#: hold it without Source/CommonTables/arm_common_tables.c, which Zephyr's
#: modules/cmsis-dsp/CMakeLists.txt always compiles (this one does).
UNUSED_MODULES = ("cmsis-dsp",)


def find_modules(zephyr_base: Path, env: dict[str, str]) -> tuple[Path, ...]:
    """``$ZEPHYR_MODULES`` or the workspace's modules, but :data:`UNUSED_MODULES`, this
    checkout appended; raises :class:`SetupError` without tflite-micro or cmsis-nn."""
    repo = repo_root()
    listed = [Path(m) for m in env.get("ZEPHYR_MODULES", "").split(";") if m]
    mods = [m for m in listed if m.resolve() != repo.resolve()] or workspace_modules(
        zephyr_base, exclude=repo)
    mods = [m for m in mods if m.name not in UNUSED_MODULES]
    for name in ("tflite-micro", "cmsis-nn"):
        if not any(m.name == name and m.is_dir() for m in mods):
            where = "ZEPHYR_MODULES" if listed else f"the workspace around {zephyr_base}"
            raise SetupError(f"no {name} module in {where}; needs {WORKSPACE_HINT}")
    return (*mods, repo)


def check_tools(env: dict[str, str]) -> None:
    """cmake, ninja, the GNU Arm toolchain with picolibc and its libstdc++, QEMU."""
    path = env.get("PATH")
    for tool, hint in TOOL_HINTS.items():
        if shutil.which(tool, path=path) is None:
            raise SetupError(f"{tool} not found on PATH: {hint}")
    gcc = shutil.which("arm-none-eabi-gcc", path=path)
    assert gcc is not None
    specs = subprocess.run([gcc, "-print-file-name=picolibc.specs"], capture_output=True,
                           text=True, check=False).stdout.strip()
    if not os.path.isabs(specs):
        raise SetupError(f"the GNU Arm toolchain has no picolibc (picolibc.specs): "
                         f"{PICOLIBC_HINT}")
    # the library folders the specs pass to the linker (-L%{...:/usr/lib/picolibc/...})
    dirs = {Path(d.rstrip("/")) for d in re.findall(r":(/[^;:}%\s]+)", Path(specs).read_text())}
    if not any(any(d.rglob("libstdc++.a")) for d in dirs if d.is_dir()):
        raise SetupError(f"no libstdc++ built for picolibc in the folders {specs} names "
                         f"(TFLM needs the full C++ library): {PICOLIBC_HINT}")


def find_setup(args: argparse.Namespace, environ: dict[str, str] | None = None) -> Setup:
    """The build setup from the command line and the environment; :class:`SetupError`
    naming what is missing."""
    env = dict(os.environ if environ is None else environ)
    base = find_zephyr_base(args.zephyr_base, env)
    modules = find_modules(base, env)
    tool = toolchain_env(env)
    if isinstance(tool, str):
        raise SetupError(tool)
    check_tools(tool)
    root = (args.build_root or default_cache_dir() / "zephyr-bench").resolve()
    tool.update({"ZEPHYR_BASE": os.fspath(base),
                 # identical sources under different build directories share ccache's
                 # entries (ccache: base_dir makes paths below it relative; hash_dir off
                 # for -g, whose debug information names the build directory)
                 "CCACHE_BASEDIR": os.fspath(root), "CCACHE_NOHASHDIR": "true",
                 "PATH": os.pathsep.join([str(Path(sys.executable).parent),
                                          tool.get("PATH", "")])})
    tool.pop("ZEPHYR_MODULES", None)  # passed to cmake
    return Setup(base, zephyr_version(base), modules, tool, root, args.jobs,
                 args.tflm_build, tuple(shlex.split(args.nnopt_options)),
                 args.picolibc_buildtype)
