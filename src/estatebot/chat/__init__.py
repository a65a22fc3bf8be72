"""The chat side: a panel to talk to a chatbot in a notebook, batch tests, and fact checks.

:mod:`.panel` (``ChatPanel``), :mod:`.harness` (``run_chat_tests``, ``compare_chat_runs``),
:mod:`.factcheck` (``fact_check``); :mod:`.textview` shows untrusted text and figures as text.
"""
