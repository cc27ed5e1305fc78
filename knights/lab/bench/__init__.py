"""Application bench: every speed target measured as a ratio against a baseline run
in the same process (``knights bench``, ``make bench``)."""
