"""``python -m adapters.telegram``: the Telegram bot alone (workers run elsewhere)."""

import sys

from adapters.telegram import main

sys.exit(main(sys.argv[1:]))
