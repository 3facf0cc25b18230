"""The replayer of a Mini App's ``initData`` (issue 32 #8: "a valid initData is accepted for an hour
and a session lives 6 h").

Telegram signs ``initData`` when someone opens the Mini App and asks servers to check ``auth_date``;
the page trades it for a session at once.  So on a real deployment (``cinq serve``, default web
settings) an ``initData`` signed 15 minutes ago is refused as expired (it was accepted up to an
hour), one signed a minute ago buys a session of at most 2 hours (it was 6), and an operator may
not configure either past its bound (one line at start-up).
"""

from __future__ import annotations

import base64
import json
import time

import pytest
from pydantic import ValidationError

from adapters.web.config import WebSettings
from adapters.web.initdata import (
    MAX_AGE_LIMIT_S,
    MAX_AGE_S,
    SESSION_TTL_LIMIT_S,
    SESSION_TTL_S,
    InitDataError,
    check_init_data,
    sign_init_data,
)
from tests.security.deployment import BOT_TOKEN, deployed, start_role


def _init_data(age_s: float, table: str, user_id: int = 77) -> str:
    user = json.dumps({"id": user_id, "first_name": "Mallory"})
    return sign_init_data(BOT_TOKEN, {"auth_date": str(int(time.time() - age_s)), "user": user,
                                      "start_param": table})


def _expires(link: str) -> float:
    payload = link.split(".")[1]
    return float(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["e"])


def test_the_defaults_follow_telegrams_guidance():
    ws = WebSettings()
    assert ws.init_data_max_age_s == MAX_AGE_S <= 600
    assert ws.session_ttl_s == SESSION_TTL_S <= 2 * 3600
    now = time.time()
    raw = sign_init_data(BOT_TOKEN, {"auth_date": str(int(now - MAX_AGE_S - 5)), "user": '{"id": 1}'})
    with pytest.raises(InitDataError, match="expired"):
        check_init_data(raw, BOT_TOKEN, now)  # the function's own default too
    raw = sign_init_data(BOT_TOKEN, {"auth_date": str(int(now - MAX_AGE_S + 30)), "user": '{"id": 1}'})
    assert check_init_data(raw, BOT_TOKEN, now).user_id == "1"


@pytest.mark.parametrize("field,value", [("init_data_max_age_s", MAX_AGE_LIMIT_S + 1),
                                         ("session_ttl_s", SESSION_TTL_LIMIT_S + 1)])
def test_an_operator_may_not_set_them_past_their_bound(field, value):
    with pytest.raises(ValidationError):
        WebSettings(**{field: value})


def test_a_role_refuses_to_start_with_an_initdata_age_past_its_bound():
    env = {"CINQ_WEB_PUBLIC_URL": "https://cards.example", "CINQ_WEB_BOT_TOKEN": BOT_TOKEN,
           "CINQ_WEB_INIT_DATA_MAX_AGE_S": "86400"}
    rc, out = start_role(["serve"], env)
    lines = [line for line in out.splitlines() if line.strip()]
    assert rc not in (None, 0) and len(lines) == 1, out[-1500:]
    assert lines[0].startswith("cinq: refusing to start: ") and "init_data_max_age_s" in lines[0]


async def test_a_stale_init_data_is_refused_and_a_fresh_one_buys_a_short_session(tmp_path):
    async with deployed(tmp_path) as d:
        await d.say("ana", "/play cinquillo 2")
        hand = await d.platform.wait_for(
            lambda: [m for m in d.platform.to_user("ana") if m["kind"] == "hand"], 30)
        table = hand[-1]["table"]
        for age in (15 * 60, 59 * 60):  # both accepted before (an hour)
            status, body = await d.post(f"{d.web}/api/session", {"init_data": _init_data(age, table)})
            assert status == 401 and "expired" in body, (age, status, body[:300])
        started = time.time()
        status, body = await d.post(f"{d.web}/api/session", {"init_data": _init_data(60, table)})
        assert status == 200, body[:300]
        expires = _expires(json.loads(body)["k"])
        assert started < expires <= time.time() + SESSION_TTL_S + 1  # was 6 h
