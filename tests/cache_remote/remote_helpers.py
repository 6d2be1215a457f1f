"""Helpers of the remote kernel cache tests: the session's servers, the signing key, the
environment that names the stores, a store that accepts and never answers, remote objects."""
from __future__ import annotations

import socket
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.remote_servers import NginxServer, RedisServer, tls_cert  # noqa: E402
from e2e_helpers import SOC, Result  # noqa: E402

# the reference compiles (conftest.reference): ResNet-50 (ci) and three small models
REFERENCE_MODELS = ("resnet50", "small", "small6", "tiny")
KEY = b"test signing key, 32 bytes long!"      # what Servers.key_file holds
ACL_USERS = ("user ci on >ci-pass ~pyatc:v1:* +get +set +del +scan +strlen +info +select",
             "user reader on >rd-pass ~pyatc:v1:* +get +scan +strlen +select")


def write_key(path: Path, data: bytes = KEY, mode: int = 0o600) -> Path:
    path.write_bytes(data + b"\n")
    path.chmod(mode)
    return path


class Servers:
    """Started once per session: Redis (with the ACL users), nginx, and both with TLS."""

    def __init__(self, directory: Path):
        self.dir = Path(directory)
        self.cert, cert_key = tls_cert(self.dir)
        self.key_file = write_key(self.dir / "signing.key")
        self.redis = RedisServer(self.dir / "redis", extra=ACL_USERS)
        self.nginx = NginxServer(self.dir / "nginx")
        self.redis_tls = RedisServer(self.dir / "redis_tls", tls=(self.cert, cert_key))
        self.nginx_tls = NginxServer(self.dir / "nginx_tls", tls=(self.cert, cert_key))

    def stop(self) -> None:
        for server in (self.redis, self.nginx, self.redis_tls, self.nginx_tls):
            server.stop()


class InProcess:
    """Compiles in this process (tests/conftest.py `atc_main`, the ATC main flow pyatc runs) with
    the argv of e2e_helpers.Pyatc: a "machine" is a working directory.  For the tests whose
    subject is not the process boundary."""

    def __init__(self, atc_main, models):
        self.atc_main = atc_main
        self.models = models

    def run(self, cwd, model: str, *flags: str, env=None) -> Result:
        cwd = Path(cwd)
        cwd.mkdir(parents=True, exist_ok=True)
        link = cwd / f"{model}.onnx"
        if not link.exists():
            link.symlink_to(self.models[model])
        done = self.atc_main("--framework=5", f"--model={model}.onnx", "--output=net",
                             f"--soc_version={SOC}", "--precision_mode=must_keep_origin_dtype", *flags,
                             cwd=cwd, env=dict(env or {}, TE_PARALLEL_COMPILER="2"))
        return Result(done.rc, done.stdout, done.stderr, cwd, cwd, "net")


def remote_env(servers: Servers, stores: str, key_file=None) -> dict:
    return {"PYATC_REMOTE_CACHE": stores,
            "PYATC_REMOTE_CACHE_KEY_FILE": str(key_file or servers.key_file)}


class SilentServer:
    """A TCP server on loopback that accepts connections and never answers: a store stalled
    past any timeout."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.held = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


def warnings_of(text: str, code: str) -> list:
    """The lines of `text` that report warning `code` (ATC renders `Title(CODE): message`)."""
    return [line for line in text.splitlines() if f"({code}): " in line]
