/* The one native entry into the ATC main flow (see ARCHITECTURE.md, "One compile, end to end").
 *
 * ge_main_impl runs ge.atc.main_impl(argv) and returns its int: in the interpreter that is
 * already running (pyatc), or in an interpreter it starts and finalizes itself (atc.bin).
 * It never lets a Python exception escape; any failure to run the flow returns -1. */
#ifndef GE_MAIN_IMPL_H
#define GE_MAIN_IMPL_H

#ifdef __cplusplus
extern "C" {
#endif

int ge_main_impl(int argc, const char *const *argv);

#ifdef __cplusplus
}
#endif

#endif
