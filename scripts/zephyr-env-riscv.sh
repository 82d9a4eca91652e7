#!/usr/bin/env bash
# The environment for building Zephyr for nnopt's RISC-V boards (qemu_riscv32, hifive1)
# with Debian's riscv64-unknown-elf GCC 12: prints `export` lines, for
# scripts/zephyr-env.sh's RISC-V branch or `eval "$(scripts/zephyr-env-riscv.sh)"`.
#
# Zephyr's own `cross-compile` variant with this GCC fails to link (the 64-bit libgcc is
# picked: -march=rv32imac_zicsr_zifencei matches no multilib). TOOLCHAIN_ROOT points
# Zephyr at nnopt's copy of the variant (zephyr/toolchain/cmake/toolchain/cross-compile/
# generic.cmake: Zephyr's files reused, libgcc from the rv32imac/ilp32 multilib); the
# variant keeps its name, so Twister's RISC-V platforms accept it. The C library is
# Zephyr's picolibc module built from source (CONFIG_PICOLIBC_USE_MODULE), as for Arm.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="${CROSS_COMPILE:-/usr/bin/riscv64-unknown-elf-}"
if [ ! -x "${prefix}gcc" ]; then
    echo "zephyr-env-riscv: ${prefix}gcc not found" >&2
    echo "Hint: apt-get install gcc-riscv64-unknown-elf qemu-system-misc" >&2
    exit 1
fi
echo "export ZEPHYR_TOOLCHAIN_VARIANT=cross-compile"
echo "export TOOLCHAIN_ROOT=$root/zephyr/toolchain"
echo "export CROSS_COMPILE=$prefix"
