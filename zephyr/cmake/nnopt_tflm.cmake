# nnopt for applications that run TensorFlow Lite Micro (Zephyr's tflite-micro module,
# CONFIG_TENSORFLOW_LITE_MICRO): the model reordered and offline-planned by nnopt, and
# TFLM's arena sized from nnopt's measurement (docs/tflm.md).
#
#   nnopt_add_tflm_model(<target>
#     MODEL <file.tflite>         relative paths from the calling CMakeLists.txt
#     [BOARD <nnopt board>]       for the post-link ELF check (default: the nnopt board
#                                 of the Zephyr board being built, as nnopt_add_model)
#     [OUTPUT_DIR <dir>]          default: ${CMAKE_CURRENT_BINARY_DIR}/nnopt_tflm/<name>
#     [NO_ELF_CHECK])
#
# At build time it runs `nnopt optimize MODEL --emit tflite -o OUTPUT_DIR` (writing
# <name>_nnopt.tflite when one is no worse for TFLM, and the report with TFLM's arena
# before and after), then `python -m nnopt.tflm.cfiles` for <name>_tflm.h
# (<NAME>_TFLM_ARENA_BYTES, <NAME>_TFLM_ARENA_BYTES_BEFORE, <NAME>_TFLM_NNOPT) and
# <name>_tflm_data.c (the model TFLM runs and the original, in flash), added to
# <target>. The ELF check is nnopt_add_model's (nnopt.cmake: _nnopt_register_elf_check):
# `nnopt check-elf zephyr.elf --board BOARD` after the link.

include_guard(GLOBAL)

function(nnopt_add_tflm_model target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "NO_ELF_CHECK" "MODEL;BOARD;OUTPUT_DIR" "")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "nnopt_add_tflm_model: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_MODEL)
    message(FATAL_ERROR "nnopt_add_tflm_model(${target}): MODEL <file.tflite> is required")
  endif()
  if(NOT CONFIG_TENSORFLOW_LITE_MICRO)
    message(FATAL_ERROR "nnopt_add_tflm_model: TFLM is disabled; add "
      "CONFIG_TENSORFLOW_LITE_MICRO=y to prj.conf (and the tflite-micro module)")
  endif()
  get_filename_component(model ${ARG_MODEL} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  if(NOT EXISTS ${model})
    message(FATAL_ERROR "nnopt_add_tflm_model: model file not found: ${model}")
  endif()
  get_filename_component(stem ${model} NAME_WLE)
  string(REGEX REPLACE "[^0-9A-Za-z_]" "_" name "${stem}")

  set(outdir ${ARG_OUTPUT_DIR})
  if(NOT outdir)
    set(outdir ${CMAKE_CURRENT_BINARY_DIR}/nnopt_tflm/${name})
  endif()
  file(MAKE_DIRECTORY ${outdir})

  _nnopt_check_python()
  _nnopt_root(root)
  _nnopt_cli(cli)
  file(GLOB_RECURSE compiler_sources CONFIGURE_DEPENDS ${root}/scripts/nnopt/*.py)
  set(report ${outdir}/${name}_report.json)
  set(header ${outdir}/${name}_tflm.h)
  set(data ${outdir}/${name}_tflm_data.c)
  add_custom_command(
    OUTPUT ${report}
    BYPRODUCTS ${outdir}/${name}_nnopt.tflite ${outdir}/${name}_plan.json
               ${outdir}/${name}_memory.png
    COMMAND ${cli} optimize ${model} --emit tflite -o ${outdir} --table none
    DEPENDS ${model} ${compiler_sources}
    WORKING_DIRECTORY ${outdir}
    COMMENT "nnopt: planning ${stem} for TFLM (offline memory plan, TFLM's arena)"
    VERBATIM)
  add_custom_command(
    OUTPUT ${header} ${data}
    COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${root}/scripts
            ${PYTHON_EXECUTABLE} -m nnopt.tflm.cfiles ${report} ${model} ${outdir} ${name}
    DEPENDS ${report} ${model}
    COMMENT "nnopt: ${name}_tflm.h"
    VERBATIM)
  target_sources(${target} PRIVATE ${data} ${header})
  target_include_directories(${target} PRIVATE ${outdir})

  # The ELF check's board as nnopt_add_model() finds it: BOARD, else the nnopt board
  # file of this Zephyr board, else this build's devicetree (edt.pickle).
  set(board ${ARG_BOARD})
  set(board_args "")
  if(NOT board)
    nnopt_board_for_zephyr_board(board)
  endif()
  if(board)
    set(board_args --board ${board})
  else()
    _nnopt_edt_pickle(edt)
    if(edt)
      _nnopt_board_target(board)
      set(board_args --board ${board} --edt ${edt})
    endif()
  endif()
  if(board AND NOT ARG_NO_ELF_CHECK)
    _nnopt_register_elf_check(${board} ${board_args})
  endif()
  set(NNOPT_TFLM_MODEL_NAME ${name} PARENT_SCOPE)
endfunction()
