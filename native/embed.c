/* atc.bin's own interpreter: configure, start, run the flow once, finalize.
 *
 * The interpreter is a normal one (PyConfig "python" flavour): it honours PYTHONPATH and the
 * other PYTHON* variables, installs Python's SIGINT handler (Ctrl-C becomes KeyboardInterrupt)
 * and decodes argv like python itself (locale, surrogateescape). While the ATC flow runs,
 * ge.atc.interrupt turns SIGINT and SIGTERM alike into a clean EP0004 failure (returns -1);
 * bin/atc execs atc.bin, so both reach this process. Which Python environment it uses:
 *   - atc.bin inside a virtual environment (pyvenv.cfg beside or above it): that venv, as if
 *     started by the venv's python3;
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

/* out = src; returns 0, or -1 (out = "") if it does not fit. */
static int copy_path(char *out, size_t size, const char *src)
{
    int n = snprintf(out, size, "%s", src);
    if (n < 0 || (size_t)n >= size) {
        out[0] = '\0';
        return -1;
    }
    return 0;
}

/* out = "<first dir_len bytes of dir>/<leaf>"; returns 0, or -1 if it does not fit. */
static int join_path(char *out, size_t size, const char *dir, size_t dir_len, const char *leaf)
{
    int n = snprintf(out, size, "%.*s/%s", (int)dir_len, dir, leaf);
    return (n < 0 || (size_t)n >= size) ? -1 : 0;
}

/* Fills `out` with the program name the interpreter should derive its prefix from, or "". */
static void choose_program_name(char *out, size_t size)
{
    char self[PATH_MAX];
    char probe[PATH_MAX];
    out[0] = '\0';
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    char *slash = n > 0 ? memchr(self, '/', (size_t)n) : NULL;
    if (slash != NULL) {
        self[n] = '\0';
        slash = strrchr(self, '/');
        size_t dir_len = (size_t)(slash - self);
        int in_venv = (join_path(probe, sizeof(probe), self, dir_len, "pyvenv.cfg") == 0
                       && file_exists(probe))
                   || (join_path(probe, sizeof(probe), self, dir_len, "../pyvenv.cfg") == 0
                       && file_exists(probe));
        if (in_venv) {
            /* The venv's python beside atc.bin, so sys.executable is an interpreter
             * (subprocesses started with it must not re-run atc.bin). */
            int has_python = join_path(probe, sizeof(probe), self, dir_len, "python3") == 0
                             && file_exists(probe);
            copy_path(out, size, has_python ? probe : self);
            return;
        }
    }
    const char *built_with = ATC_PYTHON_EXECUTABLE;
    if (built_with[0] != '\0' && file_exists(built_with)) {
        copy_path(out, size, built_with);
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
    /* A closed descriptor 0, 1 or 2 is put on /dev/null before the flow opens any file
     * (ge/stdio.py; pyatc does the same in ge.pyatc before it calls the flow). */
    PyObject *stdio = PyImport_ImportModule("ge.stdio");
    if (stdio != NULL) {
        PyObject *done = PyObject_CallMethod(stdio, "guard_std_fds", NULL);
        Py_XDECREF(done);
        Py_DECREF(stdio);
    }
    PyErr_Clear();
    PyObject *sys_argv = PySys_GetObject("argv"); /* borrowed; decoded by the interpreter */
    PyObject *list = sys_argv != NULL ? PySequence_List(sys_argv) : NULL;
    if (list != NULL) {
        rc = ge_call_main_impl(list);
        Py_DECREF(list);
    } else {
        PyErr_Clear();
    }
    /* A pass may leave a non-daemon thread running; Py_FinalizeEx would wait for it forever.
     * ge.atc ends the process with rc in that case (after flushing), else returns. */
    PyObject *atc = PyImport_ImportModule("ge.atc");
    if (atc != NULL) {
        PyObject *done = PyObject_CallMethod(atc, "leave_if_threads_linger", "(i)", rc);
        Py_XDECREF(done);
        Py_DECREF(atc);
    }
    PyErr_Clear();
    Py_FinalizeEx();
    return rc;
}
