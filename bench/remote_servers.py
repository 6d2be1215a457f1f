"""Real Redis and nginx (WebDAV PUT) servers on loopback ports, for the remote kernel cache's
tests (tests/cache_remote) and benchmark (bench/bench_remote_cache.py).

Each server runs as the calling user from a private directory (configuration, data, logs, pid,
nginx's temporary files): no root, no system files.  `tls_cert(directory)` makes a self-signed
certificate for 127.0.0.1 with openssl; a client trusts it through SSL_CERT_FILE.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Optional

__all__ = ["free_port", "RedisServer", "NginxServer", "tls_cert", "have_servers"]

START_SECONDS = 10


def have_servers() -> bool:
    return bool(shutil.which("redis-server") and shutil.which("nginx"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited ({proc.returncode}): {log.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"server not listening on {port}: {log.read_text()[-2000:]}")


def tls_cert(directory: Path) -> tuple:
    """(certificate, key) files of a self-signed certificate for 127.0.0.1 (also its own CA)."""
    directory = Path(directory)
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj",
                    "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return cert, key


class _Server:
    proc: Optional[subprocess.Popen] = None

    def stop(self) -> None:
        """SIGTERM and wait: a clean shutdown."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)

    def kill(self) -> None:
        """SIGKILL: what a crash leaves (connections closed mid-way)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)


class RedisServer(_Server):
    """redis-server on 127.0.0.1:<port>; `extra` lines are appended to its configuration
    (e.g. "maxmemory 1", "user ci on >pw ~pyatc:v1:* +get +set")."""

    def __init__(self, directory: Path, extra: tuple = (), tls: Optional[tuple] = None):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.tls = tls
        lines = [f"bind 127.0.0.1", f"dir {self.dir}", "save \"\"", "appendonly no",
                 f"logfile {self.dir / 'redis.log'}", "daemonize no"]
        if tls:
            cert, key = tls
            lines += ["port 0", f"tls-port {self.port}", f"tls-cert-file {cert}",
                      f"tls-key-file {key}", f"tls-ca-cert-file {cert}", "tls-auth-clients no"]
        else:
            lines.append(f"port {self.port}")
        self.conf = self.dir / "redis.conf"
        self.conf.write_text("\n".join(lines + list(extra)) + "\n")
        self.start()

    def start(self) -> "RedisServer":
        log = self.dir / "redis.log"
        log.touch()
        self.proc = subprocess.Popen(["redis-server", str(self.conf)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_port(self.port, self.proc, log)
        return self

    def url(self, db: int = 0, user: str = "", password: str = "") -> str:
        auth = f"{user}:{password}@" if (user or password) else ""
        scheme = "rediss" if self.tls else "redis"
        return f"{scheme}://{auth}127.0.0.1:{self.port}/{db}"

    def client(self, db: int = 0):
        import redis
        return redis.Redis(host="127.0.0.1", port=self.port, db=db)


NGINX_CONF = """daemon off;
{user}worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    client_max_body_size 300m;
    server {{
        listen 127.0.0.1:{port}{ssl};
        {certs}
        root {d}/www;
        location / {{
            dav_methods PUT DELETE;
            create_full_put_path on;
            dav_access user:rw;
            autoindex on;
            autoindex_format json;
        }}
    }}
}}
"""


class NginxServer(_Server):
    """nginx on 127.0.0.1:<port> serving <directory>/www with WebDAV PUT/DELETE and a JSON
    directory index; `url(path)` is a store URL under it."""

    def __init__(self, directory: Path, tls: Optional[tuple] = None):
        self.dir = Path(directory)
        (self.dir / "www").mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.tls = tls
        certs = (f"ssl_certificate {tls[0]}; ssl_certificate_key {tls[1]};" if tls else "")
        self.conf = self.dir / "nginx.conf"
        # as root, nginx's workers would run as nobody: keep them the user who owns the files
        user = "user root root;\n" if os.geteuid() == 0 else ""
        self.conf.write_text(NGINX_CONF.format(d=self.dir, port=self.port, certs=certs,
                                               ssl=" ssl" if tls else "", user=user))
        self.start()

    def start(self) -> "NginxServer":
        log = self.dir / "error.log"
        log.touch()
        self.proc = subprocess.Popen(["nginx", "-p", str(self.dir), "-c", str(self.conf),
                                      "-e", str(log)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_port(self.port, self.proc, log)
        return self

    def url(self, path: str = "cache") -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/{path}"

    @property
    def root(self) -> Path:
        return self.dir / "www"
