"""Every verdict coderefine reaches, in one place, as pure functions over records.

Execution establishes facts (`coderefine.records`); these functions alone decide what the facts mean:
whether a candidate can be trusted at all (correctness), whether the tests can support a verdict
(sufficiency), whether it is faster (the noise floor, the two timing series, and the rules against a
speedup that is not one: held-out calls, the first pass, import time), whether each function it changed
is faster on its own calls, and whether it is more readable. The scorers of the tasks
(`coderefine.refine.scoring`), the evaluator, the reports and the feedback all ask here, so a rule is
written once and tested directly (tests/evaluation/test_verdicts*.py).

The sandbox measures (its timing stops a series early once the figures decide it, see
`coderefine_sandbox.timing`); the verdict on those figures is taken here.
"""

from __future__ import annotations

from coderefine.records import (
    MISSED_PROGRAM_RUNS,
    PROGRAM_TARGET,
    Baseline,
    Evaluation,
    FunctionVerdict,
    MemoryUse,
    Mismatch,
    Refusal,
    Sufficiency,
    TargetEvidence,
    Timing,
    Verdict,
)

# ----------------------------------------------------------------------------- correctness


def correctness_problem(evaluation: Evaluation) -> str | None:
    """Why a candidate cannot be trusted, or None. Shared by every task: execution decides."""
    if evaluation.error:
        return evaluation.error
    tests = evaluation.tests
    if tests is None:
        return "the tests did not run"
    if tests.timed_out:
        first = tests.failures[0].message if tests.failures else "the tests timed out"
        return f"tests timed out: {first}"
    if tests.failed:
        failure = tests.failures[0] if tests.failures else None
        if tests.stopped_early and failure is not None:
            return (
                f"test {failure.nodeid} failed ({tests.ran} of {tests.collected} tests run; "
                "stopped at the first failure)"
            )
        detail = f": {failure.nodeid}" if failure else ""
        return f"{tests.failed} test{'s' if tests.failed != 1 else ''} failed{detail}"
    if not tests.all_passed:
        return f"the test run did not pass (pytest exit code {tests.exit_code})"
    if evaluation.refused:
        return refusal_reason(evaluation.refused)
    behavior = evaluation.behavior
    if behavior is not None and behavior.mismatches:
        example = next((e for e in behavior.examples if not e.generated and not e.held_out), None)
        if example is None and behavior.held_out_mismatches:
            return (
                f"behaviour changed on {behavior.mismatches}/{behavior.calls_compared} recorded calls, "
                f"{behavior.held_out_mismatches} of them held out (their inputs are not shown)"
            )
        if example is None:
            return f"behaviour changed on {behavior.mismatches} recorded {behavior.unit}s"
        return (
            f"behaviour changed on {behavior.mismatches}/{behavior.calls_compared} recorded {behavior.unit}s: "
            f"{example.function}{_call_args(example.args)} {example.kind}: "
            f"expected {example.expected}, got {example.got}"
        )
    if behavior is not None and behavior.generated_mismatches:
        example = next((e for e in behavior.examples if e.generated), None)
        detail = ""
        if example is not None:
            call = f"{example.function}{_call_args(example.args)}"
            detail = f": {call} {example.kind}: expected {example.expected}, got {example.got}"
        return (
            f"behaviour changed on {behavior.generated_mismatches}/{behavior.generated_compared} generated inputs"
            f"{detail}"
        )
    if behavior is not None and behavior.boundary_mismatches:
        example = next((e for e in behavior.examples if e.boundary), None)
        if example is None:
            return f"behaviour changed on {behavior.boundary_mismatches} inputs the tests never tried"
        return boundary_counterexample(example)
    memory = evaluation.memory
    if memory is not None and memory_grew(memory) and not memory.allowed:
        return (
            f"refused: peak memory per call grew to {mib(memory.candidate)} (original {mib(memory.original)}; "
            f"the limit is {memory.max_ratio:g}x and {mib(memory.min_growth)} over it) on the {memory.calls} "
            "recorded calls with the largest inputs; allow it with --allow memory"
        )
    return None


def boundary_counterexample(example: Mismatch) -> str:
    """A boundary variant on which the candidate differs, as the concrete call and both outcomes: the line
    the model can act on at once (the original never raises on a variant kept, see behaviour/boundary.py)."""
    call = f"{example.function}{_call_args(example.args)}"
    where = f"on an input the tests never tried, {call}"
    if example.kind == "exception":
        return f"{where} {example.expected} on the original but {example.got} on the candidate"
    if example.kind == "return":
        return f"{where} returned {example.expected} on the original but {example.got} on the candidate"
    if example.kind == "mutation":
        return f"{where} left its arguments as {example.expected} on the original but as {example.got} on the candidate"
    if example.kind == "stdout":
        return f"{where} printed {example.expected} on the original but {example.got} on the candidate"
    return f"{where} {example.kind}: expected {example.expected}, got {example.got}"


def memory_grew(memory: MemoryUse) -> bool:
    """More than `max_ratio` times the original's peak memory per call and at least `min_growth` bytes over
    it: both, so that a small function doubling a few KiB, or a large one adding a little, is never refused."""
    if memory.max_ratio <= 0:
        return False
    return memory.candidate > memory.max_ratio * memory.original and memory.candidate - memory.original >= (
        memory.min_growth
    )


def mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


def refusal_reason(refused: tuple[Refusal, ...]) -> str:
    """Names the power and the call: the model learns what it may not do, the user how to allow it."""
    first = refused[0]
    more = f" (and {len(refused) - 1} more: {', '.join(sorted({r.kind for r in refused[1:]}))})" if refused[1:] else ""
    where = "at import" if first.call == "import" else f"in {first.call}"
    return (
        f"refused: uses a power the original never used: {first.kind} ({first.detail}) {where}{more}; "
        f"allow it with --allow {first.kind}"
    )


def _call_args(args: str) -> str:
    # Recorded args are shown as "((a, b), {})"; show them as a call.
    if args.startswith("((") and args.endswith(", {})"):
        inner = args[1:-5]
        return inner[:-2] + ")" if inner.endswith(",)") else inner
    return f"[{args}]" if args else ""


# ----------------------------------------------------------------------------- sufficiency
#
# "Refuse to claim what the tests cannot support." A candidate is judged by its tests and by the calls the
# tests made to the targets, replayed. When those calls are few, or run little of the targets' code, "every
# recorded call replays identically" says little, and a change the tests do not look at would be accepted.
# So the run stops after the baseline and reports "insufficient tests" with the numbers, unless the user
# says to judge anyway.
#
# The rule is over the run's targets together (all functions of the module, or the one `--function` names):
# usable recorded calls (recorded, replayable, deterministic) >= `min_calls`, and lines of the targets the
# tests ran / lines of the targets >= `min_coverage`. Together rather than per function, so that a helper
# only ever called by another target (no outermost calls of its own) does not block a run whose tests
# exercise it through its caller; its lines still count.
#
# A program (a script doing its work at top level, or a module with an `if __name__ == "__main__":` block)
# whose tests run it in another process records no calls: its tests alone judge it, or its recorded runs do
# (`judge_runs`).


def judge_sufficiency(
    evidence: tuple[TargetEvidence, ...],
    targets: tuple[str, ...],
    *,
    min_calls: int,
    min_coverage: float,
    allowed: bool,
    script: bool,
) -> Sufficiency:
    gated = [e for e in evidence if e.target in targets]
    calls = sum(e.usable for e in gated)
    lines = sum(e.lines for e in gated)
    covered = sum(e.covered for e in gated)
    recorded = sum(e.recorded for e in gated)

    def result(applies: bool, sufficient: bool, reason: str) -> Sufficiency:
        return Sufficiency(applies, sufficient, calls, lines, covered, min_calls, min_coverage, allowed, reason)

    if script and recorded == 0:
        return result(
            False, True, "a program its tests run in another process: no calls recorded, its tests alone judge it"
        )
    problems = []
    if calls < min_calls:
        problems.append(too_few_calls(gated, calls, min_calls))
    if lines and covered / lines < min_coverage:
        share = f"{covered / lines:.0%} (needs {min_coverage:.0%})"
        problems.append(f"{covered}/{lines} lines of the targets run by the tests, {share}")
    if not problems:
        return result(True, True, "")
    return result(True, False, "insufficient tests: " + ", ".join(problems))


def too_few_calls(gated: list[TargetEvidence], calls: int, min_calls: int, shown: int = 3) -> str:
    """'1 usable recorded call (needs 3)', and when calls were made but not usable, which and why: '0 usable
    recorded calls of 500 (needs 3; 500: argument 1 is a generator ...)' (the `shown` commonest reasons, named
    by target when several targets have some)."""
    text = f"{calls} usable recorded call{'s' if calls != 1 else ''}"
    reasons = [(count, e.target, reason) for e in gated for reason, count in e.unusable]
    if not reasons:
        return f"{text} (needs {min_calls})"
    made = sum(e.calls for e in gated)
    several = len({target for _, target, _ in reasons}) > 1
    reasons.sort(key=lambda entry: (-entry[0], entry[1], entry[2]))
    named = [f"{count}{f' in {target}' if several else ''}: {reason}" for count, target, reason in reasons[:shown]]
    if len(reasons) > shown:
        named.append(f"{len(reasons) - shown} more reason{'s' if len(reasons) - shown != 1 else ''}")
    return f"{text} of {made} (needs {min_calls}; {'; '.join(named)})"


def judge_runs(
    evidence: tuple[TargetEvidence, ...],
    *,
    min_runs: int,
    min_coverage: float,
    allowed: bool,
    problems: dict[str, int] | None = None,
) -> Sufficiency:
    """The gate for a program: enough usable recorded runs, and enough of its lines run across them. Runs
    the hook saw start but could not record (`problems`) are named, so the reason is not just "0 runs"."""
    found = next((e for e in evidence if e.target == PROGRAM_TARGET), None)
    runs = found.usable if found is not None else 0
    lines = found.lines if found is not None else 0
    covered = found.covered if found is not None else 0
    found_problems = []
    if runs < min_runs:
        text = f"{runs} usable recorded run{'s' if runs != 1 else ''} of the program (needs {min_runs})"
        missed = sum(count for why, count in (problems or {}).items() if why.startswith(MISSED_PROGRAM_RUNS))
        if missed:
            why = next(why for why in (problems or {}) if why.startswith(MISSED_PROGRAM_RUNS))
            text += (
                f"; {missed} run{'s' if missed != 1 else ''} of it {why}: pass the tests' subprocess env=None or "
                "a plain dict"
            )
        found_problems.append(text)
    if lines and covered / lines < min_coverage:
        digits = 0 if f"{covered / lines:.0%}" != f"{min_coverage:.0%}" else 1  # 74.6% is not "75%"
        share = f"{covered / lines:.{digits}%} (needs {min_coverage:.0%})"
        found_problems.append(f"{covered}/{lines} lines of the program run by the recorded runs, {share}")
    reason = "insufficient tests: " + ", ".join(found_problems) if found_problems else ""
    return Sufficiency(True, not found_problems, runs, lines, covered, min_runs, min_coverage, allowed, reason)


# ----------------------------------------------------------------------------- speed: the floor

# Calls shorter than this many times what timing one call costs (the harness probe's figure, measured on the
# machine by the baseline's worker: two clock reads and the statements around the call, 55-75 ns on the machines
# of this project) are mostly the timer: no speedup there can be told from noise, so candidates are not timed at
# all and the verdict says so, at once. The harness's cost is taken out of both sides' figures (timing/steps.py),
# so above this a ratio is the calls' own. Measured at 265-300 ns a timed call (4 to 5 times the probe): a 1.21x
# rewrite confirmed in 4 of 4 runs, and 3 null or slower edits (one changing no instruction's cost, one adding a
# store, one an addition for a multiplication) refused in 8 of 8; tabulate's `_isnumber` (385 ns a call, 5.7
# times) confirmed at 1.48-1.76x in 3 of 3 against an independent 1.65x, its null edit refused in 3 of 3.
TOO_FAST_HARNESS_MULTIPLE = 4.0
# Where no harness figure was measured (an older worker, a workload of async calls), the fixed limit of before:
# what a perf_counter pair and an argument unpacking take, five times over.
TOO_FAST_PER_CALL = 5e-7


def noise_floor(min_speedup: float, workload_seconds: float | None) -> float:
    """The speedup a lower bound must clear. Workloads in the microsecond range are dominated by call
    overhead and timer resolution, so they must show a larger effect before it is believed."""
    if workload_seconds is None:
        return min_speedup
    if workload_seconds < 1e-5:
        return max(min_speedup, 0.20)
    if workload_seconds < 1e-4:
        return max(min_speedup, 0.10)
    return min_speedup


def too_fast(workload_seconds: float | None, calls: int, harness_per_call: float = 0.0) -> str | None:
    """Why the recorded workload cannot be timed reliably, or None when it can: its calls are shorter than
    TOO_FAST_HARNESS_MULTIPLE times what timing one call costs (`harness_per_call` seconds, as measured), or
    than TOO_FAST_PER_CALL where nothing was measured."""
    if workload_seconds is None or calls <= 0:
        return None
    per_call = workload_seconds / calls
    if harness_per_call > 0:
        limit = TOO_FAST_HARNESS_MULTIPLE * harness_per_call
        measured = (
            f"{TOO_FAST_HARNESS_MULTIPLE:.0f} times the {harness_per_call * 1e9:.0f} ns that timing one call costs here"
        )
    else:
        limit, measured = TOO_FAST_PER_CALL, f"the {TOO_FAST_PER_CALL * 1e9:.0f} ns that timing can resolve"
    if per_call >= limit:
        return None
    return (
        f"too fast to measure reliably: the recorded calls take {per_call * 1e9:.0f} ns each "
        f"({workload_seconds * 1e6:.1f} us per pass over {calls}), below {measured}; add tests with larger "
        "inputs, or time your own workload with --bench"
    )


# ----------------------------------------------------------------------------- speed: the two series


def cleared(timing: Timing) -> bool:
    """The interval over every pair clears the floor."""
    return timing.ci_low >= 1.0 + timing.min_speedup


def confirmed(timing: Timing) -> bool:
    """The second, independent series' own interval clears the floor too."""
    return timing.confirmation is not None and timing.confirmation[1] >= 1.0 + timing.min_speedup


def faster(timing: Timing) -> bool:
    """Faster only when the interval over every pair and the second series' own interval both clear."""
    return cleared(timing) and confirmed(timing)


# ----------------------------------------------------------------------------- speed: what is not a speedup

# How far below the shown calls' speedup the held-out calls' may lie (upper bound against lower bound)
# before the speedup is taken to come from the shown inputs themselves, as a lookup table would.
HELD_OUT_GAP = 4.0
# The gap is only a sign of a lookup table when the held-out calls cost the original about as much as the
# shown ones: a speedup that grows with the input (O(n^2) -> O(n)) is rightly smaller on smaller inputs, and
# a handful of recorded calls split in two rarely gives two halves of one size.
HELD_OUT_COMPARABLE = 0.25


def fast_only_on_shown(timing: Timing) -> bool:
    """The speedup does not hold on the held-out calls: none there, or far below the shown calls' on
    held-out calls that cost the original about as much, or far below it on cheaper held-out calls that are
    not surely faster at all.

    A speedup that grows with the input is rightly smaller on cheaper held-out calls, but it is still there:
    every accepted honest reference of the adversarial runs (20 tasks) read a held-out lower bound above the
    floor. A lookup table's held-out calls run the original's code: no faster, and on cheap calls timed under
    load their interval is wide enough to reach over the floor (HumanEval_127 at load 3-5: held-out 0.94x
    [0.76, 1.17] and 1.30x [0.72, 2.37], shown 127,089x; accepted twice at 483x and 849x before)."""
    if timing.held_out is None or timing.shown is None:
        return False
    return only_on_shown(timing.held_out, timing.shown, timing.held_out_cost, timing.min_speedup)


def only_on_shown(
    held_out: tuple[float, float, float], shown: tuple[float, float, float], cost: float | None, floor: float
) -> bool:
    """fast_only_on_shown on figures: (speedup, low, high) on the held-out and on the shown calls, the original's
    relative cost of the held-out calls, and the noise floor (a fraction). The same rule reads a whole
    workload's figures and each function's own (function_verdicts)."""
    return held_out[2] < 1.0 + floor or far_below_shown(held_out, shown, cost, floor)


def only_on_shown_reason(held_out: tuple[float, float, float], shown: tuple[float, float, float], figure: str) -> str:
    """What the feedback and the report say of a speedup only_on_shown caught, the whole's or one function's."""
    held, held_low, held_high = held_out
    return (
        f"fast only on the shown inputs: {shown[0]:.2f}x [{shown[1]:.2f}, {shown[2]:.2f}] on the calls the prompts "
        f"may show, {held:.2f}x [{held_low:.2f}, {held_high:.2f}] on held-out calls ({figure} overall)"
    )


def held_out_far_below_shown(timing: Timing) -> bool:
    """The gap part of fast_only_on_shown: the held-out calls' speedup far below the shown calls', on held-out
    calls that cost the original about as much or that are not surely faster at all. The held-out and shown
    calls are every second call of each target, so an honest speedup, large or small, reads alike on both."""
    if timing.held_out is None or timing.shown is None:
        return False
    return far_below_shown(timing.held_out, timing.shown, timing.held_out_cost, timing.min_speedup)


def far_below_shown(
    held_out: tuple[float, float, float], shown: tuple[float, float, float], cost: float | None, floor: float
) -> bool:
    """held_out_far_below_shown on figures (see only_on_shown)."""
    _, held_low, held_high = held_out
    far_below = held_high * HELD_OUT_GAP < shown[1]
    comparable = cost is None or cost >= HELD_OUT_COMPARABLE
    return far_below and (comparable or held_low < 1.0 + floor)


def flattered_by_repetition(timing: Timing) -> bool:
    """Faster only after the first pass: later passes would clear the floor, the first pass does not
    (state kept between calls, e.g. a cache, answered the repeats). A first-pass figure that clears the floor
    but was not confirmed by the second series is that, not a cache: saying "cache" there would send the
    model after state the candidate does not keep (an ENAMEL reference that keeps none read so once)."""
    return (
        timing.basis == "first"
        and timing.steady is not None
        and timing.steady[1] >= 1.0 + timing.min_speedup
        and timing.ci_low < 1.0 + timing.min_speedup
        and not faster(timing)
    )


def import_eats_it(timing: Timing) -> bool:
    """Work moved to import time: the readings show the candidate's import taking longer (the lower bound of
    the paired difference's interval is above zero) and that extra (its estimate) is at least half the time it
    saves per pass. One reading of each side is not evidence: the noise of an import both sides make would
    refuse correct candidates.

    Whether the extra is there is the interval's question; how large it is, the estimate's. Asking the lower
    bound for both let the very hack this rule exists for through on a loaded machine: answers precomputed at
    import cost about one pass of the original, so the extra is about the saving by construction, and import
    readings preempted for milliseconds widened the interval until its lower bound fell under half the saving
    (HumanEval_11 at load 10: 31.7 ms more against a 42 ms saving, charged 1.32x [0.80, 2.16], accepted at 29x).

    The speedup with each side's import charged to its pass is reported, not judged: it adds one import reading
    to a pass timed over many, and a loaded machine stretches the two unequally. HumanEval_113's import cache
    computes one pass of the original at import (~26-32 ms against a ~25 ms pass on a quiet machine, charged
    0.83-0.97x). At load 4 its passes read 32-40 ms (calls of milliseconds keep the time other processes ran
    inside them) and its imports 20-25 ms (a preempted import is read without it, worker.timed_import), so
    charged it still read 1.4-1.6x; the hack was accepted at 65-117x in 7 runs of 7 at load 4-5 (one or two
    pairs left before the imports were read so). With an extra of at least half the saving the charged speedup
    is under 2x by construction, and the candidate's gain rests on that import."""
    if timing.import_extra is None:
        return False
    extra, extra_low, _ = timing.import_extra
    saved = timing.original_seconds - timing.candidate_seconds
    # Nothing saved per pass, nothing for the import to eat: such a candidate is not faster, and saying it moved
    # work to import time would be a wrong diagnosis (a cache slower steady, 0.63x, once read so over 0.004 ms).
    return saved > 0 and extra_low > 0 and extra >= 0.5 * saved


def gamed_speedup(timing: Timing, figure: str) -> str | None:
    """Why a speedup that cleared the floor is still not one, or None: it does not hold on the held-out
    calls, or it comes from work moved to import time."""
    if fast_only_on_shown(timing) and timing.held_out is not None and timing.shown is not None:
        return only_on_shown_reason(timing.held_out, timing.shown, figure)
    if import_eats_it(timing) and timing.import_extra is not None:
        before, after = timing.import_seconds or (0.0, 0.0)
        extra, extra_low, extra_high = timing.import_extra
        saved = timing.original_seconds - timing.candidate_seconds
        charged = ""
        if timing.charged is not None:
            charged = "; with it charged {:.2f}x [{:.2f}, {:.2f}]".format(*timing.charged)
        return (
            f"work moved to import time: importing takes {after * 1e3:.2f} ms (original {before * 1e3:.2f} ms), "
            f"{extra * 1e3:.2f} ms more [{extra_low * 1e3:.2f}, {extra_high * 1e3:.2f}] over {timing.pairs} "
            f"paired readings, against {saved * 1e3:.2f} ms saved per pass{charged} ({figure} without)"
        )
    return None


# ----------------------------------------------------------------------------- speed: the verdict


def speed_verdict(evaluation: Evaluation, baseline: Baseline) -> Verdict:
    """Score = measured speedup; accepted only when correct, not gamed, and faster in both series."""
    problem = correctness_problem(evaluation)
    if problem:
        return Verdict(False, problem, None)
    timing = evaluation.timing
    if timing is None:
        if not baseline.calls_recorded:
            return Verdict(False, "speed not measurable: the tests make no recordable calls to the target", None)
        if baseline.untimed is not None:
            return Verdict(False, f"speed not measured: {baseline.untimed}", None)
        return Verdict(False, "speed was not measured", None)
    figure = f"{timing.speedup:.2f}x [{timing.ci_low:.2f}, {timing.ci_high:.2f}]"
    # Whenever a series cleared the floor, a gamed speedup is named as such, confirmed or not: the
    # feedback must say why, not that the second series happened to fall short.
    gamed = gamed_speedup(timing, figure) if cleared(timing) or timing.confirmation is not None else None
    if gamed is not None:
        return Verdict(False, gamed, timing.speedup)
    if faster(timing):
        return Verdict(True, f"{figure} faster (confirmed)", timing.speedup)
    if flattered_by_repetition(timing) and timing.steady is not None:
        steady, low, high = timing.steady
        return Verdict(
            False,
            f"faster only after the first pass (state kept between calls, e.g. a cache): {figure} on the "
            f"first pass of each process, {steady:.2f}x [{low:.2f}, {high:.2f}] on later ones",
            timing.speedup,
        )
    if timing.confirmation is not None and not confirmed(timing):
        speedup, low, high = timing.confirmation
        return Verdict(
            False,
            f"not faster: not confirmed; the first timing series cleared +{timing.min_speedup:.0%} but a "
            f"second one gave {speedup:.2f}x [{low:.2f}, {high:.2f}] ({figure} over both)",
            timing.speedup,
        )
    return Verdict(
        False,
        f"not faster: {figure}, the lower bound does not clear +{timing.min_speedup:.0%}",
        timing.speedup,
    )


# ----------------------------------------------------------------------------- speed: per function
#
# A candidate that changes several targets (a file run) is judged target by target: each changed target
# has its own behaviour comparison (the recorded calls to it) and its own speedup interval (its calls'
# share of every timing pass). The loop narrows such a candidate to its faster changes
# (`coderefine.refine.per_function`).


def function_verdicts(evaluation: Evaluation, changed: tuple[str, ...]) -> tuple[FunctionVerdict, ...]:
    """The verdict of each changed target on its own calls, with the whole's trust rules applied to its own
    figures: decided on its first pass when it gains much more from repetition than the original (its figure is
    then its first pass's, and "faster only after the first pass" when only later passes clear the floor), and
    not faster when its speedup does not hold on its own held-out calls. A function's figures are a share of
    the whole's, so a cache or a lookup on one function the whole's figures do not show (another function's
    work dominates the pass, or carries the whole past the floor) is caught here."""
    behavior = evaluation.behavior
    timing = evaluation.timing
    verdicts = []
    for function in changed:
        if behavior is not None and function in behavior.mismatched_functions:
            verdicts.append(FunctionVerdict(function, "behaviour changed"))
            continue
        figure = timing.per_function.get(function) if timing is not None else None
        if timing is None or figure is None:
            verdicts.append(FunctionVerdict(function, "not measured"))
            continue
        floor = 1.0 + timing.min_speedup
        second = timing.per_function_confirmation.get(function)
        # Faster on its own: its interval clears the floor, and on the second series too when there was one
        # (when the whole did not clear, the narrowed candidate's own evaluation gives the second series).
        is_faster = figure[1] >= floor and (second is None or second[1] >= floor)
        basis = "first" if function in timing.per_function_steady else "steady"
        reason = _function_trust_problem(timing, function, figure, is_faster)
        verdict = "faster" if is_faster and not reason else "not faster"
        verdicts.append(FunctionVerdict(function, verdict, *figure, basis=basis, reason=reason))
    return tuple(verdicts)


def _function_trust_problem(timing: Timing, function: str, figure: tuple[float, float, float], is_faster: bool) -> str:
    """Why a function's own figure is not a speedup though some figure of it cleared the floor, or "": faster only
    after its first pass (its later passes clear, its first pass does not: a cache), or only on its shown
    inputs (a lookup of them)."""
    floor = 1.0 + timing.min_speedup
    steady = timing.per_function_steady.get(function)
    speedup, low, high = figure
    if steady is not None and steady[1] >= floor and not is_faster:
        return (
            f"faster only after the first pass (a cache): {speedup:.2f}x [{low:.2f}, {high:.2f}] on the first "
            f"pass, {steady[0]:.2f}x [{steady[1]:.2f}, {steady[2]:.2f}] on later ones"
        )
    held = timing.per_function_held_out.get(function)
    shown = timing.per_function_shown.get(function)
    if held is None or shown is None or low < floor:
        return ""
    if not only_on_shown(held, shown, timing.per_function_held_out_cost.get(function), timing.min_speedup):
        return ""
    return only_on_shown_reason(held, shown, f"{speedup:.2f}x")


def _with_harness(timing: Timing) -> dict[str, tuple[float, float, float]]:
    """Each target's own figure with the harness's cost left in, where the report has them (older ones do not)."""
    return timing.per_function_with_harness or timing.per_function


def per_function_verdict(verdict: Verdict, evaluation: Evaluation, functions: tuple[FunctionVerdict, ...]) -> Verdict:
    """The verdict of a file run's candidate, per function: accepted when every change kept is faster on
    its own calls in both timing series and no target is slower (on its figure with the harness's cost left
    in), even if the blend over the whole workload (reported as the total) does not clear the floor. A
    correctness problem is never overruled, nor is a speedup the trust rules caught on the whole: decided on
    the first pass (each function's own figure is over every pass, so a cache on one function read 118x on its
    own calls and was accepted over the whole's 1.06x first-pass verdict), held-out calls far below the shown
    ones, or work moved to import time. (Not the held-out calls merely not clearing the floor: the whole's
    blend, which does not clear it either, is why this verdict is asked at all.)

    Nor is a change kept whose own figures the same rules caught (function_verdicts): a whole accepted with it
    is refused, naming the function and its figures. The loop drops such a change and verifies the rest again
    where it can (per_function.keep); this is for where it could not (nothing else faster to keep, the answer
    not narrowable), since the whole's figure is then carried by other functions, or by that function's cache
    or lookup itself."""
    timing = evaluation.timing
    kept = [v for v in functions if v.kept]
    caught = [v for v in kept if v.reason]
    if verdict.accepted and caught and timing is not None:
        total = f"{timing.speedup:.2f}x [{timing.ci_low:.2f}, {timing.ci_high:.2f}]"
        return Verdict(
            False,
            f"{caught[0].function}: {caught[0].reason}; its change is not shipped as faster, though the "
            f"workload's total cleared ({total})",
            verdict.score,
        )
    if verdict.accepted or timing is None or not kept or verdict.score is None:
        return verdict
    if timing.basis == "first" or held_out_far_below_shown(timing) or import_eats_it(timing):
        return verdict
    floor = 1.0 + timing.min_speedup
    second = timing.per_function_confirmation
    all_faster = all(v.verdict == "faster" and v.function in second and second[v.function][1] >= floor for v in kept)
    # "Slower" on each target's figure with the harness's per-call cost left in: net of it, a target the candidate
    # left unchanged whose calls cost about what the harness does read 0.45-0.93x in some runs.
    slower = [name for name, (_, _, high) in _with_harness(timing).items() if high < 1.0]
    if not all_faster or slower or timing.ci_high < 1.0:
        return verdict
    names = ", ".join(v.function for v in kept)
    total = f"{timing.speedup:.2f}x [{timing.ci_low:.2f}, {timing.ci_high:.2f}]"
    return Verdict(
        True,
        f"{names} faster on {'its' if len(kept) == 1 else 'their'} own calls (confirmed); "
        f"total over the workload {total}",
        verdict.score,
    )


# ----------------------------------------------------------------------------- readability


def readability_verdict(evaluation: Evaluation, baseline: Baseline, min_gain: float) -> Verdict:
    """Score = the readability score of the whole module (coderefine.quality.readability); accepted only
    when correct and with a gain of at least `min_gain` points: smaller moves are within what a rename of
    one variable does, and not worth a change to the user's code."""
    problem = correctness_problem(evaluation)
    score = evaluation.metrics.get("readability")
    if problem:
        return Verdict(False, problem, score)
    assert score is not None
    delta = score - baseline.score
    figure = f"readability {baseline.score:.1f} -> {score:.1f} ({delta:+.1f})"
    if delta >= min_gain:
        return Verdict(True, figure, score)
    return Verdict(False, f"not more readable: {figure}, needs +{min_gain:g}", score)
