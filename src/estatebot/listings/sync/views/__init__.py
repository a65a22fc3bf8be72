"""How a plan is shown: notebook HTML, tables, a workbook, plots and in-value diffs.

Read through :class:`~.shown_plan.ShownPlan`; nothing that plans or applies imports this room
(an import-linter contract keeps it so).
"""
