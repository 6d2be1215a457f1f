/* libpyatc_wrapper.so: the C entry ge.pyatc calls through cffi. It checks argv, copies it (the
 * flow may keep pointers while the caller's buffers are released) and runs ge_main_impl in the
 * interpreter that loaded this library. This library does not link libpython. */
#include <stdlib.h>
#include <string.h>

#include "ge_main_impl.h"

#define PYATC_EXPORT __attribute__((visibility("default")))

PYATC_EXPORT int GeApiWrapper_Atc_Main(int argc, const char *const *argv);

static void free_argv(char **copy, int count)
{
    for (int i = 0; i < count; i++) {
        free(copy[i]);
    }
    free(copy);
}

int GeApiWrapper_Atc_Main(int argc, const char *const *argv)
{
    if (argc <= 0 || argv == NULL) {
        return 1;
    }
    for (int i = 0; i < argc; i++) {
        if (argv[i] == NULL) {
            return 1;
        }
    }
    char **copy = calloc((size_t)argc + 1, sizeof(*copy));
    if (copy == NULL) {
        return -1;
    }
    for (int i = 0; i < argc; i++) {
        copy[i] = strdup(argv[i]);
        if (copy[i] == NULL) {
            free_argv(copy, i);
            return -1;
        }
    }
    int rc = ge_main_impl(argc, (const char *const *)copy);
    free_argv(copy, argc);
    return rc;
}
