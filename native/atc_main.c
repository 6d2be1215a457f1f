/* atc.bin: hands argc/argv to the ATC main flow; its int becomes the exit status (-1 -> 255). */
#include "ge_main_impl.h"

int main(int argc, char **argv)
{
    return ge_main_impl(argc, (const char *const *)argv);
}
