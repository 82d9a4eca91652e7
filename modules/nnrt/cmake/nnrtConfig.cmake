# nnrt as a CMake package, for builds without Zephyr (docs/plain-builds.md).
#
#   find_package(nnrt REQUIRED)          # CMAKE_PREFIX_PATH or nnrt_DIR: this directory
#   add_executable(app main.c)
#   nnrt_add_model(app path/to/model.tflite)   # generates <model>_model.c/.h with nnopt
#   target_link_libraries(app PRIVATE nnrt::nnrt)
#
# Settings (cache variables):
#   NNRT_PORT   host (a hosted C library) or baremetal (Cortex-M, Arm semihosting,
#               port/baremetal). Default: baremetal when CMAKE_SYSTEM_NAME is Generic (a
#               cross toolchain file), else host.
#   NNRT_CORE   a core of ../cores.mk (cortex-m3, cortex-m7 ...) whose -mcpu/-mfpu/ABI
#               flags nnrt::nnrt carries to everything linking it. Default: the
#               toolchain's CMAKE_SYSTEM_PROCESSOR when cores.mk knows it, else none
#               (the host; or a toolchain file that sets the flags itself).
#   NNOPT_PYTHON   the Python nnopt is installed in (default: the python3 beside an
#               nnopt program on PATH, else python3 on PATH).
#   NNOPT_COMMAND  the nnopt command nnrt_add_model runs (default: NNOPT_PYTHON -m nnopt).
#
# Functions:
#   nnrt_add_model(<target> <model> [OUTPUT_DIR <dir>] [OPTIONS <nnopt optimize options>...])
#   nnrt_firmware(<target> BOARD <nnopt board>)   bare metal: the board's ld script
#               (python -m nnopt.firmware.ldscript), linked with -T.
#
# The target: nnrt::nnrt, a static library of the kernels, the dynamic allocator and the
# model blob loader (src/swap needs a PSA Crypto provider: not built here), with the
# public include directory; the port's sources (port/<NNRT_PORT>/*.c) are compiled into
# the program that links it (the bare-metal startup must not stay in an archive).

cmake_minimum_required(VERSION 3.16)
include_guard(GLOBAL)

get_filename_component(NNRT_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
if(NOT EXISTS "${NNRT_ROOT}/include/nnrt/model.h")
  set(nnrt_FOUND FALSE)
  set(nnrt_NOT_FOUND_MESSAGE "nnrt sources not found next to ${CMAKE_CURRENT_LIST_FILE}")
  return()
endif()

# ---- settings
if(CMAKE_SYSTEM_NAME STREQUAL "Generic")
  set(_nnrt_default_port baremetal)
else()
  set(_nnrt_default_port host)
endif()
set(NNRT_PORT "${_nnrt_default_port}" CACHE STRING "nnrt port: host or baremetal")
set_property(CACHE NNRT_PORT PROPERTY STRINGS host baremetal)
if(NOT NNRT_PORT MATCHES "^(host|baremetal)$")
  message(FATAL_ERROR "NNRT_PORT=${NNRT_PORT}: use host or baremetal")
endif()

# The core flag table, one line per core, shared with the Makefile fragment.
file(STRINGS "${NNRT_ROOT}/cores.mk" _nnrt_core_lines REGEX "^NNRT_CORE_FLAGS_")
set(_nnrt_cores "")
foreach(_line IN LISTS _nnrt_core_lines)
  if(_line MATCHES "^NNRT_CORE_FLAGS_([A-Za-z0-9_.+-]+) *:= *(.*)$")
    list(APPEND _nnrt_cores "${CMAKE_MATCH_1}")
    set("_nnrt_flags_${CMAKE_MATCH_1}" "${CMAKE_MATCH_2}")
  endif()
endforeach()
set(_nnrt_default_core "")
if(CMAKE_SYSTEM_PROCESSOR IN_LIST _nnrt_cores)
  set(_nnrt_default_core "${CMAKE_SYSTEM_PROCESSOR}")
endif()
set(NNRT_CORE "${_nnrt_default_core}" CACHE STRING "core of cores.mk (empty: no core flags)")
set_property(CACHE NNRT_CORE PROPERTY STRINGS "" ${_nnrt_cores})
set(NNRT_CORE_FLAGS "")
if(NNRT_CORE)
  if(NOT NNRT_CORE IN_LIST _nnrt_cores)
    message(FATAL_ERROR "NNRT_CORE=${NNRT_CORE} is not in ${NNRT_ROOT}/cores.mk "
      "(known: ${_nnrt_cores})")
  endif()
  separate_arguments(NNRT_CORE_FLAGS UNIX_COMMAND "${_nnrt_flags_${NNRT_CORE}}")
endif()

if(NOT NNOPT_PYTHON)
  # the Python nnopt is installed in: the one beside an nnopt program on PATH (a venv)
  find_program(_nnrt_nnopt nnopt)
  get_filename_component(_nnrt_bin "${_nnrt_nnopt}" DIRECTORY)
  if(_nnrt_nnopt AND EXISTS "${_nnrt_bin}/python3")
    set(NNOPT_PYTHON "${_nnrt_bin}/python3" CACHE FILEPATH "the Python with nnopt")
  else()
    set(NNOPT_PYTHON python3 CACHE FILEPATH "the Python with nnopt")
  endif()
endif()
if(NOT NNOPT_COMMAND)
  set(NNOPT_COMMAND "${NNOPT_PYTHON}" -m nnopt CACHE STRING "the nnopt command")
endif()

# ---- the library
if(NOT TARGET nnrt::nnrt)
  file(GLOB _nnrt_sources CONFIGURE_DEPENDS
    "${NNRT_ROOT}/kernels/*/*.c" "${NNRT_ROOT}/src/alloc/*.c" "${NNRT_ROOT}/src/loader/*.c")
  file(GLOB _nnrt_port_sources CONFIGURE_DEPENDS "${NNRT_ROOT}/port/${NNRT_PORT}/*.c")
  add_library(nnrt STATIC ${_nnrt_sources})
  add_library(nnrt::nnrt ALIAS nnrt)
  set_target_properties(nnrt PROPERTIES C_STANDARD 99 C_EXTENSIONS ON)
  target_include_directories(nnrt PUBLIC "${NNRT_ROOT}/include"
    PRIVATE "${NNRT_ROOT}/kernels")
  target_sources(nnrt INTERFACE ${_nnrt_port_sources})
  target_compile_options(nnrt PUBLIC ${NNRT_CORE_FLAGS}
    PRIVATE -ffunction-sections -fdata-sections)
  target_link_options(nnrt PUBLIC ${NNRT_CORE_FLAGS})
  if(NNRT_PORT STREQUAL "host")
    target_compile_definitions(nnrt PUBLIC NNRT_PORT_HOST=1)
  else()
    # 40 instructions per SysTick tick on QEMU's mps2 machines (port/baremetal/README.md)
    target_compile_definitions(nnrt PUBLIC NNRT_PORT_BAREMETAL=1 NNRT_PORT_INSTR_PER_TICK=40)
    target_link_options(nnrt INTERFACE -nostartfiles -Wl,--gc-sections
      -Wl,--no-warn-rwx-segments)
  endif()
  target_link_libraries(nnrt PUBLIC m)
endif()

# nnrt_add_model(<target> <model> [OUTPUT_DIR <dir>] [OPTIONS <option>...])
# Runs `nnopt optimize <model> -o <dir>` at build time (again when the model changes)
# and compiles <dir>/<model>_model.c into <target>, with <dir> on its include path.
function(nnrt_add_model target model)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "OUTPUT_DIR" "OPTIONS")
  get_filename_component(model "${model}" ABSOLUTE)
  get_filename_component(name "${model}" NAME_WE)
  if(NOT arg_OUTPUT_DIR)
    set(arg_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/nnopt/${name}")
  endif()
  set(c_file "${arg_OUTPUT_DIR}/${name}_model.c")
  set(h_file "${arg_OUTPUT_DIR}/${name}_model.h")
  add_custom_command(OUTPUT "${c_file}" "${h_file}"
    COMMAND ${NNOPT_COMMAND} optimize "${model}" -o "${arg_OUTPUT_DIR}" --table none
            ${arg_OPTIONS}
    DEPENDS "${model}"
    COMMENT "nnopt: generating ${name}_model.c"
    VERBATIM)
  target_sources(${target} PRIVATE "${c_file}")
  target_include_directories(${target} PRIVATE "${arg_OUTPUT_DIR}")
  # the generated code includes nnrt/kernels/spec.h, which reaches the private
  # kernel bodies: kernels/ on this file's include path only
  set_source_files_properties("${c_file}" PROPERTIES
    INCLUDE_DIRECTORIES "${NNRT_ROOT}/kernels")
endfunction()

# nnrt_firmware(<target> BOARD <board>): bare-metal firmware for an nnopt board
# (boards/nnopt/<board>.yaml): its ld script, written at configure time.
function(nnrt_firmware target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "BOARD" "")
  if(NOT arg_BOARD)
    message(FATAL_ERROR "nnrt_firmware(${target}): BOARD is required (e.g. mps2_an385)")
  endif()
  if(NOT NNRT_PORT STREQUAL "baremetal")
    message(FATAL_ERROR "nnrt_firmware(${target}): needs NNRT_PORT=baremetal")
  endif()
  set(script "${CMAKE_CURRENT_BINARY_DIR}/${target}_${arg_BOARD}.ld")
  execute_process(COMMAND ${NNOPT_PYTHON} -m nnopt.firmware.ldscript ${arg_BOARD}
    OUTPUT_FILE "${script}" ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nnrt_firmware: no ld script for board ${arg_BOARD}: ${err}")
  endif()
  target_link_options(${target} PRIVATE "-T${script}")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${script}")
endfunction()
