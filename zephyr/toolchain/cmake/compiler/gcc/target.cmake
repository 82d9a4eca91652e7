# SPDX-License-Identifier: Apache-2.0
# Zephyr's GCC target setup (zephyr/cmake/compiler/gcc/target.cmake, which includes
# target_riscv.cmake for ARCH riscv and computes LIBGCC_DIR with the full -march), then,
# on RISC-V, libgcc from the multilib of the base ISA: -march without its "_z..."
# extensions (rv32imac_zicsr_zifencei -> rv32imac) and the same -mabi. Zicsr/Zifencei
# change no code in libgcc, so the rv32imac/ilp32 library is the right one.
include(${ZEPHYR_BASE}/cmake/compiler/gcc/target.cmake)

if("${ARCH}" STREQUAL "riscv")
  string(REGEX REPLACE "_.*$" "" nnopt_multilib_march "${riscv_march}")
  execute_process(
    COMMAND ${CMAKE_C_COMPILER} -march=${nnopt_multilib_march} -mabi=${riscv_mabi}
            --print-libgcc-file-name
    OUTPUT_VARIABLE LIBGCC_FILE_NAME
    OUTPUT_STRIP_TRAILING_WHITESPACE
    )
  assert_exists(LIBGCC_FILE_NAME)
  get_filename_component(LIBGCC_DIR ${LIBGCC_FILE_NAME} DIRECTORY)
  # The property Zephyr's link line reads (-L before -lgcc): cmake/linker/ld/target.cmake.
  set_linker_property(PROPERTY lib_include_dir "-L\"${LIBGCC_DIR}\"")
  message(STATUS "nnopt TOOLCHAIN_ROOT: libgcc of -march=${nnopt_multilib_march} "
                 "-mabi=${riscv_mabi}: ${LIBGCC_FILE_NAME}")
endif()
