"""Many chatbots at once: a manifest of chatbots, one sealed plan each, one reviewed fleet run.

The room sits above :mod:`estatebot.chat` and :mod:`estatebot.listings`, because a fleet both
syncs listings and tests chatbots; the command line's ``estatebot fleet`` drives it.
"""
