"""``python -m adapters.webhook [dead-letters ...]``."""

import sys

from adapters.webhook.cli import run
from service.foundation import logs
from service.foundation.settings import Settings

logs.configure(Settings().log_level)
sys.exit(run(sys.argv[1:]))
