"""Four `pyatc` processes with four empty local caches compile four different models against
one Redis database at once, one of them (a small model) in force mode: every compile succeeds, every OM is the
reference (serial) build's, and `python3 -m ge.compiler.cache verify --remote` finds every
remote entry sound.  The database starts with the reference entries, so the others read theirs
(ResNet-50's 40-odd) while the forcing process recompiles and overwrites its own."""
import subprocess
import sys

from e2e_helpers import assert_entries_sound, om_parts
from remote_helpers import REFERENCE_MODELS, remote_env, warnings_of
from ge.compiler.cache.remote_redis import PREFIX

DB = 2
FORCING = "small"


def test_four_processes_four_models_one_redis_one_forcing(machines, servers, reference,
                                                          tmp_path):
    shared = servers.redis.client(1)
    for key in shared.scan_iter(PREFIX + "*"):
        shared.copy(key, key, destination_db=DB, replace=True)
    env = remote_env(servers, servers.redis.url(DB))
    started = {model: machines.start(tmp_path / model, model, "--op_compiler_cache_dir=cache",
                                     *(("--op_compiler_cache_mode=force",)
                                       if model == FORCING else ()), env=env)
               for model in REFERENCE_MODELS}
    for model, (_, finish) in started.items():
        res = finish().ok()
        assert not warnings_of(res.text, "WP0121") and not warnings_of(res.text, "WP0122")
        stats = res.report()["kernel_cache"]
        if model == FORCING:
            assert stats["compiles"] == stats["remote_published"] == stats["kernels"], stats
        else:
            assert stats["remote_hits"] == stats["kernels"], stats
        assert om_parts(res.om) == om_parts(reference[model][0]), f"{model}: OM differs"
        assert_entries_sound(tmp_path / model / "cache")
    names = set().union(*(reference[m][2] for m in REFERENCE_MODELS))
    stored = {k.decode()[len(PREFIX):] for k in servers.redis.client(DB).scan_iter(PREFIX + "*")}
    assert stored == names
    verify = subprocess.run([sys.executable, "-m", "ge.compiler.cache", "verify", "--remote",
                             servers.redis.url(DB)], env=dict(machines.env, **env),
                            capture_output=True, text=True, timeout=300)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert f"verified {len(names)} entries, 0 bad" in verify.stdout
