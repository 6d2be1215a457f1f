"""`python3 -m ge.compiler.cache push`, `verify --remote [--fix]` and `stats --remote` (run in
this process through the command line's main(); the stores are the session's servers)."""
import json
import shutil

import pytest

from ge.compiler.cache.__main__ import main
from ge.compiler.cache.remote_redis import PREFIX
from e2e_helpers import all_entries
from remote_helpers import remote_env


@pytest.fixture
def cli(servers, monkeypatch, capsys):
    for key, value in remote_env(servers, "").items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("PYATC_REMOTE_CACHE")

    def run(*argv):
        status = main(list(argv))
        out, err = capsys.readouterr()
        return status, out, err
    return run


def test_push_verify_fix_and_stats(cli, servers, reference, tmp_path, tmp_path_factory):
    """The local cache of the reference ResNet-50 pushed to a fresh HTTP path and a Redis db;
    one remote entry is then damaged: verify names it (EP0115, status 1), --fix removes it."""
    root = tmp_path / "cache"
    a_root = [p for p in tmp_path_factory.getbasetemp().glob("machine_a*/resnet50/cache")][0]
    shutil.copytree(a_root, root)
    names = all_entries(root)       # the kernels, the support object and the template
    assert len(names) == len(reference["resnet50"][2]) + 2
    stores = f"{servers.redis.url(9)} {servers.nginx.url('pushed')}"
    status, out, _ = cli("push", "--dir", str(root), "--remote", stores)
    assert status == 0 and out.count(f"pushed {len(names)} entries") == 2, out
    status, out, _ = cli("verify", "--remote", stores)
    assert status == 0 and out.count(f"verified {len(names)} entries, 0 bad") == 2, out
    victim = names[0]
    servers.redis.client(9).set(PREFIX + victim, b"not an entry")
    status, out, _ = cli("verify", "--remote", stores)
    assert status == 1 and f"EP0115" in out and victim in out and "1 bad" in out, out
    status, out, _ = cli("verify", "--remote", stores, "--fix")
    assert status == 0, out
    assert servers.redis.client(9).get(PREFIX + victim) is None
    status, out, _ = cli("stats", "--remote", stores)
    report = json.loads(out)["stores"]
    assert status == 0 and len(report) == 2, out
    http = report[servers.nginx.url("pushed")]
    assert http["entries"] == len(names) and http["bytes"] > 0
    assert report[servers.redis.url(9)]["entries"] == len(names) - 1


def test_remote_commands_report_what_they_cannot_do(cli, tmp_path):
    status, _, err = cli("stats", "--remote", "--dir", str(tmp_path))
    assert status == 2 and "EP0120" in err and "no remote storage is configured" in err
    status, out, err = cli("verify", "--remote", "redis://127.0.0.1:1|connect-timeout=50")
    assert status == 2 and "EP0120" in err and "Connection refused" in err, out + err
    (tmp_path / "op_cache.ini").write_text("[op_compiler_cache]\nremote_storage=ftp://h\n")
    status, _, err = cli("push", "--dir", str(tmp_path))
    assert status == 2 and "WP0120" in err and "unknown scheme" in err
