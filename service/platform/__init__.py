"""The platform side, outbox -> chats: the outbox reader, delivery per platform, what an adapter must
remember (platform_state.py), and the webhook's inbound bookkeeping (inbound.py)."""
