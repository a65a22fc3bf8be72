"""``python -m estatebot.cli``: the ``estatebot`` command."""

from estatebot.cli.main import main

main()
