"""From a model message to a complete candidate module.

1. The thinking of a reasoning model is set apart (`providers.thinking`): drafts in it are never taken.
2. The code is taken from the answer (`extract`): its best Python block, a unified diff, or the Python in
   its plain text. A diff is applied (`patch`) to the module it was written against.
3. It is merged into the original module (`merge`): top-level definitions replace the same-named ones,
   new imports and helpers are added, and everything else in the original is kept byte for byte. A
   script is replaced whole instead.
4. What would only fail later, or silently do nothing, is refused now with a reason the next feedback
   shows: a target renamed (the merge would keep the old one and add an unused new one), a target's
   signature changed, a name used that nothing defines or imports (a dropped import).
5. Programs are identified by a hash of their normalised AST, so comment or layout changes do not count
   as a new candidate.
"""

from __future__ import annotations

import ast
import hashlib
import json
import subprocess
from dataclasses import dataclass

from coderefine.cst_nodes import parses
from coderefine.providers.base import ModelReply
from coderefine.records import Candidate
from coderefine.refine.extract import CandidateRefused, CandidateRejected, defined_names, extract_code, parse_or_reject
from coderefine.refine.merge import MergeResult, merge_definitions
from coderefine.refine.patch import PatchFailed, apply_diff
from coderefine.source import ast_key

# finish_reason values that mean the model ended its answer itself (servers differ: llama.cpp says "stop",
# some proxies "eos" or "end_turn").
NORMAL_FINISH = frozenset({"stop", "eos", "end_turn", "stop_sequence"})


def sha256(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


@dataclass(frozen=True)
class AnswerSetting:
    """What an answer is read against: the module, the run's targets, and the versions a diff may be
    written against besides the original (the best verified candidate, the last attempt)."""

    original: str
    targets: tuple[str, ...] = ()
    allowed: tuple[str, ...] | None = None  # None: any definition may change; else only these (--function)
    whole_module: bool = False
    filename: str | None = None  # the module's file name, to pick its part of a multi-file diff
    diff_bases: tuple[tuple[str, str], ...] = ()  # (what it is, its code), tried after the original


def candidate_from_reply(reply: ModelReply, setting: AnswerSetting, origin: str) -> Candidate:
    """A model's reply as a candidate, or CandidateRejected with the reason the feedback is shown."""
    split = reply.split()
    if reply.finish_reason == "length":
        if split.open or (split.thinking and not split.answer.strip()):
            raise CandidateRejected(
                "the answer was cut off at the model's length limit while it was still thinking "
                f"({reply.reasoning_tokens or '~' + str(len(split.thinking) // 4)} thinking tokens, no answer yet; "
                "finish_reason=length): think less, or raise the server's output limit"
            )
        raise CandidateRejected("the answer was cut off at the model's length limit (finish_reason=length)")
    if not split.answer.strip() and split.thinking:
        raise CandidateRejected(
            "the model only thought: its answer after the thinking was empty; answer after thinking, with the "
            "code in a ```python block"
        )
    return build_candidate(
        split.answer.replace("\r\n", "\n"),
        setting.original,
        setting.allowed,
        whole_module=setting.whole_module,
        origin=origin,
        finish_reason=reply.finish_reason,
        targets=setting.targets,
        filename=setting.filename,
        diff_bases=setting.diff_bases,
    )


def build_candidate(
    message: str,
    original: str,
    allowed: tuple[str, ...] | None,
    *,
    whole_module: bool,
    origin: str,
    finish_reason: str | None = None,
    targets: tuple[str, ...] = (),
    filename: str | None = None,
    diff_bases: tuple[tuple[str, str], ...] = (),
) -> Candidate:
    """Raises CandidateRejected when the message cannot become a candidate.

    `allowed` names the only functions that may change (from --function); None allows every definition.
    `finish_reason` tells an unclosed last block cut off by the length limit from one whose closing fence a
    stop sequence ate ("stop": complete if it parses)."""
    targets = targets or (allowed or ())
    extracted = extract_code(message, targets, original)
    notes = list(extracted.notes)
    code = extracted.code
    if extracted.truncated:
        if finish_reason not in NORMAL_FINISH:
            raise CandidateRejected("the code block is not closed: the answer looks truncated")
        if not extracted.diff and not parses(code):
            raise CandidateRejected("the code block is not closed and does not parse: the answer looks truncated")
        notes.append(
            "the last code block was not closed; the answer ended normally and the code parses, so it was taken"
        )
    if extracted.diff:
        code, applied_to = _apply(code, original, filename, diff_bases)
        notes.append(f"the answer was a unified diff, applied to {applied_to}")
    elif not extracted.fenced and not parses(code):
        raise CandidateRejected("the answer has no code block, and as a whole it is not Python")
    parse_or_reject(code, "the proposed code")
    if whole_module:
        merged = MergeResult(code=code, changed=("<module>",), notes=())
    else:
        merged = merge_definitions(original, code, allowed, targets)
        _refuse_renamed(code, original, targets, merged)
        _refuse_new_signatures(original, merged, targets)
    parse_or_reject(merged.code, "the merged module")
    if not whole_module and merged.changed:
        _refuse_undefined(original, merged.code)
    return Candidate(
        code=merged.code,
        origin=origin,
        message=message,
        extracted=code,
        sha256=sha256(merged.code),
        ast_key=ast_key(merged.code),
        changed=merged.changed,
        notes=(*notes, *merged.notes),
    )


def _apply(diff: str, original: str, filename: str | None, bases: tuple[tuple[str, str], ...]) -> tuple[str, str]:
    """The module a diff makes, from the first version it applies to (the original first)."""
    first: PatchFailed | None = None
    for label, base in (("the original", original), *bases):
        try:
            return apply_diff(diff, base, filename), label
        except PatchFailed as exc:
            first = first or exc
    assert first is not None
    raise CandidateRejected(f"the diff does not apply to the original: {first}; answer with the whole function instead")


def _changes_a_target(changed: tuple[str, ...], targets: tuple[str, ...]) -> bool:
    return any(name in targets or any(t.startswith(f"{name}.") for t in targets) for name in changed)


def _refuse_renamed(proposed: str, original: str, targets: tuple[str, ...], merged: MergeResult) -> None:
    """A target answered under another name: the merge would keep the old one and drop the new as unused."""
    if not targets or _changes_a_target(merged.changed, targets):
        return
    known = defined_names(original)
    new = sorted(name for name in defined_names(proposed) if name not in known and "." not in name)
    if new:
        listed = ", ".join(f"`{t}`" for t in targets[:4])
        raise CandidateRefused(
            f"the answer defines {', '.join(f'`{n}`' for n in new[:3])}, which the module does not have, and "
            f"leaves {listed} as {'it was' if len(targets) == 1 else 'they were'}: a renamed target is not "
            f"used; keep the name{'s' if len(targets) > 1 else ''} {listed}"
        )


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, str]:
    """How callers see a function, and its parameters as written. The shape compared: how many positional
    parameters, the defaults, the keyword-only names, whether it takes *args and **kwargs. Positional
    parameters may be renamed (a readability change); a call that passed one by keyword is caught by the
    replay of the recorded calls, not here."""
    args = node.args
    shape = (
        len(args.posonlyargs),
        len(args.args),
        [ast.dump(d) for d in args.defaults],
        args.vararg is not None,
        [a.arg for a in args.kwonlyargs],
        [ast.dump(d) if d is not None else None for d in args.kw_defaults],
        args.kwarg is not None,
    )
    plain = ast.arguments(
        posonlyargs=[ast.arg(a.arg) for a in args.posonlyargs],
        args=[ast.arg(a.arg) for a in args.args],
        vararg=ast.arg(args.vararg.arg) if args.vararg else None,
        kwonlyargs=[ast.arg(a.arg) for a in args.kwonlyargs],
        kw_defaults=args.kw_defaults,
        kwarg=ast.arg(args.kwarg.arg) if args.kwarg else None,
        defaults=args.defaults,
    )
    return repr(shape), f"({ast.unparse(plain)})"


def _functions(code: str) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found[f"{node.name}.{item.name}"] = item
    return found


def _refuse_new_signatures(original: str, merged: MergeResult, targets: tuple[str, ...]) -> None:
    before, after = _functions(original), _functions(merged.code)
    for name in targets:
        if name not in merged.changed and name.split(".")[0] not in merged.changed:
            continue
        if name not in before or name not in after:
            continue
        (old, old_text), (new, new_text) = _signature(before[name]), _signature(after[name])
        if old != new:
            raise CandidateRefused(
                f"the answer changes the signature of `{name}` from {old_text} to {new_text}; callers and the "
                "recorded calls rely on it: keep its parameters and defaults as they are"
            )


def _refuse_undefined(original: str, merged: str) -> None:
    """Names the candidate uses that nothing defines or imports (a dropped import), found by ruff's F821;
    names the original already lacked are not the answer's doing."""
    new = sorted(_undefined(merged) - _undefined(original))
    if new:
        listed = ", ".join(f"`{name}`" for name in new[:4])
        raise CandidateRefused(
            f"the code uses {listed}, which nothing in the module defines or imports; add the import"
            f"{'s' if len(new) > 1 else ''}"
        )


def _undefined(code: str) -> set[str]:
    """Undefined names per ruff (F821); empty when ruff cannot run (the tests will tell instead)."""
    from ruff.__main__ import find_ruff_bin

    try:
        done = subprocess.run(
            [str(find_ruff_bin()), "check", "--isolated", "--select", "F821", "--output-format", "json", "-"],
            input=code,
            capture_output=True,
            text=True,
            timeout=30,
        )
        findings = json.loads(done.stdout or "[]")
    except (OSError, subprocess.SubprocessError, ValueError, FileNotFoundError):
        return set()
    names = set()
    for finding in findings if isinstance(findings, list) else ():
        message = str(finding.get("message", ""))
        if message.startswith("Undefined name `"):
            names.add(message.split("`")[1])
    return names


def original_candidate(code: str) -> Candidate:
    return Candidate(
        code=code,
        origin="original",
        message="",
        extracted=code,
        sha256=sha256(code),
        ast_key=ast_key(code),
    )
