"""``python -m bridges.matrix``: run the bridge with the settings from the environment."""

from bridges.matrix.app import main

raise SystemExit(main())
