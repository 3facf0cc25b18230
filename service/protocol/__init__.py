"""The chat protocol: where each command may be sent (chats.py), text in, commands out (parse.py);
words out, in the reader's language (text.py, i18n/)."""
