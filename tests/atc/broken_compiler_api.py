"""A stand-in compiler API whose compile function has a bug (internal-fault test)."""


def compile_model_file(model_path, framework, options, weight_path=None, graph_name=None):
    return 1 // 0


def save_om(path, compiled, atc_cmdline):
    raise AssertionError("not reached")
