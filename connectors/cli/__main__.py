"""``python -m connectors.cli ...``: the ``reasoner`` command without the installed script."""

import sys

from connectors.cli import main

sys.exit(main())
