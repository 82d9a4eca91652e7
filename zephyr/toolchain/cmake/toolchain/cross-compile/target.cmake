# SPDX-License-Identifier: Apache-2.0
# No sysroot search: Zephyr's cross-compile target.cmake globs for a libc.a under the
# compiler's prefix when the compiler reports no sysroot (Debian's does not), and on a
# machine with several bare-metal toolchains in /usr picks another toolchain's (e.g.
# arm-none-eabi's newlib) and passes it as --sysroot. The C library here is Zephyr's
# picolibc module built from source, which needs none; -DSYSROOT_DIR=... still works
# (zephyr/cmake/compiler/gcc/target.cmake reads it).
