"""``python -m connectors.mesowest generate ...``: the mesowest commands without the main CLI."""

import sys

from connectors.mesowest.cli import main

sys.exit(main())
