"""``python -m adapters.webhook [dead-letters ...]``."""

import sys

from adapters.webhook.cli import run
from service.ops import logs
from service.ops.settings import Settings

logs.configure(Settings().log_level)
sys.exit(run(sys.argv[1:]))
