# A CMake toolchain file for bare-metal Cortex-M with the GNU Arm toolchain
# (arm-none-eabi-gcc on PATH). The core: -DNNRT_CORE=... or CMAKE_SYSTEM_PROCESSOR
# (default cortex-m3); nnrtConfig.cmake turns it into -mcpu/-mfpu/ABI flags.
set(CMAKE_SYSTEM_NAME Generic)
if(NOT CMAKE_SYSTEM_PROCESSOR)
  set(CMAKE_SYSTEM_PROCESSOR cortex-m3)
endif()
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
# no startup files exist before the port's: compiler checks build a library, not a program
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
