"""The chat protocol: text in, commands out (parse.py); words out, in the reader's language
(text.py, i18n/)."""
