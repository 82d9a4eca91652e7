/* The C tests' pseudo-random numbers: xorshift32 from TEST_RNG_SEED (define it before
 * including this header to change the sequence). */
#ifndef TEST_RNG_H_
#define TEST_RNG_H_

#include <stdint.h>

#ifndef TEST_RNG_SEED
#define TEST_RNG_SEED 12345u
#endif

static uint32_t rng = TEST_RNG_SEED;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

#endif /* TEST_RNG_H_ */
