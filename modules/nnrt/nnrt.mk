# nnrt for plain Makefiles: include this fragment, then add $(NNRT_SRCS) and
# $(NNRT_PORT_SRCS) to your sources, $(NNRT_CFLAGS) to your compile flags and
# $(NNRT_LDFLAGS) to your link flags (see docs/plain-builds.md and examples/plain_make).
#
# Settings (set them before the include, or on make's command line):
#   NNRT_PORT  host (default: hosted C library) or baremetal (Cortex-M under QEMU,
#              Arm semihosting: port/baremetal; link with a linker script, see
#              NNRT_LINKER_SCRIPT below)
#   NNRT_CORE  a core of cores.mk (cortex-m3, cortex-m7 ...): its -mcpu/-mfpu/ABI flags;
#              empty (default): no core flags (the host, or flags your toolchain sets)
#   NNOPT      the nnopt command that generates models (default: nnopt)
#   NNOPT_PYTHON  the Python with nnopt installed (default: python3), for ld scripts
#
# Generated models: $(call nnrt_model,path/to/model.tflite,OUTDIR) names the generated
# OUTDIR/<model>_model.c, and $(eval $(call nnrt_model_rule,path/to/model.tflite,OUTDIR))
# adds the rule that runs `nnopt optimize` to write it (and its header) when the model
# changes. The generated .c needs the private include directory kernels/ (in
# NNRT_CFLAGS).

NNRT_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
include $(NNRT_DIR)/cores.mk

NNRT_PORT ?= host
NNRT_CORE ?=
NNOPT ?= nnopt
NNOPT_PYTHON ?= python3

ifeq ($(filter host baremetal,$(NNRT_PORT)),)
$(error NNRT_PORT=$(NNRT_PORT): use host or baremetal)
endif
ifneq ($(NNRT_CORE),)
ifeq ($(NNRT_CORE_FLAGS_$(NNRT_CORE)),)
$(error NNRT_CORE=$(NNRT_CORE) is not in $(NNRT_DIR)/cores.mk)
endif
endif

# The kernels (one public function per file: with -ffunction-sections and
# --gc-sections only what a model calls stays), the dynamic allocator and the model
# blob loader. src/swap (weight streaming) needs a PSA Crypto provider: not here.
NNRT_SRCS := $(sort $(wildcard $(NNRT_DIR)/kernels/*/*.c) \
                    $(wildcard $(NNRT_DIR)/src/alloc/*.c) $(wildcard $(NNRT_DIR)/src/loader/*.c))
NNRT_PORT_SRCS := $(sort $(wildcard $(NNRT_DIR)/port/$(NNRT_PORT)/*.c))
NNRT_INCLUDES := -I$(NNRT_DIR)/include -I$(NNRT_DIR)/kernels
NNRT_CORE_FLAGS := $(NNRT_CORE_FLAGS_$(NNRT_CORE))

ifeq ($(NNRT_PORT),host)
NNRT_DEFINES := -DNNRT_PORT_HOST=1
NNRT_PORT_LDFLAGS := -lm
else
# 40 instructions per SysTick tick on QEMU's mps2 machines (port/baremetal/README.md)
NNRT_DEFINES := -DNNRT_PORT_BAREMETAL=1 -DNNRT_PORT_INSTR_PER_TICK=40
NNRT_PORT_LDFLAGS := -nostartfiles -Wl,--gc-sections -Wl,--no-warn-rwx-segments -lm
endif

NNRT_CFLAGS := $(NNRT_CORE_FLAGS) $(NNRT_DEFINES) $(NNRT_INCLUDES) -ffunction-sections \
               -fdata-sections
NNRT_LDFLAGS := $(NNRT_CORE_FLAGS) $(NNRT_PORT_LDFLAGS)

# $(call nnrt_model,MODEL,OUTDIR): the generated C file of MODEL (a .tflite or .onnx)
nnrt_model = $(2)/$(basename $(notdir $(1)))_model.c

# $(eval $(call nnrt_model_rule,MODEL,OUTDIR[,NNOPT OPTIONS])): the rule writing it
define nnrt_model_rule
$(call nnrt_model,$(1),$(2)) $(patsubst %.c,%.h,$(call nnrt_model,$(1),$(2))) &: $(1)
	$$(NNOPT) optimize $(1) -o $(2) --table none $(3)
endef

# $(eval $(call nnrt_linker_script_rule,BOARD,PATH)): bare metal: the GNU ld script of an
# nnopt board (boards/nnopt/<BOARD>.yaml: mps2_an385, mps2_an500 ...) at PATH; link
# with -T PATH.
define nnrt_linker_script_rule
$(2):
	@mkdir -p $$(dir $$@)
	$$(NNOPT_PYTHON) -m nnopt.firmware.ldscript $(1) > $$@.tmp && mv $$@.tmp $$@
endef
