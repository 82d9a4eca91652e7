# nnopt build-system integration for Zephyr applications.
#
# Defines nnopt_add_model(), which an application calls after find_package(Zephyr):
#
#   find_package(Zephyr REQUIRED HINTS $ENV{ZEPHYR_BASE})
#   project(my_app LANGUAGES C)
#   target_sources(app PRIVATE src/main.c)
#   nnopt_add_model(app MODEL ${CMAKE_CURRENT_SOURCE_DIR}/model.tflite)
#
# Signature:
#
#   nnopt_add_model(<target>
#     MODEL <file.tflite|file.onnx> the model (ONNX is recognised by content);
#                                   relative paths are taken from the calling
#                                   CMakeLists.txt's directory
#     [BOARD <board>]               budget to plan for: an nnopt board
#                                   (boards/nnopt/<name>.yaml) or any Zephyr board target
#                                   (its devicetree); default: the nnopt board whose
#                                   zephyr_board is the board being built, else this
#                                   build's own devicetree (see "Budget" below)
#     [OUTPUT_DIR <dir>]            default: ${CMAKE_CURRENT_BINARY_DIR}/nnopt/<name>
#     [OPTIONS <arg>...]            extra `nnopt optimize` arguments (--order file ...)
#     [EXTRA_OUTPUTS <file>...]     more files the compiler writes into OUTPUT_DIR
#                                   (e.g. a weight blob) that the build depends on
#     [OUT <prefix>]                also set <prefix>_NAME, <prefix>_DIR and
#                                   <prefix>_BUDGET in the caller's scope (this model's
#                                   own, unlike NNOPT_MODEL_NAME, which the last call sets)
#     [NO_ELF_CHECK])               do not register the post-link budget check
#
# What it does:
#
#  1. At build time (add_custom_command), runs `nnopt optimize MODEL -o OUTPUT_DIR
#     --board BOARD OPTIONS` with Zephyr's Python interpreter. The model, every source
#     file of the compiler (scripts/nnopt/**/*.py) and the board files are dependencies,
#     so editing any of them regenerates the sources. An over-budget plan fails the
#     build here, with the compiler's message.
#  2. Writes <name>_plan.h (peaks, arena and weight bytes from <name>_plan.json) so the
#     application can print what the planner achieved without parsing JSON.
#  3. Adds <name>_model.c to <target>, OUTPUT_DIR to its include path, and the
#     generated headers as sources so that they exist before anything includes them.
#     Generated sources get the compile options the runtime library published in the
#     global property NNRT_GENERATED_COMPILE_OPTIONS (on Zephyr: a forced include
#     mapping NNRT_ARENA / NNRT_WEIGHTS / NNRT_DTCM to Zephyr's linker sections) and
#     its private include directory, NNRT_GENERATED_INCLUDE_DIRECTORIES (the kernel
#     bodies nnrt/kernels/spec.h includes for specialised code).
#  4. Registers, once per build, the target nnopt_elf_check (part of ALL, built after
#     the final zephyr.elf) that runs `nnopt check-elf zephyr.elf --board BOARD`. Over
#     budget, it exits 2 and the build fails with the per-region breakdown. Disabled by
#     CONFIG_NNRT_ELF_CHECK=n or NO_ELF_CHECK. `west nn-check` runs the same check on an
#     existing build directory.
#
# CONFIG_NNRT_CMSIS_NN changes how the nnrt library runs the kernels
# (modules/nnrt/kernels/cmsis/), and CMSIS-NN gets no memory beyond what the nnrt API
# already guarantees each kernel, so the plan and the arena are the same with and
# without it. One difference: kernels specialised into the generated model
# (--specialize, default auto) do not go through nnrt's entry points, where the
# CMSIS-NN hand-over sits, so with CONFIG_NNRT_CMSIS_NN the model is generated with
# --specialize off (a --specialize in OPTIONS comes later on the command line and wins).
#
# Budget: a boards/nnopt file whose zephyr_board is the board being built wins (the
# overrides, and the data of nnopt's bare-metal QEMU flows); for every other board the
# budget is the build's own devicetree, EDT_PICKLE (<build>/zephyr/edt.pickle), which
# cmake/modules/dts.cmake writes with scripts/dts/gen_edt.py during
# find_package(Zephyr), i.e. before this module's CMakeLists.txt and the application's
# lines run. `nnopt optimize --edt` reads it with Zephyr's python-devicetree (edtlib,
# found through ZEPHYR_BASE): the arena's budget is the chosen zephyr,sram node, the
# ELF check's regions are zephyr,sram / zephyr,flash / zephyr,dtcm / zephyr,itcm /
# zephyr,ccm and the zephyr,memory-region nodes (scripts/nnopt/devicetree.py). The
# budget table is printed at configure time, once per build.
#
# Results: every call records its model on <target>: the target property NNOPT_MODELS
# (list of model names) and, per model <name>, NNOPT_MODEL_DIR_<name> and
# NNOPT_MODEL_BUDGET_<name> (get_target_property); OUT <prefix> sets the same as
# variables. For existing callers, NNOPT_MODEL_NAME (C identifier prefix, e.g.
# hello_world_int8, so the model is <name>_model) and NNOPT_MODEL_DIR (OUTPUT_DIR) are
# still set in the caller's scope: the last call's.
#
# Why a function called after find_package(Zephyr) and not a module-level hook:
# find_package(Zephyr) adds ZEPHYR_BASE/CMakeLists.txt with add_subdirectory()
# (cmake/modules/kernel.cmake), and that file reads the global property
# extra_post_build_commands at its end; module code and that read both run inside
# find_package, before the application's own lines. The check is therefore a separate
# target with a target-level dependency on the final ELF target, whose name Zephyr
# exports to the application scope as logical_target_for_zephyr_elf
# (ZEPHYR_BASE/CMakeLists.txt: set(logical_target_for_zephyr_elf ... PARENT_SCOPE)).
#
# Requirements: Zephyr's Python (PYTHON_EXECUTABLE, cmake/modules/python.cmake) must
# have nnopt's dependencies (pip install -e <this repository>); the check below fails
# the configuration with a hint when it does not.

include_guard(GLOBAL)

# Functions find this file's directory through CMAKE_CURRENT_FUNCTION_LIST_DIR (CMake
# >= 3.17; Zephyr needs >= 3.20): a variable set here would live in the module's
# directory scope and be invisible to the application that calls the functions.

# The repository root: zephyr/cmake/../..
function(_nnopt_root out)
  get_filename_component(root "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../.." ABSOLUTE)
  set(${out} ${root} PARENT_SCOPE)
endfunction()

# The command prefix that runs the nnopt CLI from this repository's sources.
function(_nnopt_cli out)
  _nnopt_root(root)
  if(NOT PYTHON_EXECUTABLE)
    message(FATAL_ERROR "nnopt: PYTHON_EXECUTABLE is not set; call nnopt_add_model() "
      "after find_package(Zephyr).")
  endif()
  # ZEPHYR_BASE: where `--edt` finds Zephyr's python-devicetree (edtlib).
  set(${out}
    ${CMAKE_COMMAND} -E env PYTHONPATH=${root}/scripts NNOPT_ROOT=${root}
    ZEPHYR_BASE=${ZEPHYR_BASE}
    ${PYTHON_EXECUTABLE} -m nnopt.cli
    PARENT_SCOPE)
endfunction()

# Fail early (at configure time) when Zephyr's Python cannot import the compiler.
function(_nnopt_check_python)
  get_property(checked GLOBAL PROPERTY _NNOPT_PYTHON_CHECKED)
  if(checked)
    return()
  endif()
  _nnopt_cli(cli)
  execute_process(COMMAND ${cli} --version
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    _nnopt_root(root)
    message(FATAL_ERROR "nnopt: ${PYTHON_EXECUTABLE} cannot run the nnopt compiler:\n"
      "${err}\n"
      "Hint: install it into the Python that Zephyr uses: "
      "${PYTHON_EXECUTABLE} -m pip install -e ${root}")
  endif()
  message(STATUS "nnopt: ${out} (${PYTHON_EXECUTABLE})")
  set_property(GLOBAL PROPERTY _NNOPT_PYTHON_CHECKED TRUE)
endfunction()

# The board target being built (BOARD plus its qualifiers;
# BOARD_QUALIFIERS has a leading '/' before Zephyr 4.4, see below): nucleo_h743zi/stm32h743xx.
function(_nnopt_board_target out)
  string(REGEX REPLACE "^/" "" qualifiers "${BOARD_QUALIFIERS}")
  if(qualifiers STREQUAL "")
    set(${out} "${BOARD}" PARENT_SCOPE)
  else()
    set(${out} "${BOARD}/${qualifiers}" PARENT_SCOPE)
  endif()
endfunction()

# Map the Zephyr board being built to an nnopt board name (boards/nnopt/<name>.yaml
# whose zephyr_board matches), or "" if none does. Candidates go from the full board
# target to the bare board name: mps2/an385 -> mps2/an385; nucleo_f767zi/stm32f767xx
# -> nucleo_f767zi. BOARD_QUALIFIERS has no leading '/' from Zephyr 4.4 on and had one
# before (doc/releases/migration-guide-4.4.rst); both spellings are accepted.
function(nnopt_board_for_zephyr_board out)
  _nnopt_root(root)
  _nnopt_board_target(target)
  file(GLOB board_files ${root}/boards/nnopt/*.yaml)
  list(SORT board_files)
  while(NOT target STREQUAL "")
    foreach(file ${board_files})
      file(STRINGS ${file} lines REGEX "^zephyr_board:")
      foreach(line ${lines})
        string(REGEX REPLACE "^zephyr_board:[ \t]*([^ \t#]+).*$" "\\1" zb "${line}")
        if(zb STREQUAL target)
          get_filename_component(name ${file} NAME_WE)
          set(${out} ${name} PARENT_SCOPE)
          return()
        endif()
      endforeach()
    endforeach()
    if(target MATCHES "/")
      string(REGEX REPLACE "/[^/]*$" "" target "${target}")
    else()
      set(target "")
    endif()
  endwhile()
  set(${out} "" PARENT_SCOPE)
endfunction()

# This build's devicetree as a pickled edtlib.EDT (cmake/modules/dts.cmake sets
# EDT_PICKLE to ${PROJECT_BINARY_DIR}/edt.pickle, i.e. <build>/zephyr/edt.pickle), or
# "" when there is none.
function(_nnopt_edt_pickle out)
  set(edt "${EDT_PICKLE}")
  if(NOT edt)
    set(edt "${ZEPHYR_BINARY_DIR}/edt.pickle")
  endif()
  if(EXISTS "${edt}")
    set(${out} "${edt}" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

# Print the budget table of the devicetree board once per build.
function(_nnopt_print_budget board_args)
  get_property(printed GLOBAL PROPERTY _NNOPT_BUDGET_PRINTED)
  if(printed)
    return()
  endif()
  set_property(GLOBAL PROPERTY _NNOPT_BUDGET_PRINTED TRUE)
  _nnopt_cli(cli)
  execute_process(COMMAND ${cli} board ${board_args}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nnopt: cannot read the board's memory from the devicetree:\n"
      "${err}")
  endif()
  message(STATUS "nnopt: memory budget from the devicetree (${EDT_PICKLE}):\n${out}")
endfunction()

# Register the post-link budget check once per build (see the header comment).
# board: the key every call must agree on; the other arguments: how check-elf gets the
# board (--board NAME, plus --edt EDT_PICKLE for a devicetree board).
function(_nnopt_register_elf_check board)
  get_property(registered GLOBAL PROPERTY _NNOPT_ELF_CHECK_BOARD)
  if(registered)
    if(NOT registered STREQUAL board)
      message(FATAL_ERROR "nnopt: the ELF check is already registered for board "
        "'${registered}', not '${board}'; pass the same BOARD to every nnopt_add_model().")
    endif()
    return()
  endif()
  set(elf_target ${logical_target_for_zephyr_elf})
  if(NOT elf_target)
    set(elf_target zephyr_final)
  endif()
  if(NOT TARGET ${elf_target})
    message(FATAL_ERROR "nnopt: no final ELF target '${elf_target}'; call "
      "nnopt_add_model() after find_package(Zephyr), or pass NO_ELF_CHECK.")
  endif()
  if(NOT KERNEL_ELF_NAME)
    set(KERNEL_ELF_NAME zephyr.elf)
  endif()
  set(elf ${ZEPHYR_BINARY_DIR}/${KERNEL_ELF_NAME})
  _nnopt_cli(cli)
  add_custom_target(nnopt_elf_check ALL
    COMMAND ${cli} check-elf ${elf} ${ARGN}
            --json ${ZEPHYR_BINARY_DIR}/nnopt_elf_check.json
    BYPRODUCTS ${ZEPHYR_BINARY_DIR}/nnopt_elf_check.json
    COMMENT "nnopt: checking ${KERNEL_ELF_NAME} against the ${board} memory budget"
    VERBATIM)
  add_dependencies(nnopt_elf_check ${elf_target})
  set_property(TARGET nnopt_elf_check APPEND PROPERTY ADDITIONAL_CLEAN_FILES
    ${ZEPHYR_BINARY_DIR}/nnopt_elf_check.json)
  set_property(GLOBAL PROPERTY _NNOPT_ELF_CHECK_BOARD ${board})
endfunction()

function(nnopt_add_model target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "NO_ELF_CHECK"
    "MODEL;BOARD;OUTPUT_DIR;OUT" "OPTIONS;EXTRA_OUTPUTS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "nnopt_add_model: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_MODEL)
    message(FATAL_ERROR "nnopt_add_model(${target}): MODEL <file.tflite or file.onnx> is required")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "nnopt_add_model: '${target}' is not a target")
  endif()
  if(NOT CONFIG_NNRT)
    message(FATAL_ERROR "nnopt_add_model: the nnrt runtime is disabled; "
      "add CONFIG_NNRT=y to prj.conf")
  endif()

  get_filename_component(model ${ARG_MODEL} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  if(NOT EXISTS ${model})
    message(FATAL_ERROR "nnopt_add_model: model file not found: ${model}")
  endif()
  # The compiler names everything after the model file's stem with every character
  # outside [0-9A-Za-z_] replaced by '_' (nnopt.frontend.tflite.load_model).
  get_filename_component(stem ${model} NAME_WLE)
  string(REGEX REPLACE "[^0-9A-Za-z_]" "_" name "${stem}")
  string(TOUPPER ${name} NAME_UPPER)

  get_target_property(models ${target} NNOPT_MODELS)
  if(models AND name IN_LIST models)
    message(FATAL_ERROR "nnopt_add_model(${target}): a model named '${name}' is already "
      "added to ${target}; the generated sources would collide (rename the model file)")
  endif()

  # The budget: BOARD, else the nnopt board file for this Zephyr board, else this
  # build's devicetree (see "Budget" in the header).
  set(board ${ARG_BOARD})
  set(board_args "")
  set(board_deps "")
  set(budget "no memory budget")
  if(NOT board)
    nnopt_board_for_zephyr_board(board)
  endif()
  if(board)
    set(board_args --board ${board})
    set(budget "board ${board}")
  else()
    _nnopt_edt_pickle(edt)
    _nnopt_board_target(board)
    if(edt)
      set(board_args --board ${board} --edt ${edt})
      set(board_deps ${edt})
      set(budget "devicetree of ${board}")
      _nnopt_check_python()
      _nnopt_print_budget("${board_args}")
    else()
      message(WARNING "nnopt: no boards/nnopt/*.yaml has zephyr_board '${BOARD}' and the "
        "build has no devicetree (edt.pickle); planning ${name} without a memory budget "
        "and skipping the ELF check. Pass BOARD <name> to nnopt_add_model() to set one.")
      set(board "")
    endif()
  endif()

  set(outdir ${ARG_OUTPUT_DIR})
  if(NOT outdir)
    set(outdir ${CMAKE_CURRENT_BINARY_DIR}/nnopt/${name})
  endif()
  file(MAKE_DIRECTORY ${outdir})

  _nnopt_check_python()
  _nnopt_root(root)
  _nnopt_cli(cli)

  set(plan_header_script ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/nnopt_plan_header.py)
  set(model_c ${outdir}/${name}_model.c)
  set(model_h ${outdir}/${name}_model.h)
  set(plan_json ${outdir}/${name}_plan.json)
  set(plan_h ${outdir}/${name}_plan.h)
  set(extra "")
  foreach(f ${ARG_EXTRA_OUTPUTS})
    list(APPEND extra ${outdir}/${f})
  endforeach()

  file(GLOB_RECURSE compiler_sources CONFIGURE_DEPENDS ${root}/scripts/nnopt/*.py)
  file(GLOB board_files CONFIGURE_DEPENDS ${root}/boards/nnopt/*.yaml)
  set(kernel_args "")
  if(CONFIG_NNRT_CMSIS_NN)
    set(kernel_args --specialize off)
  endif()
  add_custom_command(
    OUTPUT ${model_c} ${model_h} ${plan_json} ${extra}
    BYPRODUCTS ${outdir}/${name}_report.json ${outdir}/${name}_memory.png
    COMMAND ${cli} optimize ${model} -o ${outdir} ${board_args} --table none ${kernel_args} ${ARG_OPTIONS}
    DEPENDS ${model} ${compiler_sources} ${board_files} ${board_deps}
    WORKING_DIRECTORY ${outdir}
    COMMENT "nnopt: planning ${stem} (${budget})"
    VERBATIM)

  add_custom_command(
    OUTPUT ${plan_h}
    COMMAND ${PYTHON_EXECUTABLE} ${plan_header_script}
            ${plan_json} ${plan_h} --prefix ${NAME_UPPER}
    DEPENDS ${plan_json} ${plan_header_script}
    COMMENT "nnopt: ${name}_plan.h"
    VERBATIM)

  target_sources(${target} PRIVATE ${model_c} ${model_h} ${plan_h})
  target_include_directories(${target} PRIVATE ${outdir})
  get_property(gen_opts GLOBAL PROPERTY NNRT_GENERATED_COMPILE_OPTIONS)
  if(gen_opts)
    set_source_files_properties(${model_c} PROPERTIES COMPILE_OPTIONS "${gen_opts}")
  endif()
  get_property(gen_incs GLOBAL PROPERTY NNRT_GENERATED_INCLUDE_DIRECTORIES)
  if(gen_incs)
    set_source_files_properties(${model_c} PROPERTIES INCLUDE_DIRECTORIES "${gen_incs}")
  endif()

  if(board AND CONFIG_NNRT_ELF_CHECK AND NOT ARG_NO_ELF_CHECK)
    _nnopt_register_elf_check(${board} ${board_args})
  endif()

  # This model's results, kept per model (see "Results" in the header).
  set_property(TARGET ${target} APPEND PROPERTY NNOPT_MODELS ${name})
  set_property(TARGET ${target} PROPERTY NNOPT_MODEL_DIR_${name} ${outdir})
  set_property(TARGET ${target} PROPERTY NNOPT_MODEL_BUDGET_${name} "${budget}")
  if(ARG_OUT)
    set(${ARG_OUT}_NAME ${name} PARENT_SCOPE)
    set(${ARG_OUT}_DIR ${outdir} PARENT_SCOPE)
    set(${ARG_OUT}_BUDGET "${budget}" PARENT_SCOPE)
  endif()
  set(NNOPT_MODEL_NAME ${name} PARENT_SCOPE)
  set(NNOPT_MODEL_DIR ${outdir} PARENT_SCOPE)
endfunction()

# nnopt_model_definitions(<target> [MODEL <name>]): after nnopt_add_model(), the
# compile definitions that let a source written once for any model name the generated
# one: MODEL_SYMBOL (<name>_model), MODEL_HEADER ("<name>_model.h"), PLAN_HEADER
# ("<name>_plan.h") and PLAN_PREFIX (<NAME>, the plan header's macro prefix). <name>:
# MODEL (one of the target's NNOPT_MODELS), else NNOPT_MODEL_NAME (the last call's).
function(nnopt_model_definitions target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "MODEL" "")
  set(model ${ARG_MODEL})
  if(NOT model)
    set(model ${NNOPT_MODEL_NAME})
  endif()
  if(NOT model)
    message(FATAL_ERROR "nnopt_model_definitions(${target}): call nnopt_add_model() first")
  endif()
  get_target_property(models ${target} NNOPT_MODELS)
  if(ARG_MODEL AND NOT (models AND model IN_LIST models))
    message(FATAL_ERROR "nnopt_model_definitions(${target}): no model '${model}' was "
      "added to ${target} (its models: ${models})")
  endif()
  string(TOUPPER ${model} model_upper)
  target_compile_definitions(${target} PRIVATE
    MODEL_SYMBOL=${model}_model
    MODEL_HEADER="${model}_model.h"
    PLAN_HEADER="${model}_plan.h"
    PLAN_PREFIX=${model_upper}
  )
endfunction()
