#include <stdio.h>
#include <string.h>
#include "nnrt/kernels/shape.h"

int main(void)
{
    int fails = 0;
    uint8_t buf[64];
    for (int i = 0; i < 64; ++i) {
        buf[i] = (uint8_t)i;
    }
    /* RESHAPE copy onto itself and onto an overlapping region (memmove semantics) */
    if (nnrt_copy_x8(buf, buf, 64) != NNRT_OK || buf[63] != 63) {
        fails++;
    }
    if (nnrt_copy_x8(buf, buf + 8, 40) != NNRT_OK || buf[8] != 0 || buf[47] != 39) {
        fails++;
    }
    if (nnrt_copy_x8(NULL, buf, 1) != NNRT_ERR_ARG) {
        fails++;
    }
    nnrt_pad_params_t pad = {1, 3, {2}, {1}, {1}};  /* elem_size 3: invalid */
    if (nnrt_pad_x8(&pad, buf, buf, buf + 32) != NNRT_ERR_ARG) {
        fails++;
    }
    nnrt_strided_copy_params_t sc = {1, 1, -1, {4}, {1}};  /* negative offset */
    if (nnrt_strided_copy_x8(&sc, buf, buf + 32) != NNRT_ERR_ARG) {
        fails++;
    }
    const int32_t blocks[2] = {4, -1};
    const void *ins[2] = {buf, buf};
    nnrt_concat_params_t cp = {1, 2, blocks};
    if (nnrt_concat_x8(&cp, ins, buf + 32) != NNRT_ERR_ARG) {
        fails++;
    }
    printf(fails ? "FAIL %d\n" : "OK\n", fails);
    return fails != 0;
}
