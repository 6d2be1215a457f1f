"""Fixtures of the remote kernel cache tests: real servers started once per session (Redis, nginx
with WebDAV PUT, and both again with TLS), the signing key, `pyatc` "machines" (private HOME,
TMPDIR, cache root per directory) and the reference compiles every other test compares with.

The runner and model files are tests/cache_e2e's (e2e_helpers); a store setting is passed to a
compile through PYATC_REMOTE_CACHE / PYATC_REMOTE_CACHE_KEY_FILE (so argv, and atc_cmdline,
stay the same as a compile without remote storage).
"""
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "cache_e2e"))

from e2e_helpers import ModelFiles, Pyatc, entries  # noqa: E402
from remote_helpers import REFERENCE_MODELS, InProcess, Servers, remote_env  # noqa: E402


@pytest.fixture(scope="session")
def servers(tmp_path_factory):
    started = Servers(tmp_path_factory.mktemp("servers"))
    yield started
    started.stop()


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    return ModelFiles(tmp_path_factory.mktemp("remote_models"))


@pytest.fixture(scope="session")
def machines(entry_argv, entry_env, tmp_path_factory, models, servers):
    """A `pyatc` runner whose environment trusts the session's TLS certificate; each working
    directory given to run() is one "machine" (its cache root is `<cwd>/cache`)."""
    runner = Pyatc(entry_argv("pyatc"), entry_env, tmp_path_factory.mktemp("machines"), models)
    runner.env["SSL_CERT_FILE"] = str(servers.cert)
    for name in ("PYATC_REMOTE_CACHE", "PYATC_REMOTE_CACHE_KEY_FILE"):
        runner.env.pop(name, None)
    return runner


@pytest.fixture(scope="session")
def inproc(atc_main, models):
    return InProcess(atc_main, models)


@pytest.fixture(scope="session")
def reference(machines, inproc, servers, tmp_path_factory):
    """Machine A compiles each reference model once, with an empty local cache, writing back to
    Redis db 1 and to the HTTP store `share` at once: name -> (OM bytes, compile_report
    kernel_cache, kernel names).  These OMs are the serial builds the other tests compare with.
    ResNet-50 is compiled by a `pyatc` process (the two-machine tests compare OM bytes), the
    small models in this process."""
    base = tmp_path_factory.mktemp("machine_a")
    env = remote_env(servers, f"{servers.redis.url(1)} {servers.nginx.url('share')}")
    out = {}
    for model in REFERENCE_MODELS:
        runner = machines if model == "resnet50" else inproc
        res = runner.run(base / model, model, "--op_compiler_cache_dir=cache", env=env).ok()
        out[model] = (res.om.read_bytes(), res.report()["kernel_cache"],
                      entries(base / model / "cache"))
    return out
