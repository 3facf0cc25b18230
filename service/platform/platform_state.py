"""What a chat adapter must remember about the platform, kept in Redis (never in the process).

The service's event streams know nothing of platform message ids; an adapter that edits one message
in place ("the table of T in chat C is message 812") needs somewhere to keep that, and it must
survive a restart.  This module owns those keys, so that adapters hold no Redis key names.  Every
key here is derived and disposable: losing it costs an extra message, never a game.

Keys (``<p>`` is the settings' key prefix; their names are built by :class:`~service.store.keys.Keys`;
each key has its own hash tag, per chat or per table, so that the module works on Redis Cluster
without cross-slot calls):

- ``<p>pf:{<platform>:<chat>}:msg:<table>:<slot>`` — a hash, the :class:`MessageRef` of one slot
  (a message edited in place): ``mid`` platform message id (absent until sent), ``rank`` the
  version and kind of the content wanted there, ``want`` that content (JSON), ``sent`` a digest of
  the content last sent (identical edits are skipped).  Expires after :data:`REF_TTL_S`.
- ``<p>pf:{<platform>}:dirty`` — a hash of the slots whose wanted content may not be sent yet
  (field ``<chat>|<table>|<slot>``, value its rank): an adapter that acknowledges an outbox message
  before the edit went out (to merge edits) sends these again when it restarts.
- ``<p>pf:{<platform>}:once:<key>`` — a flag set once (``mark_once``), with a TTL.
- ``<p>pf:{<platform>:<chat>}:prefs`` — a hash of a chat's preferences (``locale``) and where it moved:
  ``moved_to`` (a group that became another chat, e.g. a Telegram supergroup) and ``was`` (the chat id
  the service knows the room by, on the chat it became).
- ``<p>pf:{<platform>:<table>}:chats`` — the group chats that show a table (a set).
- ``<p>pf:{<platform>:<table>}:names`` — the seat names a group lobby showed last (a JSON list).
- ``<p>pf:{<platform>:<chat>}:stats`` — a hash of a group's counters: ``matches``, ``win:<user id>``
  (a person's wins) and ``name:<user id>`` (the name they last played a match of the group under).
  Fields ``win:<name>`` counted before wins went by user id have no ``name:`` beside them and are
  ignored (they split renamed people, merged namesakes and counted AI players).
- ``<p>pf:{<platform>:<chat>}:counted`` — the tables a group's counters counted (a sorted set by time,
  trimmed after :data:`ONCE_TTL_S`), so that a redelivered end of match counts nothing.

A chat that moves (a Telegram group upgraded to a supergroup gets a new id) keeps its room id in the
service: tables, indexes and every key here stay under the first id, and the adapter addresses the
platform with the new one (:meth:`PlatformState.record_move`, :meth:`moved_to`, :meth:`room_chat`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from service.store.decoding import as_text, as_text_or_none
from service.store.keys import Keys

REF_TTL_S = 14 * 24 * 3600
_WANT = """
local cur = redis.call('HGET', KEYS[1], 'rank')
local na, nb = tonumber(ARGV[1]), tonumber(ARGV[2])
if cur then
  local a, b = string.match(cur, '(-?%d+),(-?%d+)')
  a, b = tonumber(a), tonumber(b)
  if a > na or (a == na and b > nb) then return 0 end
end
redis.call('HSET', KEYS[1], 'rank', ARGV[1] .. ',' .. ARGV[2], 'want', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""
ONCE_TTL_S = 30 * 24 * 3600
# Count a finished match in a group once: KEYS stats hash, counted set; ARGV table, now, horizon,
# n (the number of winners), the winners' user ids, then (user id, name) pairs of the people seated.
_COUNT = """
if redis.call('ZADD', KEYS[2], 'NX', ARGV[2], ARGV[1]) == 0 then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
redis.call('HINCRBY', KEYS[1], 'matches', 1)
local n = tonumber(ARGV[4])
for i = 5, 4 + n do redis.call('HINCRBY', KEYS[1], 'win:' .. ARGV[i], 1) end
for i = 5 + n, #ARGV, 2 do redis.call('HSET', KEYS[1], 'name:' .. ARGV[i], ARGV[i + 1]) end
return 1
"""



@dataclass(frozen=True)
class MessageRef:
    """A slot: the platform message that shows a table in a chat, and what it should show."""

    message_id: int | None = None
    rank: tuple[int, int] = (-1, 0)
    want: dict[str, Any] | None = None
    sent: str | None = None


class PlatformState:
    """A tiny API over the keys above; ``keys`` is the process's one key layout (the bootstrap's,
    :func:`service.ops.runtime.build`)."""

    def __init__(self, redis: Any, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys

    # -- message slots ------------------------------------------------------------------------------

    async def get_message_ref(self, platform: str, chat: str, table: str, slot: str) -> MessageRef | None:
        """The slot's reference, or None when nothing was ever shown there."""
        raw = await self.redis.hgetall(self.keys.pf_message(platform, chat, table, slot))
        if not raw:
            return None
        d = {as_text(k): as_text(v) for k, v in raw.items()}
        mid = d.get("mid")
        rank = tuple(int(x) for x in (d.get("rank") or "-1,0").split(","))
        raw_want = d.get("want")
        want = json.loads(raw_want) if raw_want else None
        return MessageRef(message_id=int(mid) if mid else None, rank=(rank[0], rank[1]), want=want,
                          sent=d.get("sent"))

    async def want_content(self, platform: str, chat: str, table: str, slot: str, rank: tuple[int, int],
                           content: dict[str, Any]) -> bool:
        """Record ``content`` as what the slot should show, unless it already wants something newer.

        ``rank`` orders contents (the table version, then a tie-breaker); a content with a lower rank
        than the one recorded is refused (False), so that a late message never replaces a newer one.
        The same rank again (a redelivery) is accepted: the sender skips it if it was sent already.
        """
        key = self.keys.pf_message(platform, chat, table, slot)
        # Compare and set in one call: a room's view and a hand of one version may race.
        if not await self.redis.eval(_WANT, 1, key, rank[0], rank[1], json.dumps(content), REF_TTL_S):
            return False
        # Dirty until the sender clears it: a restart in between sends it again.
        await self.redis.hset(self.keys.pf_dirty(platform), f"{chat}|{table}|{slot}", f"{rank[0]},{rank[1]}")
        return True

    async def set_message_ref(self, platform: str, chat: str, table: str, slot: str, *,
                              message_id: int | None, sent: str | None) -> None:
        """Record which platform message shows the slot, and the digest of what it shows now."""
        key = self.keys.pf_message(platform, chat, table, slot)
        mapping: dict[str, Any] = {"sent": sent or ""}
        if message_id is not None:
            mapping["mid"] = message_id
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(key, mapping=mapping)
        pipe.expire(key, REF_TTL_S)
        await pipe.execute()

    async def forget_message(self, platform: str, chat: str, table: str, slot: str) -> None:
        """Drop the slot's message id (it was deleted or cannot be edited): the next content is sent anew."""
        await self.redis.hdel(self.keys.pf_message(platform, chat, table, slot), "mid", "sent")

    async def clear_dirty(self, platform: str, chat: str, table: str, slot: str,
                          rank: tuple[int, int]) -> None:
        """The slot's content of ``rank`` went out (a newer wanted content stays noted)."""
        field = f"{chat}|{table}|{slot}"
        current = as_text_or_none(await self.redis.hget(self.keys.pf_dirty(platform), field))
        if current is not None and tuple(int(x) for x in current.split(",")) <= rank:
            await self.redis.hdel(self.keys.pf_dirty(platform), field)

    async def dirty_slots(self, platform: str) -> list[tuple[str, str, str]]:
        """The slots noted by :meth:`mark_dirty` and not cleared: ``(chat, table, slot)``."""
        fields = await self.redis.hkeys(self.keys.pf_dirty(platform))
        return [tuple(as_text(f).split("|", 2)) for f in fields]  # type: ignore[misc]

    # -- once ---------------------------------------------------------------------------------------

    async def mark_once(self, platform: str, key: str, ttl_s: int = ONCE_TTL_S,
                        owner: str | None = None) -> bool:
        """True the first time ``key`` is marked (within ``ttl_s``), False ever after; with an
        ``owner``, True to that owner again: the retry of the update that marked it (its process may
        have died after the mark, before it handed the update on) must get through, another must not."""
        if owner is None:
            return bool(await self.redis.set(self.keys.pf_once(platform, key), 1, nx=True, ex=ttl_s))
        mine = f"o:{owner}"
        held = await self.redis.set(self.keys.pf_once(platform, key), mine, nx=True, ex=ttl_s, get=True)
        return held is None or as_text(held) == mine

    async def unmark(self, platform: str, key: str) -> None:
        """Forget a mark (an action that was marked but could not be handed on)."""
        await self.redis.delete(self.keys.pf_once(platform, key))

    # -- chat preferences ---------------------------------------------------------------------------

    async def chat_locale(self, platform: str, chat: str) -> str | None:
        """The language chosen for a chat (``/lang`` in a group), if any."""
        return as_text_or_none(await self.redis.hget(self.keys.pf_prefs(platform, chat), "locale"))

    async def set_chat_locale(self, platform: str, chat: str, locale: str) -> None:
        """Choose the language of a chat."""
        await self.redis.hset(self.keys.pf_prefs(platform, chat), "locale", locale)

    # -- chats that move ----------------------------------------------------------------------------

    async def record_move(self, platform: str, old: str, new: str) -> bool:
        """The chat ``old`` is now ``new`` on the platform (a group upgraded to a supergroup): the
        service goes on knowing the room as ``old`` (see the module docstring).  True the first time."""
        room = await self.room_chat(platform, old)
        first = bool(await self.redis.hsetnx(self.keys.pf_prefs(platform, old), "moved_to", new))
        await self.redis.hset(self.keys.pf_prefs(platform, new), "was", room)
        return first

    async def moved_to(self, platform: str, chat: str) -> str | None:
        """The chat id a room's chat has on the platform now, if it moved (None: it did not)."""
        return as_text_or_none(await self.redis.hget(self.keys.pf_prefs(platform, chat), "moved_to"))

    async def room_chat(self, platform: str, chat: str) -> str:
        """The chat id the service knows a platform chat by (the first id of a chat that moved)."""
        return as_text_or_none(await self.redis.hget(self.keys.pf_prefs(platform, chat), "was")) or chat

    async def room_table(self, platform: str, chat: str) -> str | None:
        """The table a room shows now (the service's derived index, :meth:`service.store.keys.Keys.room`)."""
        return as_text_or_none(await self.redis.get(self.keys.room(platform, chat)))

    # -- tables shown in group chats ----------------------------------------------------------------

    async def add_table_chat(self, platform: str, table: str, chat: str) -> None:
        """Remember that a group chat shows ``table``."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.sadd(self.keys.pf_chats(platform, table), chat)
        pipe.expire(self.keys.pf_chats(platform, table), REF_TTL_S)
        await pipe.execute()

    async def table_chats(self, platform: str, table: str) -> list[str]:
        """The group chats that show ``table``."""
        return sorted(as_text(c) for c in await self.redis.smembers(self.keys.pf_chats(platform, table)))

    async def set_table_names(self, platform: str, table: str, names: list[str]) -> None:
        """Remember the seat names of a table (the lobby shows them; the match views do not)."""
        await self.redis.set(self.keys.pf_names(platform, table), json.dumps(names), ex=REF_TTL_S)

    async def table_names(self, platform: str, table: str) -> list[str] | None:
        """The seat names remembered for a table, if any."""
        raw = await self.redis.get(self.keys.pf_names(platform, table))
        return json.loads(raw) if raw else None

    # -- group counters -----------------------------------------------------------------------------

    async def record_group_match(self, platform: str, chat: str, table: str, winners: list[str],
                                 names: dict[str, str] | None = None, now: float | None = None) -> bool:
        """Count a finished match of ``table`` in a group, once (a redelivery, or a second process,
        counts nothing): the check and the counters change in one atomic call.  ``winners`` are user
        ids (AI players are not people: leave them out, the match still counts); ``names`` the
        display name of each person seated (user id -> name), kept as their latest."""
        now = time.time() if now is None else now
        stats = self.keys.pf_stats(platform, chat)
        counted = self.keys.pf_counted(platform, chat)
        people = {**{w: w for w in winners}, **(names or {})}  # every winner gets a name
        pairs = [x for user, name in sorted(people.items()) for x in (user, name)]
        return bool(await self.redis.eval(_COUNT, 2, stats, counted, table, now, now - ONCE_TTL_S,
                                          len(winners), *winners, *pairs))

    async def group_stats(self, platform: str, chat: str) -> tuple[int, dict[str, tuple[str, int]]]:
        """A group's finished matches, and each person's latest name and wins (by user id; people
        without a win are left out, and so are the ``win:<name>`` fields of before, see above)."""
        found = await self.redis.hgetall(self.keys.pf_stats(platform, chat))
        raw = {as_text(k): as_text(v) for k, v in found.items()}
        wins: dict[str, tuple[str, int]] = {}
        for k, v in raw.items():
            user = k[4:]
            if k.startswith("win:") and f"name:{user}" in raw:
                wins[user] = (raw[f"name:{user}"], int(v))
        return int(raw.get("matches", 0)), wins
