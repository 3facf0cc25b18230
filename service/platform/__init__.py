"""The platform side, outbox -> chats: the outbox wire model, delivery per platform, the doorbell, what
an adapter must remember (platform_state.py), and the webhook's inbound bookkeeping (inbound.py)."""
