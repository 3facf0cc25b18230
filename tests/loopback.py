"""A fake remote party's HTTP server in a test: served on a free loopback port, never a fixed one."""

from __future__ import annotations

from typing import Any

from aiohttp import web


async def serve_post(path: str, handler: Any) -> tuple[web.AppRunner, str]:
    """Serve ``handler`` for POSTs to ``path`` on 127.0.0.1 (a free port); returns the runner (its
    ``cleanup()`` stops it) and the URL of ``path``."""
    app = web.Application()
    app.router.add_post(path, handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}{path}"


class Served:
    """A fake party that serves its ``_callback`` for POSTs to ``path`` on loopback once started."""

    path = "/cinq"
    _runner: web.AppRunner | None = None
    url = ""

    async def _callback(self, request: web.Request) -> web.StreamResponse:
        raise NotImplementedError

    async def start(self) -> str:
        """Serve on a free port; returns the URL to call."""
        self._runner, self.url = await serve_post(self.path, self._callback)
        return self.url

    async def close(self) -> None:
        """Stop serving."""
        if self._runner is not None:
            await self._runner.cleanup()
