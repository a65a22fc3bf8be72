"""The command line's flags: declared once, shared by the commands that take them.

:mod:`.shared_options` (flags several commands share, and their parsing), :mod:`.option_groups`
(groups of flags declared once), :mod:`.sheet_options` (every ``read_sheet`` option),
:mod:`.plan_options` (planning, showing and applying), :mod:`.exit_options`
(``--detailed-exitcode``).
"""
