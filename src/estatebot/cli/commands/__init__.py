"""The commands of ``estatebot``, one module each (registered in :mod:`estatebot.cli.main`).

Each imports what it needs when it runs, so ``estatebot --help`` stays fast.
"""
