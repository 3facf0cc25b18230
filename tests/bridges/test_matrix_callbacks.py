"""The bridge's callback server on a real loopback socket: every callback's signature is checked
before anything is read from it, a malformed one is refused for good, one Matrix could not take yet
is answered 503 (cinq retries it); and the bridge's signing agrees with cinq's own both ways."""

from __future__ import annotations

import ast
import json
import time
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from adapters.webhook import signing as cinq_signing
from bridges.matrix import signing
from bridges.matrix.app import callback_app
from bridges.matrix.config import Config, ConfigError
from bridges.matrix.core import Bridge
from bridges.matrix.state import State
from tests.bridges.matrix_fakes import FakeCinq, FakeMatrix, msg
from tools.loopback import free_port

SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


@pytest.fixture
async def server(tmp_path):
    state, m = State(str(tmp_path / "s.sqlite3")), FakeMatrix()
    runner = web.AppRunner(callback_app(Bridge(state, m, FakeCinq()), SECRET))
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    async with aiohttp.ClientSession() as s:
        yield s, f"http://127.0.0.1:{port}/cb", m
    await runner.cleanup()
    state.close()


def signed(body: bytes, secret: str = SECRET, ts: int | None = None) -> dict[str, str]:
    # Signed by cinq's own code: the bridge must accept exactly what cinq sends.
    return {
        **cinq_signing.headers([secret], "wh-1:1", ts or int(time.time()), body),
        "content-type": "application/json",
    }


async def test_a_signed_callback_is_shown(server):
    s, url, m = server
    body = json.dumps(msg(1, text="hola")).encode()
    async with s.post(url, data=body, headers=signed(body)) as r:
        assert r.status == 200
    assert m.sent[0][1]["body"] == "hola"


@pytest.mark.parametrize("case", ["wrong secret", "tampered", "stale", "missing"])
async def test_a_badly_signed_callback_is_401_and_shows_nothing(server, case):
    s, url, m = server
    body = json.dumps(msg(1)).encode()
    hdrs = {
        "wrong secret": signed(body, secret="another-secret-of-16-bytes"),
        "tampered": signed(body + b" "),
        "stale": signed(body, ts=int(time.time()) - 3600),
        "missing": {"content-type": "application/json"},
    }[case]
    async with s.post(url, data=body, headers=hdrs) as r:
        assert r.status == 401
    assert m.sent == []


async def test_a_malformed_callback_is_400(server):
    s, url, m = server
    for body in (b"not json", json.dumps({"id": "x"}).encode()):
        async with s.post(url, data=body, headers=signed(body)) as r:
            assert r.status == 400
    assert m.sent == []


async def test_a_callback_matrix_cannot_take_is_503_then_shown_once_on_retry(server):
    s, url, m = server
    body = json.dumps(msg(1)).encode()
    m.fail = True
    async with s.post(url, data=body, headers=signed(body)) as r:
        assert r.status == 503
    m.fail = False
    for _ in range(2):  # the retry, then a duplicate delivery
        async with s.post(url, data=body, headers=signed(body)) as r:
            assert r.status == 200
    assert len(m.sent) == 1


def test_the_bridges_signatures_verify_in_cinq_and_back():
    body, now = b'{"type":"message"}', int(time.time())
    hdrs = signing.headers(SECRET, "$ev", now, body)
    assert cinq_signing.verify([SECRET], hdrs, body, now) == "$ev"
    assert (
        signing.verify(SECRET, cinq_signing.headers([SECRET, "x" * 16], "id", now, body), body, now) == "id"
    )
    with pytest.raises(signing.BadSignature):
        signing.verify(SECRET, hdrs, body + b"!", now)


def test_config_names_what_is_missing_or_wrong():
    env = {
        "CINQ_MATRIX_HOMESERVER": "http://hs/",
        "CINQ_MATRIX_USER": "@cinq:hs",
        "CINQ_MATRIX_PASSWORD": "pw",
        "CINQ_MATRIX_CINQ_URL": "http://cinq",
        "CINQ_MATRIX_PLATFORM": "matrix",
        "CINQ_MATRIX_SECRET": SECRET,
    }
    cfg = Config.from_env(env)
    assert cfg.homeserver == "http://hs" and cfg.port == 8090 and cfg.locale == "es"
    with pytest.raises(ConfigError, match="CINQ_MATRIX_SECRET"):
        Config.from_env({k: v for k, v in env.items() if k != "CINQ_MATRIX_SECRET"})
    with pytest.raises(ConfigError, match="CINQ_MATRIX_PORT"):
        Config.from_env({**env, "CINQ_MATRIX_PORT": "eighty"})
    assert cfg.log_level == "INFO"
    assert Config.from_env({**env, "CINQ_MATRIX_LOG_LEVEL": "debug"}).log_level == "DEBUG"
    with pytest.raises(ConfigError, match="CINQ_MATRIX_LOG_LEVEL"):
        Config.from_env({**env, "CINQ_MATRIX_LOG_LEVEL": "loud"})
    assert cfg.request_timeout == 4.0
    assert Config.from_env({**env, "CINQ_MATRIX_REQUEST_TIMEOUT": "2.5"}).request_timeout == 2.5
    for bad in ("soon", "0", "-1", "nan", "inf"):
        with pytest.raises(ConfigError, match="CINQ_MATRIX_REQUEST_TIMEOUT"):
            Config.from_env({**env, "CINQ_MATRIX_REQUEST_TIMEOUT": bad})


def test_bridges_import_nothing_of_engine_service_or_adapters():
    # The bridge is the worked example of a platform that knows only the public contract.
    root = Path(__file__).resolve().parents[2] / "bridges"
    files = list(root.rglob("*.py"))
    assert files
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                assert name.split(".")[0] not in {"engine", "service", "adapters"}, f"{path}: imports {name}"
