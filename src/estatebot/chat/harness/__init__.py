"""The chat test harness: batches of questions asked of a chatbot, each answer judged.

Chat test cases: reading them, checking them, and judging an answer against their expectations.

A case is one ``question`` with optional expectations about its answer:

``expect_contains``
    Text that must appear in the answer, case-insensitively. Several values (separated by ``|`` or
    given as a list) must ALL appear.
``expect_not_contains``
    Text that must not appear, case-insensitively; none of several values may appear.
``expect_regex``
    Python regular expressions (``re.IGNORECASE``) that must all match somewhere in the answer. A
    ``|`` at the top level separates patterns; a ``|`` inside a group ``(a|b)`` or a character class
    stays the regex's alternation, and ``\\|`` is a literal pipe.
``expect_no_answer``
    Whether the service must flag the answer as ``noAnswer`` (``true``/``false``, ``yes``/``no``,
    ``1``/``0``, ``on``/``off``, any case).
``max_latency_ms``
    The slowest acceptable answer, in milliseconds.
``max_tokens``
    The most tokens the exchange may use.

Other columns: ``name`` or ``id`` (the case's name, unique; ``name`` wins when both are given) and
``conversation`` (cases sharing one run in order in one chat session). In ``expect_contains`` and
``expect_not_contains``, ``\\|`` is a literal pipe too.

Problems are reported before anything is sent, as :class:`~estatebot.errors.SheetError` (a
``ValueError``) naming the row, column and value. The row is the spreadsheet row number for files
(the header is row 1), the index label for a DataFrame, and the position for a list.

The modules here, in the order a run uses them (the public names, ``run_chat_tests``,
``compare_chat_runs`` and ``ChatTestResults``, are imported from :mod:`estatebot`):

* :mod:`~estatebot.chat.harness.case_cells`: one cell of a cases table as a typed value.
* :mod:`~estatebot.chat.harness.cases`: reading and checking the cases.
* :mod:`~estatebot.chat.harness.checks`: judging an answer against a case's expectations.
* :mod:`~estatebot.chat.harness.running`: asking every case's question.
* :mod:`~estatebot.chat.harness.results`: the results frame and :class:`ChatTestResults`.
* :mod:`~estatebot.chat.harness.comparison`: what changed between two runs.
"""
