"""The stranger at Redis's door (issue 32 #8, deployment): ``deploy/redis.conf`` as compose runs it.

A real ``redis-server`` is started on the file itself, with the command-line overrides of a test
(its own loopback port and data directory) and the password the way compose passes it
(``--requirepass``): a client without the password is refused every command, with it everything
works; protected mode is on, memory is bounded and refused rather than evicted at the bound, and the
commands that wipe the store are gone.  Also: compose itself refuses to start without the password,
and the Sentinel profile's own command lines (run by ``sh`` as in the containers) give the primary and
the sentinels the password, and the sentinel reaches the primary with it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import redis.exceptions
import yaml

from tools.loopback import free_port

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "deploy" / "redis.conf"
PASSWORD = "redis-password-of-the-security-suite-0123456789"


@contextlib.contextmanager
def redis_on_deploy_conf(tmp: Path, *extra: str) -> Iterator[int]:
    """``redis-server deploy/redis.conf`` on a free loopback port and ``tmp`` (the rest as in the file)."""
    binary = shutil.which("redis-server")
    assert binary, "redis-server is needed (.ci/run installs it)"
    port = free_port()
    args = [binary, str(CONF), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp),
            "--logfile", str(tmp / "redis.log"), *extra]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, (tmp / "redis.log").read_text(errors="replace")[-2000:]
            try:
                redis.Redis(port=port, socket_timeout=2).ping()
                break
            except redis.exceptions.AuthenticationError:
                break  # it answers (and wants a password)
            except redis.exceptions.ConnectionError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)
        yield port
    finally:
        proc.kill()
        proc.wait()


def test_a_client_without_the_password_is_refused_and_the_password_works(tmp_path):
    with redis_on_deploy_conf(tmp_path, "--requirepass", PASSWORD) as port:
        stranger = redis.Redis(port=port, socket_timeout=2)
        for attempt in (stranger.ping, lambda: stranger.get("x"), lambda: stranger.set("x", "1"),
                        lambda: stranger.xadd("s", {"a": "1"}), lambda: stranger.keys("*")):
            with pytest.raises(redis.exceptions.AuthenticationError):
                attempt()
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis(port=port, password="wrong-password", socket_timeout=2).ping()
        # the way every role connects: the password in CINQ_REDIS_URL
        role = redis.Redis.from_url(f"redis://:{PASSWORD}@127.0.0.1:{port}/0", socket_timeout=2)
        assert role.set("x", "1") and role.get("x") == b"1"
        assert role.xadd("s", {"a": "1"})
        assert role.dbsize() == 2  # the stranger's set and xadd never happened


def test_protected_mode_bounded_memory_noeviction_and_no_wiping(tmp_path):
    with redis_on_deploy_conf(tmp_path, "--requirepass", PASSWORD) as port:
        r = redis.Redis(port=port, password=PASSWORD, socket_timeout=2)
        config = r.config_get("*")
        assert config["protected-mode"] == "yes"
        assert int(config["maxmemory"]) > 0 and config["maxmemory-policy"] == "noeviction"
        assert config["appendonly"] == "yes" and config["appendfsync"] == "always"
        r.set("kept", "1")
        for wipe in (r.flushall, r.flushdb):
            with pytest.raises(redis.exceptions.ResponseError, match="unknown command"):
                wipe()
        assert r.get("kept") == b"1"
        # At the bound a write is refused (never an eviction): nothing already stored goes.
        r.config_set("maxmemory", 1)
        with pytest.raises(redis.exceptions.ResponseError, match="maxmemory"):
            r.set("more", "1")
        assert r.get("kept") == b"1"


def test_without_a_password_only_loopback_may_talk_to_it(tmp_path):
    # Started without --requirepass (compose would have refused): protected mode is what answers a
    # client from another address.  Loopback is all a test has, so this checks the setting, on a
    # server listening on every interface as in the container.
    with redis_on_deploy_conf(tmp_path, "--bind", "127.0.0.1") as port:
        r = redis.Redis(port=port, socket_timeout=2)
        assert r.config_get("protected-mode")["protected-mode"] == "yes"
        assert r.config_get("requirepass")["requirepass"] == ""


COMPOSE_ENV = {"CINQ_TOKEN_SECRETS": '["ci-only-secret-for-checking-the-compose-file"]',
               "CINQ_DAILY_SECRET": "ci-only-daily-secret-for-checking-the-compose-file",
               "REDIS_PASSWORD": PASSWORD}


def test_compose_refuses_to_start_without_each_secret():
    base = {k: v for k, v in os.environ.items() if k not in COMPOSE_ENV}
    for missing, profile in [*((m, []) for m in sorted(COMPOSE_ENV)),
                             ("REDIS_PASSWORD", ["--profile", "sentinel"])]:
        env = {**base, **{k: v for k, v in COMPOSE_ENV.items() if k != missing}}
        done = subprocess.run(["docker-compose", *profile, "config", "-q"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode != 0 and missing in done.stderr, (missing, profile, done.stderr)
    done = subprocess.run(["docker-compose", "--profile", "sentinel", "config"], cwd=ROOT,
                          env={**base, **COMPOSE_ENV}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    # every service of every profile is locked down; every role reaches Redis with the password
    text = done.stdout
    services = text.count("no-new-privileges:true")
    assert services >= 11 and text.count("read_only: true") == services, text[:3000]
    assert text.count("- ALL") == services
    assert f"redis://:{PASSWORD}@redis:6379/0" in text


def _compose_commands() -> dict[str, str]:
    """The shell command of each Redis service as compose renders it (the Sentinel profile)."""
    env = {k: v for k, v in os.environ.items() if k not in COMPOSE_ENV}
    done = subprocess.run(["docker-compose", "--profile", "sentinel", "config"], cwd=ROOT,
                          env={**env, **COMPOSE_ENV}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    services = yaml.safe_load(done.stdout)["services"]
    # compose hands "$$" to the container as "$"
    return {name: services[name]["command"][2].replace("$$", "$") for name in ("redis-primary", "sentinel-1")}


def test_the_sentinel_profiles_commands_protect_the_primary_and_the_sentinels(tmp_path):
    # compose's own command lines, run by sh as in the containers (paths and ports moved to the test's)
    commands = _compose_commands()
    password = "Sentinel-profile-password_0123456789abcdef"  # URL-safe, as .env.example says
    primary_port, sentinel_port = free_port(), free_port()
    (tmp_path / "p").mkdir()
    (tmp_path / "s").mkdir()
    replicated = (ROOT / "deploy" / "redis-replicated.conf").read_text().replace(
        "/usr/local/etc/redis/redis.conf", str(CONF))
    (tmp_path / "replicated.conf").write_text(replicated)
    sentinel_conf = (ROOT / "deploy" / "sentinel.conf").read_text().replace(
        "port 26379", f"port {sentinel_port}\nbind 127.0.0.1").replace(
        "redis-primary 6379", f"127.0.0.1 {primary_port}")
    (tmp_path / "sentinel.conf").write_text(sentinel_conf)
    primary = commands["redis-primary"].replace("/usr/local/etc/redis/replicated.conf",
                                                str(tmp_path / "replicated.conf"))
    primary += (f" --port {primary_port} --bind 127.0.0.1 --dir {tmp_path / 'p'}"
                f" --logfile {tmp_path / 'p' / 'redis.log'}")
    sentinel = commands["sentinel-1"].replace("/etc/cinq/sentinel.conf", str(tmp_path / "sentinel.conf"))
    sentinel = sentinel.replace("/data/", f"{tmp_path / 's'}/") + f" --logfile {tmp_path / 's' / 'log'}"
    env = {**os.environ, "REDIS_PASSWORD": password}
    procs = [subprocess.Popen(["sh", "-c", cmd], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for cmd in (primary, sentinel)]
    try:
        deadline = time.monotonic() + 30
        for port in (primary_port, sentinel_port):
            while True:
                assert all(p.poll() is None for p in procs), [p.returncode for p in procs]
                try:
                    redis.Redis(port=port, socket_timeout=2).ping()
                    raise AssertionError(f"port {port} answered a client without the password")
                except redis.exceptions.AuthenticationError:
                    break
                except redis.exceptions.ConnectionError:
                    assert time.monotonic() < deadline, "the servers did not start"
                    time.sleep(0.05)
        assert redis.Redis(port=primary_port, password=password, socket_timeout=2).ping()
        # The sentinel reaches the primary with the password (a wrong one: 'disconnected', no INFO).
        watcher = redis.Redis(port=sentinel_port, password=password, socket_timeout=2)
        while True:
            master = watcher.sentinel_master("cinq")
            if master["is_master"] and not master["is_disconnected"] and master["info-refresh"] > 0:
                break
            assert time.monotonic() < deadline, master
            time.sleep(0.1)
        assert watcher.sentinel_get_master_addr_by_name("cinq") == (b"127.0.0.1", primary_port)
        assert oct((tmp_path / "s" / "sentinel.conf").stat().st_mode & 0o777) == "0o600"  # its copy
    finally:
        for p in procs:
            p.kill()
            p.wait()
