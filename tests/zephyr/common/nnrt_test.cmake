# Shared CMake for the compiled-model Twister suites (tests/zephyr/pingpong, model).
#
#   nnrt_test_model(<target> DEFAULT <model>)
#
# A suite's application: its src/main.c and the model models/<NNRT_TEST_MODEL>.tflite
# (a cache variable, <model> unless a scenario sets it in testcase.yaml) compiled by
# nnopt_add_model() (zephyr/cmake/nnopt.cmake), with its test vectors
# (nnrt_test_vectors() below) and the generated names main.c uses
# (nnopt_model_definitions()).
#
#   nnrt_test_vectors(<target> MODEL <file.tflite> [BOARD <nnopt board>] [SEED <n>])
#
# Writes nnrt_test_vectors.h (inputs and expected outputs, gen_vectors.py) at build
# time and adds it to <target> with tests/zephyr/common/include on the include path.
# Call after nnopt_add_model() (zephyr/cmake/nnopt.cmake), which must plan the model
# for the same board.

function(nnrt_test_vectors target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "MODEL;BOARD;SEED" "")
  if(NOT ARG_SEED)
    set(ARG_SEED 7)
  endif()
  set(board ${ARG_BOARD})
  if(NOT board)
    nnopt_board_for_zephyr_board(board)
  endif()
  set(board_args "")
  if(board)
    set(board_args --board ${board})
  endif()
  get_filename_component(root "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../../.." ABSOLUTE)
  set(script ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/gen_vectors.py)
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/nnrt_test)
  set(header ${out_dir}/nnrt_test_vectors.h)
  file(MAKE_DIRECTORY ${out_dir})
  file(GLOB_RECURSE compiler_sources CONFIGURE_DEPENDS ${root}/scripts/nnopt/*.py)
  add_custom_command(
    OUTPUT ${header}
    COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${root}/scripts NNOPT_ROOT=${root}
            ${PYTHON_EXECUTABLE} ${script} ${ARG_MODEL} ${header}
            ${board_args} --seed ${ARG_SEED}
    DEPENDS ${ARG_MODEL} ${script} ${compiler_sources}
    COMMENT "nnrt test vectors for ${ARG_MODEL} (host run of the compiled model)"
    VERBATIM)
  target_sources(${target} PRIVATE ${header})
  target_include_directories(${target} PRIVATE
    ${out_dir} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/include)
endfunction()

function(nnrt_test_model target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "DEFAULT" "")
  set(NNRT_TEST_MODEL ${ARG_DEFAULT} CACHE STRING "Model from models/ to test")
  set(model ${ZEPHYR_NNOPT_MODULE_DIR}/models/${NNRT_TEST_MODEL}.tflite)
  target_sources(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/main.c)
  nnopt_add_model(${target} MODEL ${model})
  nnrt_test_vectors(${target} MODEL ${model})
  nnopt_model_definitions(${target})
endfunction()
