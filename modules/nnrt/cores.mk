# Code-generation flags per core: the one table, read by the Makefile fragment
# (nnrt.mk includes this file) and by the CMake package (cmake/nnrtConfig.cmake parses
# these lines). A core is a GCC -mcpu name; the host has no entry (no flags).
# Soft-float cores use -mfloat-abi=soft; cores with an FPU the hard-float ABI on the
# FPU GCC names for them (Arm's GCC documentation, ARM Options: -mfpu).
NNRT_CORE_FLAGS_cortex-m0 := -mcpu=cortex-m0 -mthumb -mfloat-abi=soft
NNRT_CORE_FLAGS_cortex-m0plus := -mcpu=cortex-m0plus -mthumb -mfloat-abi=soft
NNRT_CORE_FLAGS_cortex-m3 := -mcpu=cortex-m3 -mthumb -mfloat-abi=soft
NNRT_CORE_FLAGS_cortex-m4 := -mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard
NNRT_CORE_FLAGS_cortex-m7 := -mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard
NNRT_CORE_FLAGS_cortex-m33 := -mcpu=cortex-m33 -mthumb -mfpu=fpv5-sp-d16 -mfloat-abi=hard
NNRT_CORE_FLAGS_cortex-m55 := -mcpu=cortex-m55 -mthumb -mfloat-abi=hard
