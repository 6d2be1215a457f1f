/* Attach to the running interpreter (pyatc) or hand over to the embedding code (atc.bin), then
 * call ge.atc.main_impl. Built against the stable ABI only, so one libpyatc_wrapper.so can be
 * loaded into any CPython 3.9+ that provides the Python symbols. */
#define Py_LIMITED_API 0x03090000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <stdio.h>

#include "ge_main_impl.h"
#include "ge_main_impl_internal.h"

/* An install problem (ge.atc cannot be imported) is not an ATC error and the ATC flow is not
 * running to report it, so it gets one line on stderr; everything else stays silent. */
static void report_import_failure(void)
{
    PyObject *type = NULL, *value = NULL, *traceback = NULL;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *text = value != NULL ? PyObject_Str(value) : NULL;
    PyObject *bytes = text != NULL
        ? PyUnicode_AsEncodedString(text, "utf-8", "backslashreplace") : NULL;
    const char *message = bytes != NULL ? PyBytes_AsString(bytes) : NULL;
    fprintf(stderr, "atc: cannot import ge.atc (%s); source <install>/set_env.sh\n",
            message != NULL ? message : "unknown error");
    Py_XDECREF(bytes);
    Py_XDECREF(text);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    PyErr_Clear();
}

int ge_call_main_impl(void *argv_list)
{
    PyObject *module = PyImport_ImportModule("ge.atc");
    if (module == NULL) {
        /* Ctrl-C before the flow could start is no install problem: fail quietly */
        if (PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) {
            PyErr_Clear();
        } else {
            report_import_failure();
        }
        return -1;
    }
    PyObject *result = PyObject_CallMethod(module, "main_impl", "(O)", (PyObject *)argv_list);
    Py_DECREF(module);
    if (result == NULL) {
        PyErr_Clear();
        return -1;
    }
    int overflow = 0;
    long value = PyLong_Check(result) ? PyLong_AsLongAndOverflow(result, &overflow) : -1;
    Py_DECREF(result);
    if (PyErr_Occurred() != NULL || overflow != 0 || value < INT_MIN || value > INT_MAX) {
        PyErr_Clear();
        return -1;
    }
    return (int)value;
}

/* argv bytes -> list of str, decoded as os.fsdecode would (ge.pyatc encodes with os.fsencode),
 * so arguments that are not valid UTF-8 survive the round trip. */
static PyObject *argv_to_list(int argc, const char *const *argv)
{
    PyObject *list = PyList_New(argc);
    if (list == NULL) {
        return NULL;
    }
    for (int i = 0; i < argc; i++) {
        PyObject *item = PyUnicode_DecodeFSDefault(argv[i]);
        if (item == NULL || PyList_SetItem(list, i, item) != 0) {
            Py_DECREF(list);
            return NULL;
        }
    }
    return list;
}

int ge_main_impl(int argc, const char *const *argv)
{
    if (argc <= 0 || argv == NULL) {
        return -1;
    }
    if (!Py_IsInitialized()) {
        return ge_embedded_main_impl(argc, argv);
    }
    PyGILState_STATE gil = PyGILState_Ensure();
    int rc = -1;
    PyObject *list = argv_to_list(argc, argv);
    if (list != NULL) {
        rc = ge_call_main_impl(list);
        Py_DECREF(list);
    } else {
        PyErr_Clear();
    }
    PyGILState_Release(gil);
    return rc;
}
