"""Browser hardening of the web table (issue 32, 8), on a real deployment.

Every answer (the page, its script, a missing file, the API, refusals) carries a CSP whose
``frame-ancestors`` lets Telegram's web clients frame the Mini App and nobody else, ``nosniff`` and
``Referrer-Policy: no-referrer``; a POST whose body is not declared JSON is refused with 415 in the
person's language and acts on nothing; the page's script sends the link in a header, never in an
API address.
"""

from __future__ import annotations

import json
import re

import aiohttp

from tests.security.deployment import deployed
from tests.security.test_feeds import ana_at_a_table


def _hardened(headers: aiohttp.typedefs.LooseHeaders, where: str) -> None:
    csp = headers.get("Content-Security-Policy", "")  # type: ignore[union-attr]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp, (where, csp)
    ancestors = next(p for p in csp.split(";") if p.strip().startswith("frame-ancestors"))
    assert "https://web.telegram.org" in ancestors and "https://*.telegram.org" in ancestors, where
    assert "*" not in ancestors.replace("https://*.telegram.org", ""), (where, ancestors)
    assert headers.get("X-Content-Type-Options") == "nosniff", where  # type: ignore[union-attr]
    assert headers.get("Referrer-Policy") == "no-referrer", where  # type: ignore[union-attr]


async def test_every_answer_is_hardened_and_only_json_is_posted(tmp_path):
    async with deployed(tmp_path) as d:
        table, k, _ = await ana_at_a_table(d)
        assert d.http is not None
        for path in ("/", f"/t?k={k}", "/static/table.js", "/static/table.css", "/static/nope.js",
                     "/api/i18n?lang=es", "/api/state", f"/replay/{table}", f"/api/replay/{table}",
                     "/api/replay/nope", "/nope"):
            async with d.http.get(d.web + path) as r:
                await r.read()
                _hardened(r.headers, path)
        async with d.http.get(f"{d.web}/api/state", headers={"Authorization": f"Link {k}"}) as r:
            assert r.status == 200
            _hardened(r.headers, "/api/state with a link")
        # The page's script sends the link in a header: no API address of it carries one.
        async with d.http.get(f"{d.web}/static/table.js") as r:
            script = await r.text()
        assert not re.search(r"/api/\w+\?k=|[?&]k=\$\{encodeURIComponent\(S\.k", script)
        assert "new EventSource" not in script
        assert "authorization: `Link ${S.k}`" in script

        before = await d.table(table)
        # (one of Ana's real action tokens when her hand offers one: a JSON body would play it)
        pressable = [m for m in d.platform.to_user("ana") if m["table"] == table and m["buttons"]]
        token = pressable[-1]["buttons"][0]["token"] if pressable else "not-a-token"
        for ctype, data in (("text/plain", json.dumps({"token": token, "id": "abcdefgh1234"})),
                            ("application/x-www-form-urlencoded", f"token={token}&id=abcdefgh1234"),
                            (None, json.dumps({"token": token}))):
            headers = {"Authorization": f"Link {k}"}
            if ctype:
                headers["Content-Type"] = ctype
            async with d.http.post(f"{d.web}/api/move?lang=es", data=data.encode(), headers=headers) as r:
                body = await r.json(content_type=None)
                assert r.status == 415, (ctype, r.status)
                assert body["title"] == "unsupported_media_type" and "JSON" in body["detail"]
                assert "tiene que ser" in body["detail"]  # in the person's language
                _hardened(r.headers, f"415 {ctype}")
        async with d.http.post(f"{d.web}/api/session", data=b"init_data=x",
                               headers={"Content-Type": "application/x-www-form-urlencoded"}) as r:
            assert r.status == 415
        after = await d.table(table)
        assert after.version == before.version  # nothing was played
