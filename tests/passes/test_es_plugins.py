"""`ge.es` op packages: the built-in op modules and the `ge.es.plugins` entry-point group
(spec/python-passes.md §5.5), in process."""
from __future__ import annotations

import sys

import pytest

import ge.es
from ge.es import get_plugin, list_plugins


def test_builtin_op_modules_are_the_first_plugins():
    assert list_plugins()[:3] == ["math", "nn", "all"]
    assert get_plugin("math") is ge.es.math is sys.modules["ge.es.math"]
    assert get_plugin("all").Relu.__name__ == "Relu"


def test_unknown_plugin_names_the_loaded_ones():
    with pytest.raises(KeyError, match="'nope' is not loaded; loaded: math, nn, all"):
        get_plugin("nope")


@pytest.fixture
def es_package(tmp_path, monkeypatch):
    """An installed op package `es_extra` registered as entry point `extra`; forgotten after."""
    dist = tmp_path / "es_extra-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: es-extra\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[ge.es.plugins]\nextra = es_extra:get_module\n"
                                           "math = es_extra\n")
    (tmp_path / "es_extra.py").write_text("def get_module():\n    return 'es_extra'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    ge.es._plugins.pop("extra", None)
    sys.modules.pop("ge.es.extra", None)
    sys.modules.pop("es_extra", None)
    if hasattr(ge.es, "extra"):
        delattr(ge.es, "extra")


def test_entry_point_package_is_installed_as_ge_es_name(es_package):
    ge.es._load_entry_point_plugins()
    module = sys.modules["es_extra"]
    assert list_plugins() == ["math", "nn", "all", "extra"]
    assert get_plugin("extra") is module is ge.es.extra is sys.modules["ge.es.extra"]
    assert get_plugin("math") is sys.modules["ge.es.math"]     # a built-in name is not replaced
