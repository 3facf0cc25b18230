"""A Matrix bridge for cinq: a bot account on any homeserver, speaking to cinq only through the webhook
contract (``adapters/webhook/openapi.json``).  See ``bridges/matrix/README.md``."""
