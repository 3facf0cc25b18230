"""Links that end (issue 32, 8), on a real deployment: an operator withdraws one link, a person's
links or a table's with ``cinq web revoke`` (then every API call with them is 401 ``revoked``, in the
person's language, and the others still open), and a link stops opening its table a while after the
match ended (``CINQ_WEB_AFTER_END_S``: 401 ``expired``)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

from service.domain.weblinks import issue_link
from tests.security.deployment import PLATFORM, TOKEN_SECRET, Deployment, deployed
from tests.security.sse import open_feed
from tests.security.test_deal_embargo import _play_out
from tests.security.test_feeds import ana_at_a_table


def _link(table: str, user: str | None, ttl: float = 600) -> str:
    return issue_link(TOKEN_SECRET.encode(), table=table, expires=time.time() + ttl,
                      platform=PLATFORM if user else None, user=user)


def _revoke(d: Deployment, *args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "service.ops.cli", "web", "revoke", *args],
                         env=d.environment(), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


async def _state(d: Deployment, k: str) -> tuple[int, str]:
    return await d.get(f"{d.web}/api/state", headers={"Authorization": f"Link {k}"}, lang="es")


async def test_an_operator_revokes_a_link_a_person_and_a_table(tmp_path):
    async with deployed(tmp_path) as d:
        table, k, _ = await ana_at_a_table(d)
        assert (await _state(d, k))[0] == 200
        said = _revoke(d, "--link", f"{d.web}/t?k={k}")
        assert k not in said and "revoked" in said  # (the credential is not printed)
        status, body = await _state(d, k)
        assert status == 401 and "retirado" in body
        assert (await open_feed(d.web_port, k)).status == 401
        status, _ = await d.post(f"{d.web}/api/move", {"token": "x"}, headers={"Authorization": f"Link {k}"})
        assert status == 401
        other = _link(table, "ana", ttl=1200)  # another link of Ana's still opens
        assert (await _state(d, other))[0] == 200
        _revoke(d, "--person", f"{PLATFORM}:ana")
        assert (await _state(d, other))[0] == 401
        bea, room = _link(table, "bea"), _link(table, None)
        assert (await _state(d, bea))[0] == 200 and (await _state(d, room))[0] == 200
        _revoke(d, "--table", table)
        assert (await _state(d, bea))[0] == 401 and (await _state(d, room))[0] == 401
        assert "Traceback" not in d.log()


async def test_a_link_ends_a_while_after_its_match(tmp_path):
    async with deployed(tmp_path, {"CINQ_WEB_AFTER_END_S": "2"}) as d:
        table, k, _ = await ana_at_a_table(d)
        assert (await _state(d, k))[0] == 200
        await _play_out(d, table, ("ana",))
        await asyncio.sleep(3.0)
        status, body = await _state(d, k)
        assert status == 401 and "caducado" in body
        assert (await open_feed(d.web_port, k)).status == 401
        assert (await _state(d, _link(table, None)))[0] == 401
