"""What an HTTP adapter keeps in Redis about inbound requests: first answers, and each sender's rate.

:meth:`Admission.admit` decides, in one atomic script (one round trip), what to do with a request:

- a request id (a ``webhook-id``) answered before gets that first answer again and is not acted on
  (``repeat``; the caller compares body digests to recognise an id reused for another body);
- else a sender over its rate is refused (``limited``, with the seconds until a token is there);
- else the caller acts (``first``) and then records its answer (:meth:`Admission.record`).

The answer is recorded only *after* acting succeeded: a request whose acting failed (Redis down or
full at that moment) has no answer on record, so the platform's retry acts.  Acting is idempotent by
the request's command id (:mod:`service.write.gateway`), so a redelivery that arrives while the first
attempt is still acting, or after a crash between acting and recording, acts at most once.

The rate is a token bucket per (platform, sender), shared by every adapter process.  The other
inbound paths, which keep no answers (the web table's moves and sessions, Telegram's updates), ask
the same bucket alone (:meth:`Admission.take`): one person's bucket whichever way they come, and a
refused request costs one round trip and one short answer, never a command.

Redis keys (with the deployment's ``key_prefix``; one hash tag per sender, so that the script's two
keys are in one Redis Cluster slot):

- ``in:{<platform>:<sender>}:<request id>``  string, TTL :data:`ANSWER_TTL_S`: JSON ``{"h": body
  digest, "status": int, "body": {...}}``
- ``rl:{<platform>:<sender>}``               hash ``tokens``, ``ts`` (ms): the token bucket, expiring
  once it would be full again
- ``rl:{<platform>:<sender>}:told``          string, TTL the wait: the sender was told they are
  limited (:meth:`Admission.take`: a path whose answer costs something answers once per wait)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from service.store.decoding import as_text
from service.store.keys import Keys

# As long as the gateway remembers command ids: a platform redelivering later than that is not retrying.
ANSWER_TTL_S = 24 * 3600

# The token bucket (KEYS[2]; ARGV[3..5]: rate /s, burst, now ms), shared by both scripts: returns
# {"limited", wait ms} or takes a token and goes on.
_BUCKET = """
local rate, burst, now = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local t = redis.call('HMGET', KEYS[2], 'tokens', 'ts')
local tokens = tonumber(t[1]) or burst
local ts = tonumber(t[2]) or now
tokens = math.min(burst, tokens + math.max(now - ts, 0) * rate / 1000)
if tokens < 1 then
  local wait = math.ceil((1 - tokens) * 1000 / rate)
  local told = '1'
  if KEYS[3] then
    if redis.call('SET', KEYS[3], '1', 'NX', 'PX', wait) then told = '0' end
  end
  return {'limited', tostring(wait), told}
end
redis.call('HSET', KEYS[2], 'tokens', tostring(tokens - 1))
redis.call('HSET', KEYS[2], 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[2], math.ceil(burst * 1000 / rate) + 1000)
"""

# KEYS: answer, bucket.  ARGV: (unused), (unused), rate /s, burst, now ms.
# Returns {"repeat", earlier answer} | {"limited", wait ms} | {"first", ""}.
_ADMIT = """
local earlier = redis.call('GET', KEYS[1])
if earlier then return {'repeat', earlier} end
""" + _BUCKET + """
return {'first', ''}
"""

# KEYS: (unused), bucket, told.  ARGV as _ADMIT's.  Returns {"limited", wait ms, "0" the first refusal
# of this wait | "1" told already} | {"first", ""}.
_TAKE = _BUCKET + """
return {'first', ''}
"""


@dataclass(frozen=True)
class Answer:
    """The answer given to a request: its status and JSON body, and the digest of the request body."""

    digest: str
    status: int
    body: dict[str, Any]


@dataclass(frozen=True)
class Limited:
    """A request over its sender's rate: a token comes in ``wait_s``; ``told``: an earlier refusal
    of this wait was answered already (a path whose answers cost, a chat message, may stay silent)."""

    wait_s: float
    told: bool


@dataclass(frozen=True)
class Admitted:
    """What to do with a request: act on it (``first``), answer ``earlier`` again (``repeat``), or
    refuse it for ``wait_s`` seconds (``limited``)."""

    kind: Literal["first", "repeat", "limited"]
    earlier: Answer | None = None
    wait_s: float = 0.0


class Admission:
    """First answers by request id, and a token bucket per sender (see the module docstring)."""

    def __init__(self, redis: Any, keys: Keys, rate: float, burst: int, ttl_s: int = ANSWER_TTL_S) -> None:
        self.redis = redis
        self.keys = keys
        self.rate = rate
        self.burst = burst
        self.ttl_s = ttl_s
        # EVALSHA (loaded once, reloaded if Redis forgot it): the script's text is not sent each time.
        self._admit = redis.register_script(_ADMIT)
        self._take = redis.register_script(_TAKE)

    def answer_key(self, platform: str, sender: str, request_id: str) -> str:
        """The key of one request's answer."""
        return self.keys.inbound_answer(platform, sender, request_id)

    def bucket_key(self, platform: str, sender: str) -> str:
        """The key of one sender's token bucket."""
        return self.keys.rate_bucket(platform, sender)

    async def admit(self, platform: str, sender: str, request_id: str, now: float) -> Admitted:
        """Decide on a request (atomically; see the module docstring)."""
        got = await self._admit(
            keys=[self.answer_key(platform, sender, request_id), self.bucket_key(platform, sender)],
            args=["", self.ttl_s, self.rate, self.burst, int(now * 1000)])
        kind, payload = as_text(got[0]), got[1]
        if kind == "repeat":
            d = json.loads(payload)
            return Admitted("repeat", Answer(digest=d["h"], status=int(d["status"]), body=d["body"]))
        if kind == "limited":
            return Admitted("limited", wait_s=int(payload) / 1000)
        return Admitted("first")

    async def take(self, platform: str, sender: str, now: float) -> Limited | None:
        """Take a token of the sender's bucket for a request that keeps no answer: None if there was
        one (act), else how long to wait and whether this is the first refusal of that wait."""
        got = await self._take(keys=[self.bucket_key(platform, sender), self.bucket_key(platform, sender),
                                     self.keys.rate_told(platform, sender)],
                               args=["", "", self.rate, self.burst, int(now * 1000)])
        if as_text(got[0]) != "limited":
            return None
        return Limited(wait_s=int(got[1]) / 1000, told=as_text(got[2]) == "1")

    async def record(self, platform: str, sender: str, request_id: str, answer: Answer) -> None:
        """Remember the answer given to a request that was acted on (a redelivery gets it again)."""
        value = json.dumps({"h": answer.digest, "status": answer.status, "body": answer.body})
        await self.redis.set(self.answer_key(platform, sender, request_id), value, ex=self.ttl_s)
