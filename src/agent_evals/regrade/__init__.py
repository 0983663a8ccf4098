"""``agent-evals regrade``: a stored eval re-graded with today's kit checks, written beside the old one.

:mod:`.source` reads a stored eval whole (the results database or an ``-o`` file),
:mod:`.rows` re-grades one row from its recorded run record and end state, :mod:`.judge`
asks a live judge again (``--judge``), :mod:`.command` writes and imports the new eval.
"""
