"""The domain, pure: who plays (identities.py), what is asked (commands.py), what happened (events.py),
the outbox message (messages.py), signed action tokens (tokens.py), and the table aggregate
(tables/)."""
