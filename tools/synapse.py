"""A throwaway Matrix homeserver (Synapse, SQLite) on a loopback port, for tests and benchmarks.

Synapse runs from a virtual environment of its own (``.cache/synapse-venv``, created with
``pip install matrix-synapse`` the first time), since its dependencies may clash with the project's.
Accounts are registered with the shared secret (``/_synapse/admin/v1/register``); rate limits are
lifted, since one bot posts every message of every table.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tools.loopback import free_port

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(os.environ.get("CINQ_SYNAPSE_VENV", ROOT / ".cache" / "synapse-venv"))
REQUIREMENT = "matrix-synapse>=1.100,<2"
SERVER_NAME = "localhost"
_LIMIT = {"per_second": 10000, "burst_count": 10000}


def python() -> Path:
    """The Python of Synapse's own environment, installed there first if needed."""
    py = VENV / "bin" / "python"
    if not (VENV / ".installed").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", REQUIREMENT], check=True)
        (VENV / ".installed").touch()
    return py


def _config(base: Path, port: int, shared_secret: str) -> dict[str, Any]:
    return {
        "server_name": SERVER_NAME,
        "pid_file": str(base / "homeserver.pid"),
        "report_stats": False,
        "listeners": [
            {
                "port": port,
                "bind_addresses": ["127.0.0.1"],
                "type": "http",
                "tls": False,
                "x_forwarded": False,
                "resources": [{"names": ["client"], "compress": False}],
            }
        ],
        "database": {"name": "sqlite3", "args": {"database": str(base / "homeserver.db")}},
        "media_store_path": str(base / "media"),
        "signing_key_path": str(base / "signing.key"),
        "log_config": str(base / "log.yaml"),
        "macaroon_secret_key": secrets.token_hex(16),
        "form_secret": secrets.token_hex(16),
        "registration_shared_secret": shared_secret,
        "enable_registration": False,
        "trusted_key_servers": [],
        "suppress_key_server_warning": True,
        "presence": {"enabled": False},
        "url_preview_enabled": False,
        "rc_message": _LIMIT,
        "rc_registration": _LIMIT,
        "rc_room_creation": _LIMIT,
        "rc_login": {"address": _LIMIT, "account": _LIMIT, "failed_attempts": _LIMIT},
        "rc_joins": {"local": _LIMIT, "remote": _LIMIT},
        "rc_invites": {"per_room": _LIMIT, "per_user": _LIMIT, "per_issuer": _LIMIT},
    }


_LOG = """version: 1
formatters: {plain: {format: '%(asctime)s %(levelname)s %(name)s %(message)s'}}
handlers: {file: {class: logging.FileHandler, formatter: plain, filename: LOGFILE}}
root: {level: WARNING, handlers: [file]}
disable_existing_loggers: false
"""


class Synapse:
    """One homeserver: ``start()``, ``register()`` accounts, ``stop()``."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.shared_secret = secrets.token_hex(16)
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 300.0) -> Synapse:
        """Write the configuration, generate the signing key, start, and wait until it answers."""
        self.base.mkdir(parents=True, exist_ok=True)
        (self.base / "log.yaml").write_text(_LOG.replace("LOGFILE", str(self.base / "homeserver.log")))
        cfg = self.base / "homeserver.yaml"
        cfg.write_text(json.dumps(_config(self.base, self.port, self.shared_secret)))  # JSON is YAML
        py = str(python())
        subprocess.run(
            [py, "-m", "synapse.app.homeserver", "-c", str(cfg), "--generate-keys"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        with open(self.base / "stderr.log", "wb") as err:
            self.proc = subprocess.Popen(
                [py, "-m", "synapse.app.homeserver", "-c", str(cfg)], stdout=subprocess.DEVNULL, stderr=err
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"synapse exited: {(self.base / 'stderr.log').read_text()[-2000:]}")
            try:
                urllib.request.urlopen(f"{self.url}/_matrix/client/versions", timeout=5).read()
                return self
            except (urllib.error.URLError, OSError):
                time.sleep(0.3)
        raise RuntimeError("synapse did not answer in time")

    def register(self, localpart: str, password: str, admin: bool = False) -> str:
        """Register an account with the shared secret; returns its user id."""
        endpoint = f"{self.url}/_synapse/admin/v1/register"
        nonce = json.load(urllib.request.urlopen(endpoint, timeout=30))["nonce"]
        mac = hmac.new(
            self.shared_secret.encode(),
            b"\x00".join(
                [nonce.encode(), localpart.encode(), password.encode(), b"admin" if admin else b"notadmin"]
            ),
            hashlib.sha1,
        ).hexdigest()
        body = json.dumps(
            {"nonce": nonce, "username": localpart, "password": password, "admin": admin, "mac": mac}
        ).encode()
        req = urllib.request.Request(endpoint, body, {"content-type": "application/json"})
        return str(json.load(urllib.request.urlopen(req, timeout=30))["user_id"])

    def stop(self) -> None:
        """Stop the homeserver."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
