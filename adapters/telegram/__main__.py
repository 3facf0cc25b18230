"""``python -m adapters.telegram``: the Telegram bot alone (workers run elsewhere)."""

import sys

from adapters.telegram import run

sys.exit(run(sys.argv[1:]))
