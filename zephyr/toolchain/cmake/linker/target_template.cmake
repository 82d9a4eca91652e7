# SPDX-License-Identifier: Apache-2.0
# Zephyr's own file (this TOOLCHAIN_ROOT changes only compiler/gcc/target.cmake and linker/ld/linker_flags.cmake).
include(${ZEPHYR_BASE}/cmake/linker/target_template.cmake)
