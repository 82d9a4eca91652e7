# SPDX-License-Identifier: Apache-2.0
# The cross-compile variant's sysroot discovery (zephyr/cmake/toolchain/cross-compile/
# target.cmake); see generic.cmake beside this file.
include(${ZEPHYR_BASE}/cmake/toolchain/cross-compile/target.cmake)
