"""Applying: exactly a plan's operations sent, journaled, backed up, resumable; and restore.

:mod:`.phases` (``apply_plan``) runs the phases with the options of :mod:`.apply_options`;
:mod:`.sender` sends :mod:`.send_tasks`; :mod:`.stale_check` and :mod:`.recheck` guard against
edits made meanwhile; :mod:`.journal`, :mod:`.backup`, :mod:`.restore` and :mod:`.sent_values`
keep what is needed to resume and undo.
"""
