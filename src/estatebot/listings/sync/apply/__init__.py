"""Applying: exactly a plan's operations sent, journaled, backed up, resumable; restore and undo.

:mod:`.phases` (``apply_plan``) hands each phase the result of the one before, with the options
of :mod:`.apply_options`: :mod:`.stale_check` judges :mod:`.send_tasks` against the pull,
:mod:`.guards_again` refuses a plan file that deletes or re-identifies more than allowed,
:mod:`.backup` saves the before-image, :mod:`.send_list` makes what is sent and :mod:`.sender`
sends it, re-checked by :mod:`.recheck`; :mod:`.held_lock` lets one apply at a time write a
journal; :mod:`.journal`, :mod:`.backup` and :mod:`.restore` keep what is needed to resume and
put listings back; :mod:`.run_record` reads a run's plan, journal
and backup and :mod:`.undo` plans its exact reverse, an ordinary plan applied like any other.
"""
