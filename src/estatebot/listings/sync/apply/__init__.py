"""Applying: exactly a plan's operations sent, journaled, backed up, resumable; restore and undo.

:mod:`.phases` (``apply_plan``) runs the phases with the options of :mod:`.apply_options`;
:mod:`.sender` sends :mod:`.send_tasks`; :mod:`.stale_check` and :mod:`.recheck` guard against
edits made meanwhile, :mod:`.guards_again` against a plan file that deletes or re-identifies
more than allowed; :mod:`.held_lock` lets one apply at a time write a journal;
:mod:`.journal`, :mod:`.backup`, :mod:`.restore` and :mod:`.sent_values`
keep what is needed to resume and put listings back; :mod:`.run_record` reads a run's plan, journal
and backup and :mod:`.undo` plans its exact reverse, an ordinary plan applied like any other.
"""
