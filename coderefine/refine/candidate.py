"""From a model message to a complete candidate module.

1. The code is taken from the message (`extract`): its first fenced Python block, else the whole message.
2. It is merged into the original module (`merge`): top-level definitions replace the same-named ones,
   new imports and helpers are added, and everything else in the original is kept byte for byte. A
   script is replaced whole instead.
3. Programs are identified by a hash of their normalised AST, so comment or layout changes do not count
   as a new candidate.
"""

from __future__ import annotations

import hashlib

from coderefine.cst_nodes import parses
from coderefine.records import Candidate
from coderefine.refine.extract import CandidateRejected, extract_code, has_fence, parse_or_reject
from coderefine.refine.merge import MergeResult, merge_definitions
from coderefine.source import ast_key


def sha256(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


def build_candidate(
    message: str, original: str, allowed: tuple[str, ...] | None, *, whole_module: bool, origin: str
) -> Candidate:
    """Raises CandidateRejected when the message cannot become a candidate.

    `allowed` names the only functions that may change (from --function); None allows every definition.
    """
    extracted = extract_code(message)
    if extracted.truncated:
        raise CandidateRejected("the code block is not closed: the answer looks truncated")
    if not has_fence(message) and not parses(extracted.code):
        raise CandidateRejected("the answer has no code block, and as a whole it is not Python")
    parse_or_reject(extracted.code, "the proposed code")
    if whole_module:
        merged = MergeResult(code=extracted.code, changed=("<module>",), notes=())
    else:
        merged = merge_definitions(original, extracted.code, allowed)
    parse_or_reject(merged.code, "the merged module")
    return Candidate(
        code=merged.code,
        origin=origin,
        message=message,
        extracted=extracted.code,
        sha256=sha256(merged.code),
        ast_key=ast_key(merged.code),
        changed=merged.changed,
        notes=extracted.notes + merged.notes,
    )


def original_candidate(code: str) -> Candidate:
    return Candidate(
        code=code,
        origin="original",
        message="",
        extracted=code,
        sha256=sha256(code),
        ast_key=ast_key(code),
    )
