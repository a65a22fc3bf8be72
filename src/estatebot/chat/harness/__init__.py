"""The chat test harness: batches of questions asked of a chatbot, each answer judged.

Its public names are imported from :mod:`estatebot.chat.testing` and
:mod:`estatebot.chat.expectations`. The modules here, in the order a run uses them:

* :mod:`~estatebot.chat.harness.cells`: one cell of a cases table as a typed value.
* :mod:`~estatebot.chat.harness.cases`: reading and checking the cases.
* :mod:`~estatebot.chat.harness.checks`: judging an answer against a case's expectations.
* :mod:`~estatebot.chat.harness.running`: asking every case's question.
* :mod:`~estatebot.chat.harness.results`: the results frame and :class:`ChatTestResults`.
* :mod:`~estatebot.chat.harness.comparison`: what changed between two runs.
"""
