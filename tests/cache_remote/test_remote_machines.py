"""Two "machines" (separate local cache roots, separate `pyatc` processes) share one store: the
second compile of ResNet-50 (ci) hits remotely for every kernel and writes an OM byte-identical
to the first machine's, over Redis and over HTTP (nginx WebDAV).  In this process (the small
model): both again with TLS, a Redis ACL user, and the setting from PYATC_REMOTE_CACHE,
op_cache.ini and --raw_ge_options."""
import json

import pytest

from e2e_helpers import assert_entries_sound, entries, om_parts
from remote_helpers import remote_env, warnings_of


def _second_machine(runner, servers, reference, tmp_path, stores, model="resnet50",
                    flags=(), env=None):
    om, first, names = reference[model]
    res = runner.run(tmp_path / "b", model, "--op_compiler_cache_dir=cache", *flags,
                       env=env or remote_env(servers, stores)).ok()
    stats = res.report()["kernel_cache"]
    assert stats["remote_hits"] == stats["kernels"] == first["kernels"], stats
    assert stats["compiles"] == 0 and stats["hits"] == 0 and stats["remote_errors"] == 0, stats
    assert stats["remote_bytes_read"] > 0 and stats["remote_refused"] == 0, stats
    if flags:       # other argv: only the atc_cmdline attribute may differ
        assert om_parts(res.om) == om_parts(om), "the OM differs from the first machine's"
    else:
        assert res.om.read_bytes() == om, "the OM differs from the first machine's"
    root = tmp_path / "b" / "cache"
    assert entries(root) == names            # every remote hit was published locally
    assert_entries_sound(root)
    assert "(WP012" not in res.text, res.text
    return res


def test_first_machine_writes_back(reference):
    _, stats, names = reference["resnet50"]
    # ResNet-50 (ci): 27 distinct kernels (convolutions with their Add and Relu fused)
    assert stats["compiles"] == stats["kernels"] == len(names) > 20, stats
    assert stats["remote_misses"] == stats["kernels"], stats
    assert stats["remote_published"] == 2 * stats["kernels"], stats       # Redis and HTTP
    assert "redis://" in stats["remote"] and "http://" in stats["remote"]


def test_redis_second_machine_hits_every_kernel(machines, inproc, servers, reference, tmp_path):
    res = _second_machine(machines, servers, reference, tmp_path, servers.redis.url(1),
                          flags=("--log=info",), env=dict(remote_env(servers,
                                                                     servers.redis.url(1)),
                                                          ASCEND_SLOG_PRINT_TO_STDOUT="1"))
    kernels = res.report()["kernel_cache"]["kernels"]
    assert f"remote_hits={kernels} remote_misses=0 remote_errors=0" in res.stdout
    again = inproc.run(tmp_path / "b", "resnet50", "--op_compiler_cache_dir=cache",
                       env=remote_env(servers, servers.redis.url(1))).ok()
    stats = again.report()["kernel_cache"]
    assert stats["hits"] == kernels and stats["remote_hits"] == 0, stats   # local first


def test_http_second_machine_hits_every_kernel(machines, servers, reference, tmp_path):
    _second_machine(machines, servers, reference, tmp_path, servers.nginx.url("share"))
    stored = sorted(p.name for p in (servers.nginx.root / "share" / "pyatc-v1").iterdir())
    assert set(reference["resnet50"][2]) <= set(stored)


@pytest.mark.parametrize("scheme", ["rediss", "https"])
def test_tls_stores(inproc, servers, reference, tmp_path, scheme):
    store = (servers.redis_tls.url(3) if scheme == "rediss"
             else servers.nginx_tls.url(f"tls{scheme}"))
    om, _, _ = reference["tiny"]
    first = inproc.run(tmp_path / "a", "tiny", "--op_compiler_cache_dir=cache",
                       env=dict(remote_env(servers, store), SSL_CERT_FILE=str(servers.cert))).ok()
    stats = first.report()["kernel_cache"]
    assert stats["remote_published"] == stats["kernels"] and stats["remote_errors"] == 0, \
        first.text
    _second_machine(inproc, servers, reference, tmp_path, store, model="tiny",
                    env=dict(remote_env(servers, store), SSL_CERT_FILE=str(servers.cert)))
    untrusted = inproc.run(tmp_path / "c", "tiny", "--op_compiler_cache_dir=cache",
                           env=dict(remote_env(servers, store), SSL_CERT_FILE="/dev/null"))
    untrusted.ok()
    (line,) = warnings_of(untrusted.text, "WP0122")
    assert "CERTIFICATE_VERIFY_FAILED" in line or "certificate verify failed" in line, line
    assert untrusted.om.read_bytes() == om


def test_redis_acl_users(inproc, servers, reference, tmp_path):
    """A writer user, then a read-only user (`|read-only`, no +set) on the entries of the
    first; a wrong password is one WP0122 and the compile goes on."""
    writer = servers.redis.url(4, "ci", "ci-pass")
    inproc.run(tmp_path / "a", "tiny", "--op_compiler_cache_dir=cache",
               env=remote_env(servers, writer)).ok()
    assert len(servers.redis.client(4).keys("pyatc:v1:*")) == reference["tiny"][1]["kernels"]
    reader = servers.redis.url(4, "reader", "rd-pass") + "|read-only"
    _second_machine(inproc, servers, reference, tmp_path, reader, model="tiny")
    wrong = inproc.run(tmp_path / "c", "tiny", "--op_compiler_cache_dir=cache",
                       env=remote_env(servers, servers.redis.url(4, "ci", "nope"))).ok()
    (line,) = warnings_of(wrong.text, "WP0122")
    assert "nope" not in wrong.text and "ci:***@" in line, line     # no password in a message
    assert wrong.om.read_bytes() == reference["tiny"][0]


def test_setting_sources_and_precedence(inproc, servers, reference, tmp_path):
    """--raw_ge_options (ge.op_compiler_remote_cache) over op_cache.ini (remote_storage) over
    PYATC_REMOTE_CACHE: the winner here is Redis db 1, the losers a store that is down."""
    down = "redis://127.0.0.1:1|connect-timeout=50"
    env = remote_env(servers, down)
    (tmp_path / "ini" / "b" / "cache").mkdir(parents=True)
    (tmp_path / "ini" / "b" / "cache" / "op_cache.ini").write_text(
        f"[op_compiler_cache]\nremote_storage={servers.redis.url(1)}\n")
    _second_machine(inproc, servers, reference, tmp_path / "ini", None, model="tiny", env=env)
    raw = tmp_path / "raw" / "b" / "raw.json"
    raw.parent.mkdir(parents=True)
    raw.write_text(json.dumps({"compile options": {"global": {
        "ge.op_compiler_remote_cache": servers.redis.url(1)}}}))
    (tmp_path / "raw" / "b" / "cache").mkdir()
    (tmp_path / "raw" / "b" / "cache" / "op_cache.ini").write_text(
        f"[op_compiler_cache]\nremote_storage={down}\n")
    _second_machine(inproc, servers, reference, tmp_path / "raw", None, model="tiny",
                    flags=("--raw_ge_options=raw.json",), env=env)


def test_offline_compile_option(servers, reference, models, tmp_path, monkeypatch):
    """ge.offline_compile takes ge.op_compiler_remote_cache like any GE option: a graph parsed
    from the tiny model hits remotely for every kernel."""
    import onnx
    from ge.offline_compile import build_model
    from ge.parser.onnx import parse_onnx
    monkeypatch.setenv("PYATC_REMOTE_CACHE_KEY_FILE", str(servers.key_file))
    graph = parse_onnx(onnx.load(str(models["tiny"])), {})
    model = build_model(graph, {"ge.socVersion": "Ascend310P3", "ge.exec.precision_mode": "must_keep_origin_dtype",
                                "ge.op_compiler_cache_dir": str(tmp_path / "cache"),
                                "ge.op_compiler_remote_cache": servers.redis.url(1)})
    stats = model.context.kernels.stats
    assert stats["remote_hits"] == stats["kernels"] == reference["tiny"][1]["kernels"], stats
