"""``python -m connectors.mesowest COMMAND ...``: the same as ``reasoner mesowest COMMAND ...``."""

import sys

from connectors.cli import main

sys.exit(main(["mesowest", *sys.argv[1:]]))
