# SPDX-License-Identifier: Apache-2.0
#
# Zephyr's `cross-compile` toolchain variant as nnopt's TOOLCHAIN_ROOT provides it: a GNU
# cross toolchain named by its prefix (CROSS_COMPILE, e.g. /usr/bin/riscv64-unknown-elf-)
# exactly like Zephyr's own (same variant name, so Twister, whose RISC-V platforms list
# "cross-compile" among their toolchains, selects them: scripts/pylib/twister/twisterlib/
# platform.py), but whose libgcc is taken from the multilib of the *base* ISA.
#
# Why: Zephyr's cmake/compiler/gcc/target_riscv.cmake builds -march from Kconfig with
# the Z* extensions appended (rv32imac_zicsr_zifencei for the FE310 and QEMU virt);
# GCC 12's multilib table (`riscv64-unknown-elf-gcc -print-multi-lib`) lists
# rv32imac/ilp32 but no _zicsr_zifencei spelling, so --print-libgcc-file-name (called
# by cmake/compiler/gcc/target.cmake) answers the default rv64imafdc/lp64 libgcc and
# the link fails with "ELFCLASS64 incompatible". The compile flags stay Zephyr's.
#
# Use (scripts/zephyr-env-riscv.sh prints it):
#   ZEPHYR_TOOLCHAIN_VARIANT=cross-compile TOOLCHAIN_ROOT=<nnopt>/zephyr/toolchain
#   CROSS_COMPILE=/usr/bin/riscv64-unknown-elf-
# Zephyr reads a TOOLCHAIN_ROOT's cmake/toolchain/<variant>/, cmake/compiler/<COMPILER>/,
# cmake/linker/<LINKER>/ and cmake/bintools/<BINTOOLS>/ (cmake/modules/FindHostTools.cmake,
# FindTargetTools.cmake, cmake/target_toolchain_flags.cmake): the files under this root
# include Zephyr's own, and compiler/gcc/target.cmake adds the multilib correction.

# The cross-compile variant's CROSS_COMPILE handling and COMPILER/LINKER/BINTOOLS
# (gcc, ld, gnu): zephyr/cmake/toolchain/cross-compile/generic.cmake.
include(${ZEPHYR_BASE}/cmake/toolchain/cross-compile/generic.cmake)
