"""Cache settings rules of seed 002 / spec §3: modes, directory priority and characters,
op_cache.ini vs environment vs defaults, invalid values, debug bypasses."""
import pytest

import ge.errors
from ge.compiler.cache.settings import resolve, size_limits, parse_ini
from ge.errors import GeError


@pytest.fixture(autouse=True)
def clear_warnings():
    ge.errors.take_warnings()
    yield
    ge.errors.take_warnings()


def _env(tmp_path, **extra):
    return dict({"HOME": str(tmp_path / "home")}, **extra)


def test_default_mode_is_enable(tmp_path):
    s = resolve({}, _env(tmp_path))
    assert s.mode == "enable" and s.enabled


@pytest.mark.parametrize("mode,enabled", [("enable", True), ("force", True), ("disable", False)])
def test_modes(tmp_path, mode, enabled):
    s = resolve({"ge.op_compiler_cache_mode": mode}, _env(tmp_path))
    assert (s.mode, s.enabled) == (mode, enabled)


@pytest.mark.parametrize("bad", ["Enable", "on", "true"])
def test_invalid_mode_is_coded_error(tmp_path, bad):
    with pytest.raises(GeError) as exc:
        resolve({"ge.op_compiler_cache_mode": bad}, _env(tmp_path))
    assert exc.value.code == "E10001" and bad in exc.value.message


def test_directory_priority(tmp_path):
    env = _env(tmp_path, ASCEND_CACHE_PATH=str(tmp_path / "envdir"))
    opt = {"ge.op_compiler_cache_dir": str(tmp_path / "optdir"), "ge.socVersion": "Ascend910B1"}
    assert resolve(opt, env).cache_dir == str(tmp_path / "optdir/kernel_cache/Ascend910B1")
    assert resolve({}, env).root == str(tmp_path / "envdir")
    assert resolve({}, _env(tmp_path)).root == str(tmp_path / "home/atc_data")
    assert resolve({}, _env(tmp_path, ASCEND_CACHE_PATH="")).root == str(tmp_path / "home/atc_data")


@pytest.mark.parametrize("bad", ["/tmp/a b", "/tmp/$x", "~/cache", "/tmp/a:b"])
def test_invalid_characters(tmp_path, bad):
    with pytest.raises(GeError) as exc:
        resolve({"ge.op_compiler_cache_dir": bad}, _env(tmp_path))
    assert exc.value.code == "E10001"
    with pytest.raises(GeError):
        resolve({}, _env(tmp_path, ASCEND_CACHE_PATH=bad))


def test_chinese_characters_accepted(tmp_path):
    s = resolve({"ge.op_compiler_cache_dir": str(tmp_path / "缓存_dir-1.0")}, _env(tmp_path))
    assert s.root.endswith("缓存_dir-1.0")


INI = "[op_compiler_cache]\nmax_op_cache_size={}\nremain_cache_size_ratio={}\n"


def test_ini_pair_wins_over_env():
    env = {"ASCEND_MAX_OP_CACHE_SIZE": "20", "ASCEND_REMAIN_CACHE_SIZE_RATIO": "30"}
    assert size_limits(INI.format(100, 80), env) == (100, 80, "ini")


def test_env_used_without_ini_and_defaults_without_env():
    env = {"ASCEND_MAX_OP_CACHE_SIZE": " 20 ", "ASCEND_REMAIN_CACHE_SIZE_RATIO": "30"}
    assert size_limits(None, env) == (20, 30, "env")
    assert size_limits(None, {}) == (500, 50, "default")


@pytest.mark.parametrize("mx,ratio", [("0", "50"), ("100", "0"), ("100", "101"), ("abc", "50"),
                                      ("-2", "50"), ("2147483648", "50")])
def test_invalid_ini_pair_falls_back_to_env_with_warning(mx, ratio):
    env = {"ASCEND_MAX_OP_CACHE_SIZE": "20"}
    assert size_limits(INI.format(mx, ratio), env) == (20, 50, "env")
    assert [w.code for w in ge.errors.take_warnings()] == ["WP0111"]


def test_ini_needs_both_keys():
    assert size_limits("[op_compiler_cache]\nmax_op_cache_size=100\n", {}) == (500, 50, "default")


@pytest.mark.parametrize("name,value", [("ASCEND_MAX_OP_CACHE_SIZE", "0"),
                                        ("ASCEND_MAX_OP_CACHE_SIZE", "x"),
                                        ("ASCEND_MAX_OP_CACHE_SIZE", "2147483647"),
                                        ("ASCEND_REMAIN_CACHE_SIZE_RATIO", "0"),
                                        ("ASCEND_REMAIN_CACHE_SIZE_RATIO", "101")])
def test_invalid_env_values_warn_and_use_defaults(name, value):
    assert size_limits(None, {name: value}) == (500, 50, "default")
    assert [w.code for w in ge.errors.take_warnings()] == ["WP0111"]


def test_minus_one_disables_aging():
    assert size_limits(INI.format(-1, 50), {})[0] == -1
    assert size_limits(None, {"ASCEND_MAX_OP_CACHE_SIZE": "-1"})[0] == -1


def test_ini_parser_rules():
    text = "# c\nmax_op_cache_size = 7\n[op_compiler_cache ]\nremain_cache_size_ratio= 9\nk=\n"
    assert parse_ini(text) == {"op_compiler_cache": {"max_op_cache_size": "7",
                                                     "remain_cache_size_ratio": "9"}}


def test_ini_location_root_then_kernel_cache(tmp_path):
    root = tmp_path / "r"
    (root / "kernel_cache").mkdir(parents=True)
    (root / "kernel_cache/op_cache.ini").write_text(INI.format(11, 22))
    opts = {"ge.op_compiler_cache_dir": str(root)}
    s = resolve(opts, {})
    assert (s.max_mb, s.ratio, s.ini_path) == (11, 22, str(root / "kernel_cache/op_cache.ini"))
    (root / "op_cache.ini").write_text(INI.format(33, 44))
    s = resolve(opts, {})
    assert (s.max_mb, s.ratio) == (33, 44)


@pytest.mark.parametrize("level", ["1", "2", "3", "4"])
def test_debug_level_bypasses_cache(tmp_path, level):
    s = resolve({"ge.opDebugLevel": level}, _env(tmp_path))
    assert not s.enabled and "opDebugLevel" in s.bypass


def test_debug_level_invalid(tmp_path):
    with pytest.raises(GeError):
        resolve({"ge.opDebugLevel": "5"}, _env(tmp_path))


def test_debug_config_without_list_bypasses_all(tmp_path):
    cfg = tmp_path / "dbg.cfg"
    cfg.write_text("op_debug_config=ccec_g,oom\n")
    s = resolve({"op_debug_config": str(cfg)}, _env(tmp_path))
    assert not s.enabled and s.debug_flags == ("-g",)


@pytest.mark.parametrize("mode,enabled", [("enable", True), ("force", True), ("disable", False)])
def test_debug_list_bypasses_listed_ops_only(tmp_path, mode, enabled):
    cfg = tmp_path / "dbg.cfg"
    cfg.write_text("# x\nop_debug_config=ccec_O0\nop_debug_list=conv1, OpType::Relu\n")
    s = resolve({"op_debug_config": str(cfg), "ge.op_compiler_cache_mode": mode}, _env(tmp_path))
    assert s.enabled == enabled
    assert s.bypasses("conv1", "Conv2D") and s.bypasses("r", "Relu")
    assert not s.bypasses("conv2", "Conv2D")


def test_debug_config_missing_file(tmp_path):
    with pytest.raises(GeError) as exc:
        resolve({"op_debug_config": str(tmp_path / "nope")}, _env(tmp_path))
    assert exc.value.code == "E10001"
