"""Graceful shutdown: SIGTERM to a ``cinq serve`` process (no adapter configured) exits 0 promptly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import redis as sync_redis

# A stop must end before compose SIGKILLs (30 s after SIGTERM); a quiet machine takes well under 1 s.
STOP_S = 30.0


def _serve(extra: dict[str, str]) -> subprocess.Popen:
    env = {**os.environ, "CINQ_HTTP_PORT": "0", "CINQ_LOG_LEVEL": "INFO", "CINQ_BUCKETS": "16",
           "CINQ_COMMAND_SHARDS": "2", **extra}
    # No adapter has anything to do: the Telegram one without a token, the webhook one without platforms.
    for k in ("REDIS_URL", "CINQ_TELEGRAM_TOKEN", "CINQ_WEBHOOK_PLATFORMS"):
        env.pop(k, None)
    env.update(extra)
    return subprocess.Popen([sys.executable, "-m", "service.ops.cli", "serve"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _stop(proc: subprocess.Popen) -> tuple[int, float]:
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError("cinq serve did not stop within 10 s of SIGTERM") from None
    return rc, time.monotonic() - t0


def test_sigterm_stops_serve_on_a_real_redis(real_redis_url):
    prefix = f"shutdown{os.getpid()}:"
    proc = _serve({"REDIS_URL": real_redis_url, "CINQ_KEY_PREFIX": prefix,
                   "CINQ_TOKEN_SECRETS": '["a-test-secret-for-shutdown-0123456789ab"]'})
    client = sync_redis.Redis.from_url(real_redis_url)
    try:
        # Running for sure: the worker has created its consumer group (the signal handlers were
        # installed before).  Start-up takes seconds on a loaded machine (the adapters' imports).
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                if client.xinfo_groups(f"{prefix}cmd:{{c0}}"):
                    break
            except sync_redis.ResponseError:
                pass
            time.sleep(0.1)
        else:
            proc.kill()
            raise AssertionError("cinq serve did not start: " + proc.stderr.read().decode()[-1000:])
        rc, took = _stop(proc)
        assert rc == 0, proc.stderr.read().decode()[-1000:]
        assert took < STOP_S, took
    finally:
        if proc.poll() is None:
            proc.kill()
        for k in client.scan_iter(match=f"{prefix}*"):
            client.delete(k)
        client.close()


def test_sigterm_stops_serve_on_the_embedded_store():
    proc = _serve({})
    # Started: both adapters have said they have nothing to do (after the signal handlers were
    # installed and the worker task created).
    seen = b""
    while b"no_token" not in seen or b"idle" not in seen:
        line = proc.stderr.readline()
        assert line, "cinq serve exited before it started"
        seen += line
    time.sleep(1)
    assert proc.poll() is None
    rc, took = _stop(proc)
    assert rc == 0, proc.stderr.read().decode()[-1000:]
    assert took < STOP_S, took
