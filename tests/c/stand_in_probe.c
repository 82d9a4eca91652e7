/* A stand-in for an extra library of the runtime build (tests/test_cmsis_nn_glue.py:
 * RuntimeExtras carries it into the link). */
int nnrt_stand_in_probe(int x);
int nnrt_stand_in_probe(int x) { return x + 1; }
