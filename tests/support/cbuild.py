"""The one way tests build C on the host: nnrt's kernel sources by family, the C test
programs of ``tests/c/`` (C sources live in ``.c`` files, not in Python strings), and
shared libraries of kernels for ``ctypes``. Warnings are errors; programs run under
ASan + UBSan by default. Firmware and QEMU builds go through
:mod:`nnopt.firmware.toolchain` instead (``build(BuildSpec(...))``), as do the tests'
builds that need its cache or a target other than the host.

The ``cbuild`` fixture (tests/conftest.py) gives a :class:`CBuild` in the test's
temporary directory.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from nnopt.paths import nnrt_dir, nnrt_include_dirs

#: The C test programs.
C_DIR = Path(__file__).resolve().parents[1] / "c"
WARNINGS = ("-std=c99", "-Wall", "-Wextra", "-Werror")
SANITIZE = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all")


def c_source(name: str) -> Path:
    """A C test program of tests/c/."""
    path = C_DIR / name
    assert path.is_file(), f"no C test source {path}"
    return path


def kernel_sources(*families: str, pattern: str = "*.c") -> list[Path]:
    """The sources of kernel families (modules/nnrt/kernels/<family>/), sorted."""
    root = nnrt_dir() / "kernels"
    return [p for f in families for p in sorted((root / f).glob(pattern))]


def _gcc() -> str:
    cc = shutil.which("gcc")
    if cc is None:
        pytest.skip("no host gcc")
    return cc


class CBuild:
    """Host builds into one directory."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir

    def _gcc_run(self, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        inc = [f"-I{d}" for d in nnrt_include_dirs()]
        return subprocess.run([_gcc(), *WARNINGS, *inc, *args], capture_output=True,
                              text=True, check=False)

    def _compile(self, args: Sequence[str]) -> None:
        proc = self._gcc_run(args)
        assert proc.returncode == 0, f"C build failed:\n{proc.stderr[-4000:]}"

    def object(self, name: str, source: Path, *defines: str, include: Path | None = None,
               ) -> tuple[Path, subprocess.CompletedProcess[str]]:
        """Compile ``source`` alone (-O2 -c) with ``-D`` defines and an extra include
        directory searched first; the object and gcc's result, which the caller checks
        (a test may expect the build to fail)."""
        obj = self.out_dir / name
        proc = self._gcc_run([*([f"-I{include}"] if include else []), "-O2",
                              *(f"-D{d}" for d in defines), "-c", str(source),
                              "-o", str(obj)])
        return obj, proc

    def library(self, name: str, sources: Sequence[Path]) -> ctypes.CDLL:
        """A shared library (-O2) of ``sources``, loaded."""
        lib = self.out_dir / f"lib{name}.so"
        self._compile(["-O2", "-shared", "-fPIC", *map(str, sources), "-o", str(lib), "-lm"])
        return ctypes.CDLL(str(lib))

    def program(self, name: str, sources: Sequence[Path], *, opt: str = "-O1",
                debug: bool = False, sanitize: bool = True) -> Path:
        """An executable of ``sources`` (ASan + UBSan unless ``sanitize`` is False)."""
        exe = self.out_dir / name
        self._compile([opt, *(["-g"] if debug else []), *(SANITIZE if sanitize else ()),
                       *map(str, sources), "-o", str(exe), "-lm"])
        return exe

    @staticmethod
    def run(exe: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(exe)], capture_output=True, text=True, check=False)


def kernel_library(tmp_path_factory: pytest.TempPathFactory, name: str,
                   *families: str) -> ctypes.CDLL:
    """A shared library of the kernel families, built in a new temporary directory (for
    a module-scoped ``lib`` fixture)."""
    return CBuild(tmp_path_factory.mktemp(name)).library(name, kernel_sources(*families))


def ptr(a: np.ndarray) -> ctypes.c_void_p:
    """A ``void *`` to an array's data, for ctypes calls of the kernels."""
    return ctypes.c_void_p(a.ctypes.data)
