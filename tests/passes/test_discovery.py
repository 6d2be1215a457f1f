"""Discovery rules of seeds/000 and spec §2, each in a fresh interpreter (subprocess)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from pass_samples import ROOT

PASS_TEMPLATE = textwrap.dedent('''
    from ge.passes import FusionBasePass, PassStage, register_fusion_pass
    @register_fusion_pass(name="{name}", stage=PassStage.BEFORE_INFER_SHAPE)
    class P(FusionBasePass):
        def run(self, graph, context):
            return True
''')


def write_pass(path, name, extra=""):
    path.write_text(PASS_TEMPLATE.format(name=name) + extra)
    return path


def run(code: str, env_value=None, cwd=None, extra_env=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("ASCEND_GE_PY_PASS_PATH", None)
    if env_value is not None:
        env["ASCEND_GE_PY_PASS_PATH"] = env_value
    env.update(extra_env or {})
    prog = "import json, os, sys\n" + textwrap.dedent(code)
    proc = subprocess.run([sys.executable, "-c", prog], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=60)
    return proc


LOAD = '''
from ge.passes.bootstrap import load_pass_plugins
from ge.passes import get_registered_passes
mods = load_pass_plugins()
print(json.dumps({"modules": [m.__name__ for m in mods],
                  "passes": [d.pass_name for d in get_registered_passes()]}))
'''


def load(env_value, **kw):
    proc = run(LOAD, env_value, **kw)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_single_file_and_module_name(tmp_path):
    f = write_pass(tmp_path / "my_pass.py", "A")
    out = load(str(f))
    assert out["passes"] == ["A"]
    assert out["modules"][0].startswith("_ge_py_pass_my_pass_")


def test_underscore_file_named_directly_is_loaded(tmp_path):
    f = write_pass(tmp_path / "_private.py", "A")
    assert load(str(f))["passes"] == ["A"]


def test_directory_scan_sorted_skips_underscore_and_non_py(tmp_path):
    write_pass(tmp_path / "b_pass.py", "B")
    write_pass(tmp_path / "A_pass.py", "A")
    write_pass(tmp_path / "_skipped.py", "S")
    write_pass(tmp_path / ".dot.py", "D")
    (tmp_path / "notes.txt").write_text("not python")
    (tmp_path / "plain_dir").mkdir()
    write_pass(tmp_path / "plain_dir" / "inner.py", "I")
    out = load(str(tmp_path))
    assert out["passes"] == ["D", "A", "B"]


def test_package_imported_by_plain_name_and_helper_on_path_only_during_scan(tmp_path):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    write_pass(pkg / "__init__.py", "PKG")
    (tmp_path / "_helpers.py").write_text("VALUE = 'helper'\n")
    write_pass(tmp_path / "uses_helper.py", "H",
               "import _helpers\nassert _helpers.VALUE == 'helper'\n")
    code = LOAD + '''
print(json.dumps({"pkg": "mypkg" in sys.modules,
                  "on_path": any(p.rstrip("/") == %r for p in sys.path)}))
''' % str(tmp_path)
    proc = run(code, str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.strip().splitlines()[-2:]
    assert json.loads(first)["passes"] == ["PKG", "H"]
    assert json.loads(second) == {"pkg": True, "on_path": False}


def test_single_file_dir_not_added_to_sys_path(tmp_path):
    (tmp_path / "_helpers.py").write_text("VALUE = 1\n")
    f = write_pass(tmp_path / "p.py", "A", "import _helpers\n")
    proc = run(LOAD, str(f))
    assert proc.returncode != 0 and "ModuleNotFoundError" in proc.stderr


def test_missing_path_and_bad_suffix_texts(tmp_path):
    proc = run(LOAD, str(tmp_path / "nope"))
    assert "FileNotFoundError: python pass path does not exist:" in proc.stderr
    bad = tmp_path / "pass.txt"
    bad.write_text("x = 1\n")
    proc = run(LOAD, str(bad))
    assert "ValueError: python pass file must end with .py:" in proc.stderr


def test_separators_whitespace_empties_and_dedup(tmp_path):
    f = write_pass(tmp_path / "p.py", "A")
    value = f" {f} {os.pathsep}{os.pathsep}{tmp_path}{os.pathsep}{f}{os.pathsep}"
    out = load(value)
    assert out["passes"] == ["A"] and len(out["modules"]) == 1


def test_symlink_to_same_file_loads_once(tmp_path):
    f = write_pass(tmp_path / "p.py", "A")
    link = tmp_path / "link.py"
    link.symlink_to(f)
    out = load(f"{f}{os.pathsep}{link}")
    assert out["passes"] == ["A"]


def test_relative_entry_resolves_against_cwd(tmp_path):
    write_pass(tmp_path / "p.py", "A")
    assert load("p.py", cwd=str(tmp_path))["passes"] == ["A"]


@pytest.mark.parametrize("value", [None, "", "  ", os.pathsep])
def test_unset_or_empty_means_no_python_passes(value):
    assert load(value) == {"modules": [], "passes": []}


def test_failing_module_removed_from_sys_modules_and_error_propagates(tmp_path):
    f = tmp_path / "broken.py"
    f.write_text("raise RuntimeError('boom')\n")
    code = '''
from ge.passes.bootstrap import load_pass_plugins
try:
    load_pass_plugins()
except RuntimeError as e:
    print(json.dumps([str(e), [m for m in sys.modules if m.startswith("_ge_py_pass_")]]))
'''
    proc = run(code, str(f))
    assert json.loads(proc.stdout.strip()) == ["boom", []]


def test_main_block_not_run_and_module_visible_while_running(tmp_path):
    f = write_pass(tmp_path / "p.py", "A", textwrap.dedent('''
        import sys
        assert sys.modules[__name__].__name__ == __name__
        if __name__ == "__main__":
            raise SystemExit("main block ran")
    '''))
    assert load(str(f))["passes"] == ["A"]


ENSURE = '''
from ge.passes.bootstrap import ensure_plugins_loaded
first = [d.pass_name for d in ensure_plugins_loaded()]
os.environ["ASCEND_GE_PY_PASS_PATH"] = sys.argv[1] if len(sys.argv) > 1 else ""
second = [d.pass_name for d in ensure_plugins_loaded()]
print(json.dumps([first, second]))
'''


def test_ensure_loaded_reads_variable_once(tmp_path):
    a = write_pass(tmp_path / "a.py", "A")
    b = write_pass(tmp_path / "b.py", "B")
    code = ENSURE.replace('sys.argv[1] if len(sys.argv) > 1 else ""', repr(str(b)))
    proc = run(code, str(a))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip()) == [["A"], ["A"]]


def test_ensure_loaded_failure_is_ge_error_naming_the_file(tmp_path):
    f = tmp_path / "bad_pass.py"
    f.write_text("import does_not_exist_anywhere\n")
    code = '''
from ge.errors import GeError
from ge.passes.bootstrap import ensure_plugins_loaded
try:
    ensure_plugins_loaded()
except GeError as e:
    print(json.dumps([e.code, e.params["passlibname"], e.message]))
'''
    proc = run(code, str(f))
    code_, where, message = json.loads(proc.stdout.strip())
    assert code_ == "E13029" and where == str(f.resolve())
    assert "ModuleNotFoundError" in message and "bad_pass.py" in message


def test_ensure_loaded_missing_path_is_ge_error(tmp_path):
    code = '''
from ge.errors import GeError
from ge.passes.bootstrap import ensure_plugins_loaded
try:
    ensure_plugins_loaded()
except GeError as e:
    print(json.dumps([e.code, e.message]))
'''
    proc = run(code, str(tmp_path / "missing"))
    code_, message = json.loads(proc.stdout.strip())
    assert code_ == "E13029" and "python pass path does not exist" in message
    assert str(tmp_path / "missing") in message


def test_duplicate_pass_name_fails_load(tmp_path):
    write_pass(tmp_path / "a.py", "SAME")
    write_pass(tmp_path / "b.py", "SAME")
    proc = run(LOAD, str(tmp_path))
    assert "ValueError: pass name already exists: SAME" in proc.stderr


def _fake_dist(tmp_path, value):
    site = tmp_path / "site"
    dist = site / "fake_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[ge.passes.plugins]\nfake = {value}\n")
    return site


def test_entry_points_loaded_after_variable_and_without_it(tmp_path):
    site = _fake_dist(tmp_path, "fake_ep_pass")
    write_pass(site / "fake_ep_pass.py", "EP")
    f = write_pass(tmp_path / "env_pass.py", "ENV")
    code = '''
from ge.passes.bootstrap import ensure_plugins_loaded
print(json.dumps([d.pass_name for d in ensure_plugins_loaded()]))
'''
    extra = {"PYTHONPATH": f"{ROOT}{os.pathsep}{site}"}
    proc = run(code, str(f), extra_env=extra)
    assert json.loads(proc.stdout.strip()) == ["ENV", "EP"], proc.stderr
    proc = run(code, None, extra_env=extra)
    assert json.loads(proc.stdout.strip()) == ["EP"], proc.stderr


def test_entry_point_callable_returning_module_name(tmp_path):
    site = _fake_dist(tmp_path, "fake_ep_factory:get_module")
    write_pass(site / "fake_ep_mod.py", "EPC")
    (site / "fake_ep_factory.py").write_text("def get_module():\n    return 'fake_ep_mod'\n")
    code = '''
from ge.passes.bootstrap import ensure_plugins_loaded
print(json.dumps([d.pass_name for d in ensure_plugins_loaded()]))
'''
    proc = run(code, None, extra_env={"PYTHONPATH": f"{ROOT}{os.pathsep}{site}"})
    assert json.loads(proc.stdout.strip()) == ["EPC"], proc.stderr


def test_entry_point_failure_is_ge_error(tmp_path):
    site = _fake_dist(tmp_path, "no_such_module_xyz")
    code = '''
from ge.errors import GeError
from ge.passes.bootstrap import ensure_plugins_loaded
try:
    ensure_plugins_loaded()
except GeError as e:
    print(json.dumps([e.code, e.params["passlibname"]]))
'''
    proc = run(code, None, extra_env={"PYTHONPATH": f"{ROOT}{os.pathsep}{site}"})
    code_, where = json.loads(proc.stdout.strip())
    assert code_ == "E13029" and "fake = no_such_module_xyz" in where
