"""Which TensorFlow Lite Micro build goes with each core bench_firmware.py measures: the
TFLM Makefile target and its variables, the cross compiler, and the generic CMSIS
device header TFLM's ``cortex_m_generic`` target includes (data, for tflm_firmware.py).

One :class:`Variant` per (core, kernels): TFLM's reference kernels (``ref``) and, on
Arm, CMSIS-NN's (``cmsis_nn``: ``OPTIMIZED_KERNEL_DIR=cmsis_nn``; CMSIS-NN picks its
DSP path from ``__ARM_FEATURE_DSP`` and its Helium path from ``__ARM_FEATURE_MVE``, which
GCC defines for ``-mcpu=cortex-m55``). Each is built for exactly the core and float ABI
of the nnopt board it is measured beside (its ``-mcpu``/``-mfpu``/``-mfloat-abi`` must
link with nnrt's port for that board):

======  ===============  ==============================================================
core    board            TFLM build
======  ===============  ==============================================================
m7      nucleo_f767zi    ``cortex_m_generic``, ``TARGET_ARCH=cortex-m7+fp`` (hard float)
m3      mps2_an385       ``cortex-m3`` (soft float; CMSIS-NN's portable C path)
m4      mps2_an386       ``cortex-m4+fp`` (-mcpu=cortex-m4 -mfpu=auto, hard float, DSP)
m33     mps2_an521       ``cortex-m33+nodsp`` (the board's CPU0 of QEMU's SSE-200 has
                         neither DSP nor FPU: soft float, CMSIS-NN's portable C path)
m55     mps3_an547       ``cortex-m55`` (-mfpu=auto, hard float: MVE, CMSIS-NN's Helium)
m0      qemu_cortex_m0   ``cortex-m0`` (soft float)
rv32    qemu_riscv32     ``riscv32_generic``, ``RISCV_ARCH=rv32imac`` (reference kernels)
======  ===============  ==============================================================

TFLM's spellings come from its ``targets/cortex_m_generic_makefile.inc`` and
``targets/riscv32_generic_makefile.inc``. For RISC-V three Makefile variables are set
on the command line (:data:`RISCV_MAKE_ARGS`), because Debian 12's
``riscv64-unknown-elf-gcc`` 12 is not the toolchain TFLM downloads:

- ``RISCV_ARCH=rv32imac`` (TFLM's default ``rv32imc``): the ISA of nnopt's qemu_riscv32
  board, whose multilib (``rv32imac/ilp32``) the toolchain ships;
- ``RISCV_EXTRA_CFLAGS``: ``--specs=picolibc.specs`` (the only C library Debian ships for
  it) and, as Debian ships no C++ library for riscv64-unknown-elf, the target-independent
  libstdc++ headers of the arm-none-eabi C++ package (:data:`RISCV_CXX_INCLUDES`). TFLM
  uses only header-level C++ (``<algorithm>``, ``<limits>``, ``<cmath>``, ``<new>``; it
  builds with ``-fno-exceptions -fno-rtti``); the two runtime symbols its virtual
  destructors name come from the harness (``NNOPT_TFLM_NO_LIBSUPCXX``);
- ``THIRD_PARTY_CC_SRCS=``: the target's only third-party source is eyalroz/printf, which
  ``BUILD_TYPE=release`` (``TF_LITE_STRIP_ERROR_STRINGS``) never calls and which cannot be
  downloaded offline.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nnopt.firmware.toolchain import Target


@dataclass(frozen=True)
class Variant:
    """A TFLM build measured: its kernels, the core it is built for, and where nnopt's
    bare-metal firmware for that core runs."""

    kernels: str  # "ref" (TFLM's reference kernels) or "cmsis_nn" (OPTIMIZED_KERNEL_DIR)
    arch: str  # TFLM's TARGET_ARCH (Arm) or RISCV_ARCH (RISC-V)
    target: Target  # nnopt's firmware target (startup, port, QEMU machine)
    board: str  # nnopt board whose regions the firmware is linked for
    core: str = "m7"  # bench_firmware.py's short core name (BENCH_CORES)
    tflm_target: str = "cortex_m_generic"  # TFLM's TARGET

    @property
    def isa(self) -> str:
        """``arm`` or ``riscv`` (nnopt.firmware.arch: the compilers)."""
        return "riscv" if self.tflm_target.startswith("riscv") else "arm"


def _arm(core: str, arch: str, board: str, target: Target = "qemu") -> dict[str, Variant]:
    suffix = "" if core == "m7" else f"_{core}"
    return {f"{k}{suffix}": Variant(k, arch, target, board, core)
            for k in ("ref", "cmsis_nn")}


#: Every TFLM build, by name: ``ref`` / ``cmsis_nn`` on the Cortex-M7 (the main
#: comparison's ``tflm_<variant>_*`` fields), ``<kernels>_<core>`` on the others.
VARIANT_SPECS: dict[str, Variant] = {
    **_arm("m7", "cortex-m7+fp", "nucleo_f767zi", "qemu-m7"),
    **_arm("m3", "cortex-m3", "mps2_an385", "qemu-m3"),
    **_arm("m4", "cortex-m4+fp", "mps2_an386"),
    **_arm("m33", "cortex-m33+nodsp", "mps2_an521"),
    **_arm("m55", "cortex-m55", "mps3_an547"),
    **_arm("m0", "cortex-m0", "qemu_cortex_m0"),
    "ref_rv32": Variant("ref", "rv32imac", "qemu", "qemu_riscv32", "rv32", "riscv32_generic"),
}
VARIANTS = ("ref", "cmsis_nn")  # Cortex-M7
M3_VARIANTS = ("ref_m3", "cmsis_nn_m3")
ALL_VARIANTS = tuple(VARIANT_SPECS)
#: The TFLM builds of each core, by short name (in :data:`ALL_VARIANTS` order).
CORE_VARIANTS: dict[str, tuple[str, ...]] = {}
for _name, _v in VARIANT_SPECS.items():
    CORE_VARIANTS[_v.core] = (*CORE_VARIANTS.get(_v.core, ()), _name)

_COMMON_ARGS = ("BUILD_TYPE=release", "TOOLCHAIN=gcc",
                # the examples' and benchmarks' test rules (not the library's)
                "MICRO_LITE_EXAMPLE_TESTS=", "MICRO_LITE_BENCHMARKS=",
                "OLD_MICRO_LITE_BENCHMARKS=",
                # the signal library (audio front-end custom ops, 41 files): no model
                # here uses it, and CPU is scarce
                "MICROLITE_CC_SIGNAL_KERNEL_SRCS=")
TFLM_MAKE_ARGS = ("TARGET=cortex_m_generic", "TARGET_ARCH={arch}", *_COMMON_ARGS)
#: libstdc++'s headers for RISC-V (see the module's docstring): the generic ones and a
#: soft-float Thumb multilib's ``bits/c++config.h`` (no Arm-specific code is generated
#: from them: the compiler is riscv64-unknown-elf-g++).
RISCV_CXX_INCLUDES = ("/usr/include/newlib/c++/12.2.1",
                      "/usr/include/newlib/c++/12.2.1/arm-none-eabi/thumb/v6-m/nofp")
RISCV_MAKE_ARGS = ("TARGET=riscv32_generic", "RISCV_ARCH={arch}", *_COMMON_ARGS,
                   "THIRD_PARTY_CC_SRCS=",
                   "RISCV_EXTRA_CFLAGS=--specs=picolibc.specs "
                   + " ".join(f"-isystem {d}" for d in RISCV_CXX_INCLUDES))


@dataclass(frozen=True)
class Compilers:
    """The C++ compiler and archiver of one ISA, and how to get them."""

    cxx: str
    ar: str
    hint: str
    probe_flags: tuple[str, ...] = ()  # to find <cstdio> as TFLM's build will


COMPILERS = {
    "arm": Compilers("arm-none-eabi-g++", "arm-none-eabi-ar",
                     "C++ for arm-none-eabi (TFLM is C++): apt-get install "
                     "libstdc++-arm-none-eabi-newlib"),
    "riscv": Compilers("riscv64-unknown-elf-g++", "riscv64-unknown-elf-ar",
                       "riscv64-unknown-elf-g++ with picolibc and the arm-none-eabi C++ "
                       "headers: apt-get install gcc-riscv64-unknown-elf "
                       "picolibc-riscv64-unknown-elf libstdc++-arm-none-eabi-dev",
                       ("-march=rv32imac", "-mabi=ilp32", "--specs=picolibc.specs",
                        *(f for d in RISCV_CXX_INCLUDES for f in ("-isystem", d)))),
}
CXX = COMPILERS["arm"].cxx  # the Cortex-M builds' (kept for callers)
CXX_HINT = COMPILERS["arm"].hint


def variant_spec(variant: str) -> Variant:
    """The build of ``variant`` (one of :data:`ALL_VARIANTS`)."""
    try:
        return VARIANT_SPECS[variant]
    except KeyError:
        raise ValueError(f"unknown TFLM variant {variant!r} (one of "
                         f"{', '.join(ALL_VARIANTS)})") from None


def compilers(variant: str) -> Compilers:
    return COMPILERS[variant_spec(variant).isa]


def make_args(variant: str) -> list[str]:
    """TFLM's Makefile variables for a variant (:data:`VARIANT_SPECS`)."""
    spec = variant_spec(variant)
    cc = shutil.which(compilers(variant).cxx)
    root = str(Path(cc).parent) + "/" if cc else "/usr/bin/"
    template = RISCV_MAKE_ARGS if spec.isa == "riscv" else TFLM_MAKE_ARGS
    args = [a.format(arch=spec.arch) for a in template]
    args.append(f"TARGET_TOOLCHAIN_ROOT={root}")
    if spec.kernels == "cmsis_nn":
        args.append("OPTIMIZED_KERNEL_DIR=cmsis_nn")
    return args


# ----- generic CMSIS device headers (cortex_m_generic includes ARMCM<core>.h) -----

def _device_header(core: str, config: str) -> str:
    """A generic device header ``ARMCM<core>.h`` as TFLM's cortex_m_generic target includes
    it (micro_time.cc; the Cortex_DFP pack is not in the workspace): the interrupt numbers
    every Cortex-M has, the core's configuration macros (``config``), then CMSIS'
    ``core_cm<core>.h``."""
    return f"""\
/* Generic Cortex-M{core} device header for TFLM's cortex_m_generic target (written by
 * nnopt's benchmarks/tflm_firmware.py; the Cortex_DFP pack is not available offline). */
#ifndef ARMCM{core}_H
#define ARMCM{core}_H
typedef enum IRQn {{
  NonMaskableInt_IRQn = -14, HardFault_IRQn = -13, MemoryManagement_IRQn = -12,
  BusFault_IRQn = -11, UsageFault_IRQn = -10, SVCall_IRQn = -5, DebugMonitor_IRQn = -4,
  PendSV_IRQn = -2, SysTick_IRQn = -1, Interrupt0_IRQn = 0
}} IRQn_Type;
{config}#include "core_cm{core}.h"
#endif
"""


_CORE_CONFIG = """\
#define __MPU_PRESENT 1U
#define __VTOR_PRESENT 1U
#define __NVIC_PRIO_BITS 3U
#define __Vendor_SysTickConfig 0U
"""
#: ARMCM7.h: with the FPU (double precision), caches and DTCM.
ARMCM7_H = _device_header("7", "#define __CM7_REV 0x0000U\n" + _CORE_CONFIG + """\
#define __FPU_PRESENT 1U
#define __FPU_DP 1U
#define __ICACHE_PRESENT 1U
#define __DCACHE_PRESENT 1U
#define __DTCM_PRESENT 1U
""")
#: ARMCM3.h, for the Cortex-M3 builds (:data:`M3_VARIANTS`): no FPU.
ARMCM3_H = _device_header("3", "#define __CM3_REV 0x0201U\n" + _CORE_CONFIG)
#: ARMCM4.h: single-precision FPU.
ARMCM4_H = _device_header("4", "#define __CM4_REV 0x0001U\n" + _CORE_CONFIG
                          + "#define __FPU_PRESENT 1U\n")
#: ARMCM33.h: the no-DSP, no-FPU build (the mps2_an521 board's CPU0).
ARMCM33_H = _device_header("33", "#define __CM33_REV 0x0000U\n" + _CORE_CONFIG + """\
#define __FPU_PRESENT 0U
#define __DSP_PRESENT 0U
#define __SAUREGION_PRESENT 1U
""")
#: ARMCM55.h: FPU, MVE (integer and float), caches, PMU.
ARMCM55_H = _device_header("55", "#define __CM55_REV 0x0001U\n" + _CORE_CONFIG + """\
#define __FPU_PRESENT 1U
#define __FPU_DP 1U
#define __DSP_PRESENT 1U
#define __MVE_PRESENT 1U
#define __MVE_FP 1U
#define __ICACHE_PRESENT 1U
#define __DCACHE_PRESENT 1U
#define __PMU_PRESENT 1U
#define __PMU_NUM_EVENTCNT 8U
#define __SAUREGION_PRESENT 1U
""")
#: ARMCM0.h: Armv6-M (no MPU, 2 priority bits).
ARMCM0_H = _device_header("0", """\
#define __CM0_REV 0x0000U
#define __NVIC_PRIO_BITS 2U
#define __Vendor_SysTickConfig 0U
""")

#: Device headers written into the build tree's CMSIS download folder, by file name.
DEVICE_HEADERS = {"ARMCM7": ARMCM7_H, "ARMCM3": ARMCM3_H, "ARMCM4": ARMCM4_H,
                  "ARMCM33": ARMCM33_H, "ARMCM55": ARMCM55_H, "ARMCM0": ARMCM0_H}
