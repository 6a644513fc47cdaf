"""Every answer of the corpus (tests/refine/answer_corpus.py) is either taken as the code it holds or
rejected with the right reason, and no draft from a thinking block is ever taken."""

from __future__ import annotations

import pytest

from coderefine.providers.base import ModelReply
from coderefine.refine.candidate import AnswerSetting, candidate_from_reply
from coderefine.refine.extract import CandidateRejected
from tests.refine.answer_corpus import ANSWERS, ORIGINAL, TARGETS, Answer


def read(answer: Answer):
    reply = ModelReply(content=answer.content, finish_reason=answer.finish_reason, reasoning=answer.reasoning)
    setting = AnswerSetting(ORIGINAL, TARGETS, None, False, "mod.py", answer.diff_bases)
    return candidate_from_reply(reply, setting, "generate")


@pytest.mark.parametrize("answer", ANSWERS, ids=[answer.name for answer in ANSWERS])
def test_each_answer_is_taken_or_rejected_with_its_reason(answer: Answer):
    assert (answer.code is None) != (answer.reason is None), "an entry says one outcome"
    if answer.reason is not None:
        with pytest.raises(CandidateRejected) as rejected:
            read(answer)
        assert answer.reason in str(rejected.value)
        assert "\n" not in str(rejected.value)  # one line, as the feedback and the report show it
        return
    candidate = read(answer)
    assert answer.code in candidate.code, candidate.code
    if answer.also is not None:
        assert answer.also in candidate.code
    assert "THOUGHT_DRAFT" not in candidate.code and "THOUGHT_DRAFT" not in candidate.extracted
    compile(candidate.code, "mod.py", "exec")
    untouched = [line for line in ORIGINAL.splitlines() if line.startswith("class ") or line == "import math"]
    assert all(line in candidate.code.splitlines() for line in untouched)  # the rest of the module is kept


def test_no_thinking_draft_is_ever_taken():
    thinking = [a for a in ANSWERS if "THOUGHT_DRAFT" in a.content + a.reasoning]
    assert len(thinking) >= 12
    for answer in thinking:
        try:
            candidate = read(answer)
        except CandidateRejected:
            continue
        assert "THOUGHT_DRAFT" not in candidate.code


def test_the_corpus_covers_every_shape():
    names = {answer.name.split("-")[0] for answer in ANSWERS}
    assert {"r1", "qwen3", "gpt", "diff", "unclosed", "renamed", "whole", "one", "think"} <= names
    taken = sum(answer.code is not None for answer in ANSWERS)
    assert taken >= 35 and len(ANSWERS) - taken >= 20
