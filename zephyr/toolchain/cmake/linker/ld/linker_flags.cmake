# SPDX-License-Identifier: Apache-2.0
# Zephyr's ld flags (zephyr/cmake/linker/ld/linker_flags.cmake), plus one: binutils >= 2.39
# (Debian 12's 2.40) warns "LOAD segment with RWX permissions" for images linked with -N
# into RAM (qemu_riscv32 runs from RAM, one RWX segment), and Twister builds turn link
# warnings into errors (CONFIG_COMPILER_WARNINGS_AS_ERRORS -> the linker's
# warnings_as_errors, -Wl,--fatal-warnings: cmake/linker/ld/gcc/linker_flags.cmake). The
# flag is added only where ld accepts it (check_set_linker_property,
# cmake/modules/extensions.cmake).
include(${ZEPHYR_BASE}/cmake/linker/ld/linker_flags.cmake)
check_set_linker_property(TARGET linker APPEND PROPERTY baremetal
                          ${LINKERFLAGPREFIX},--no-warn-rwx-segments)
