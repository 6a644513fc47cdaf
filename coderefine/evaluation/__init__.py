"""Evaluation: the original's baseline and each candidate run in the sandbox, the runner's reports turned
into records, and every verdict on them (`verdicts.py`). The runner's protocol is imported from
`protocol.py`, the one place the host loads it."""
