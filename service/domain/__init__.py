"""The domain, pure: who plays (identities.py), where each command may be sent (chats.py), what is asked
(commands.py), what happened (events.py), signed action tokens (tokens.py), and the table aggregate
(tables/)."""
