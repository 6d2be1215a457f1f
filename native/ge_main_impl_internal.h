/* Seams between the two translation units of atc_static (not installed, not public). */
#ifndef GE_MAIN_IMPL_INTERNAL_H
#define GE_MAIN_IMPL_INTERNAL_H

/* Calls ge.atc.main_impl(argv_list); the caller holds the GIL. Steals no reference.
 * Returns main_impl's int, or -1 when it could not be called or did not return an int. */
int ge_call_main_impl(void *argv_list);

/* Starts an interpreter for this process, runs the flow with argv, finalizes it. */
int ge_embedded_main_impl(int argc, const char *const *argv);

#endif
