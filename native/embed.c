/* atc.bin's own interpreter: configure, start, run the flow once, finalize.
 *
 * The interpreter is a normal one (PyConfig "python" flavour): it honours PYTHONPATH and the
 * other PYTHON* variables, installs Python's SIGINT handler (Ctrl-C becomes KeyboardInterrupt
 * inside the ATC flow, which cleans up and returns -1) and decodes argv like python itself
 * (locale, surrogateescape). Which Python environment it uses:
 *   - atc.bin inside a virtual environment (pyvenv.cfg beside or above it): that venv;
 *   - otherwise: the environment of the interpreter it was built with (ATC_PYTHON_EXECUTABLE).
 * This file uses the full (non-limited) API; it only runs in atc.bin, where libpython is linked. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ge_main_impl_internal.h"

#ifndef ATC_PYTHON_EXECUTABLE
#define ATC_PYTHON_EXECUTABLE ""
#endif

static int file_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* Fills `out` with the program name the interpreter should derive its prefix from. */
static void choose_program_name(char *out, size_t size)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    out[0] = '\0';
    if (n > 0) {
        self[n] = '\0';
        char probe[PATH_MAX + 32];
        char *slash = strrchr(self, '/');
        if (slash != NULL) {
            size_t dir_len = (size_t)(slash - self);
            snprintf(probe, sizeof(probe), "%.*s/pyvenv.cfg", (int)dir_len, self);
            int in_venv = file_exists(probe);
            snprintf(probe, sizeof(probe), "%.*s/../pyvenv.cfg", (int)dir_len, self);
            in_venv = in_venv || file_exists(probe);
            if (in_venv) {
                snprintf(out, size, "%s", self);
                return;
            }
        }
    }
    if (ATC_PYTHON_EXECUTABLE[0] != '\0' && file_exists(ATC_PYTHON_EXECUTABLE)) {
        snprintf(out, size, "%s", ATC_PYTHON_EXECUTABLE);
    }
}

static int start_interpreter(int argc, const char *const *argv)
{
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.parse_argv = 0; /* argv belongs to ATC, not to python */
    config.install_signal_handlers = 1;
    PyStatus status = PyConfig_SetBytesArgv(&config, argc, (char *const *)argv);
    char program_name[PATH_MAX];
    choose_program_name(program_name, sizeof(program_name));
    if (!PyStatus_Exception(status) && program_name[0] != '\0') {
        status = PyConfig_SetBytesString(&config, &config.program_name, program_name);
    }
    if (!PyStatus_Exception(status)) {
        status = Py_InitializeFromConfig(&config);
    }
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) {
        fprintf(stderr, "atc: cannot start the Python interpreter: %s\n",
                status.err_msg != NULL ? status.err_msg : "unknown error");
        return -1;
    }
    return 0;
}

int ge_embedded_main_impl(int argc, const char *const *argv)
{
    if (start_interpreter(argc, argv) != 0) {
        return -1;
    }
    int rc = -1;
    PyObject *sys_argv = PySys_GetObject("argv"); /* borrowed; decoded by the interpreter */
    PyObject *list = sys_argv != NULL ? PySequence_List(sys_argv) : NULL;
    if (list != NULL) {
        rc = ge_call_main_impl(list);
        Py_DECREF(list);
    } else {
        PyErr_Clear();
    }
    Py_FinalizeEx();
    return rc;
}
