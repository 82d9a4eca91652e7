/*
 * main() of bench_firmware.py's TFLM firmware: the C entry the bare-metal port calls
 * (modules/nnrt/port/baremetal/startup.c), handing over to the C++ harness generated
 * from tflm_harness.cc.in.
 */
int nnopt_tflm_main(int argc, char **argv);

int main(int argc, char **argv)
{
    return nnopt_tflm_main(argc, argv);
}
