# SPDX-License-Identifier: Apache-2.0
# Zephyr's own file (this TOOLCHAIN_ROOT only changes compiler/gcc/target.cmake).
include(${ZEPHYR_BASE}/cmake/linker/ld/target.cmake)
