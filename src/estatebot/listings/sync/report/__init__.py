"""The apply report: one row per operation of an apply or a restore, and its notebook view.

:mod:`.apply_report` holds :class:`ApplyReport`, :mod:`.outcomes` the names of the outcomes,
:mod:`.report_of_apply` puts an apply's report together, :mod:`.report_html` the view (failures
first).
"""
