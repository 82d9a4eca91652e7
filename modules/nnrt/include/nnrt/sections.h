/**
 * @file sections.h
 * @brief Where generated code puts its big objects: weights, arena, DTCM data.
 *
 * Use after the declarator:
 * @code
 * static const int8_t conv0_w[864] NNRT_WEIGHTS = { ... };
 * static uint8_t arena[55296] NNRT_ARENA;
 * static int32_t acc[64] NNRT_DTCM;
 * @endcode
 *
 * - Bare metal (`NNRT_PORT_BAREMETAL` defined by the firmware build): the objects go to
 *   named sections that nnopt's generated linker script places: `.nnrt_weights` in flash,
 *   `.nnrt_arena` (NOLOAD, not initialised at reset) in the board's arena region,
 *   `.dtcm` (NOLOAD, zeroed at reset) in the `dtcm` region when the board has one
 *   (`NNRT_HAS_DTCM`); without DTCM, NNRT_DTCM data stays in ordinary `.bss`.
 * - Host and everything else: alignment only.
 *
 * Objects in NNRT_ARENA and NNRT_DTCM must have no initialiser (their sections are
 * NOLOAD: an initialiser would be silently dropped). Every macro can be predefined by
 * a port (e.g. a Zephyr build mapping them to its own sections).
 */
#ifndef NNRT_SECTIONS_H_
#define NNRT_SECTIONS_H_

#include "nnrt/defs.h"

#if !defined(__GNUC__)
#error "nnrt/sections.h needs GCC-style attributes (gcc or clang)"
#endif

/** Alignment of weights, arena and DTCM objects (bytes). */
#define NNRT_SECTION_ALIGN NNRT_ARENA_ALIGN

#if defined(NNRT_PORT_BAREMETAL)

#ifndef NNRT_WEIGHTS
/** Constant data (weights, biases, quantisation tables) in flash. */
#define NNRT_WEIGHTS __attribute__((section(".nnrt_weights"), aligned(NNRT_SECTION_ALIGN)))
#endif
#ifndef NNRT_ARENA
/** The activation arena: uninitialised RAM in the board's arena region. */
#define NNRT_ARENA __attribute__((section(".nnrt_arena"), aligned(NNRT_SECTION_ALIGN)))
#endif
#ifndef NNRT_DTCM
#if defined(NNRT_HAS_DTCM)
/** Zero-initialised data in the tightly coupled data RAM. */
#define NNRT_DTCM __attribute__((section(".dtcm"), aligned(NNRT_SECTION_ALIGN)))
#else
#define NNRT_DTCM __attribute__((aligned(NNRT_SECTION_ALIGN)))
#endif
#endif

#else /* host and other ports: alignment only */

#ifndef NNRT_WEIGHTS
#define NNRT_WEIGHTS __attribute__((aligned(NNRT_SECTION_ALIGN)))
#endif
#ifndef NNRT_ARENA
#define NNRT_ARENA __attribute__((aligned(NNRT_SECTION_ALIGN)))
#endif
#ifndef NNRT_DTCM
#define NNRT_DTCM __attribute__((aligned(NNRT_SECTION_ALIGN)))
#endif

#endif

#endif /* NNRT_SECTIONS_H_ */
