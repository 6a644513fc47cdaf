"""Boundary variants of recorded calls: the same call with one argument moved to an edge of its type.

Pure functions, no type hints needed: each argument is varied by what it is at run time. Empty and
one-element containers, a duplicated element, sorted and reversed order, 0, 1 and a large integer, the empty
string, a one-character string, repeated separators and newlines, non-ASCII text, and None where some recorded
call passed None. An iterator argument (lazy.IteratorArgument) gets an empty and a one-element iterator of its
kind; a function argument is never varied, and is supplied as replay supplies it when another argument is.
What a correct rewrite may legitimately do differently outside the function's domain is kept out by staying
near what the recorded calls passed (SlotFacts): a negative number only where some recorded call passed one,
reordered sequences only where some recorded sequence was not sorted, a newline in a string only where some
recorded string had whitespace. The rest of the domain is the original's to tell: the step that runs the
variants (boundary.py) keeps only those on which the original returns, deterministically and fast.
"""

from __future__ import annotations

import contextlib
import itertools
import pickle
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from coderefine_sandbox.behaviour.lazy import ASYNC_GENERATOR, IteratorArgument

LARGE_INT = 2**64 + 1  # past every fixed-width integer and float's exact range
# "ß".upper() is "SS": a rewrite that assumes one character per character shows. "ﬁ" (a ligature) is "fi" under
# compatibility normalisation (NFKD, NFKC) and itself under NFD or NFC: a rewrite that swaps one form for the
# other shows (inflection's transliterate with NFD for NFKD passed its tests and every recorded call).
NON_ASCII = "ßéﬁ"
SEPARATORS = " ,;:\t|/-_."
NEAR_EMPTY = 2  # empty and one-element variants only where some recorded call passed at most this many elements
# The function's own short string constants (`word.replace("-", "_")`: "-" and "_") are what its code treats
# specially, so text holding them is inside its domain even where no test passed any: inflection's
# `underscore` rewritten to leave dashes alone passed every test and recorded call. Constants up to this long.
CONSTANT_CHARACTERS = 2
PICKLE_PROTOCOL = 4


@dataclass(frozen=True)
class Variant:
    target: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    source: int  # the index of the recorded call it varies
    change: str  # what was varied, e.g. "argument 1: empty list"


@dataclass
class SlotFacts:
    """What the recorded calls of one target passed in one argument slot (a position or a keyword)."""

    none: bool = False  # some call passed None
    negative: bool = False  # some call passed a negative number
    unsorted: bool = False  # some call passed a sequence not in sorted order
    whitespace: bool = False  # some call passed a string holding whitespace
    non_ascii: bool = False  # some call passed a string holding a non-ASCII character
    constants: tuple[str, ...] = ()  # the target's own short string constants (CONSTANT_CHARACTERS)
    smallest: int | None = None  # the fewest elements (characters, items) a call passed; None: none sized
    least: float | None = None  # the least number a call passed; None: no number
    types: set[type] = field(default_factory=set)

    def see(self, value: Any) -> None:
        self.types.add(type(value))
        size = _length(value)
        if size is not None:
            self.smallest = size if self.smallest is None else min(self.smallest, size)
        if value is None:
            self.none = True
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            self.negative |= value < 0
            self.least = value if self.least is None else min(self.least, value)
        elif isinstance(value, str):
            self.whitespace |= any(ch.isspace() for ch in value)
            self.non_ascii |= not value.isascii()
        elif isinstance(value, (list, tuple)):
            self.unsorted |= not _is_sorted(value)


Slot = int | str  # a position in args, or a keyword
Calls = list[tuple[int, str, tuple[Any, ...], dict[str, Any]]]  # (index, target, args, kwargs)


def _is_sorted(items: list[Any] | tuple[Any, ...]) -> bool:
    try:
        return all(not (b < a) for a, b in itertools.pairwise(items))
    except Exception:
        return True  # incomparable elements: their order is not one sorting can change


def _sequence(value: list[Any] | tuple[Any, ...], items: list[Any]) -> Any:
    return items if type(value) is list else tuple(items)


def _near_empty(facts: SlotFacts) -> bool:
    """Whether empty and one-element values are near what the recorded calls passed: some call passed at most
    NEAR_EMPTY elements. Tests that never go below a size (a grid of 3x3 and more, bit strings of 100
    characters) may well be testing a function defined only above it."""
    return facts.smallest is None or facts.smallest <= NEAR_EMPTY


def boundary_values(value: Any, facts: SlotFacts) -> list[tuple[str, Any]]:
    """(what, replacement) for one argument value; empty for types it knows nothing of (objects, bools)."""
    found = [(what, new) for what, new in _edges(value, facts) if _near_empty(facts) or _length(new) not in (0, 1)]
    if value is not None and facts.none:
        found.append(("None", None))
    return [(what, new) for what, new in found if not _same(new, value)]


def _edges(value: Any, facts: SlotFacts) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    kind = type(value)
    # 0 and 1 only within the recorded range (some call passed that little or less): unlike an empty list,
    # 0 is outside the domain of many functions their tests call with 1 or 2 (largest_divisor, factorize,
    # a primality test), where a correct rewrite answers differently or loops.
    least = facts.least
    if kind is int:
        found += [(str(n), n) for n in (0, 1) if least is None or least <= n]
        found.append(("a large integer", LARGE_INT))
        if facts.negative:
            found.append(("-1", -1))
    elif kind is float:
        found += [("0.0", 0.0)] if least is None or least <= 0 else []
        if facts.negative:
            found.append(("-1.0", -1.0))
    elif kind is str:
        found += [("empty string", ""), ("one character", value[:1])]
        if facts.non_ascii:  # a function tested on ASCII alone may be defined for it alone (English letters)
            found.append(("non-ASCII text", value + NON_ASCII))
        separator = next((ch for ch in SEPARATORS if ch in value), None)
        if separator is not None:
            found.append((f"repeated separator {separator!r}", value.replace(separator, separator * 2)))
        if "\n" in value:
            found.append(("repeated newlines", value.replace("\n", "\n\n")))
        elif facts.whitespace:
            found.append(("a newline", value + "\n"))
        middle = len(value) // 2
        for constant in facts.constants:
            if constant not in value and value:
                found.append(
                    (f"the function's constant {constant!r} inserted", value[:middle] + constant + value[middle:])
                )
    elif kind is bytes:
        found += [("empty bytes", b""), ("one byte", value[:1])]
    elif kind in (list, tuple):
        name = kind.__name__
        found.append((f"empty {name}", _sequence(value, [])))
        if value:
            items = list(value)
            found.append((f"one-element {name}", _sequence(value, items[:1])))
            found.append((f"{name} with a duplicate", _sequence(value, items + items[:1])))
            if facts.unsorted and len(items) > 1:
                found.append((f"reversed {name}", _sequence(value, items[::-1])))
                with contextlib.suppress(Exception):  # incomparable elements: no sorted variant
                    found.append((f"sorted {name}", _sequence(value, sorted(items))))
    elif kind in (set, frozenset):
        found.append((f"empty {kind.__name__}", kind()))
        if value:
            found.append((f"one-element {kind.__name__}", kind([next(iter(value))])))
    elif kind is dict:
        found.append(("empty dict", {}))
        if value:
            first = next(iter(value.items()))
            found.append(("one-item dict", dict([first])))
    elif kind is IteratorArgument and value.kind != ASYNC_GENERATOR:
        # An iterator of the same kind over fewer of the items the target took: supplied afresh as replay
        # supplies one (the step records what the original takes from it). An async generator is awaited only
        # in async calls, which are not varied.
        if value.items:
            found.append((f"empty {value.kind}", IteratorArgument(value.kind, [], False)))
        if len(value.items) > 1:
            found.append((f"one-element {value.kind}", IteratorArgument(value.kind, value.items[:1], False)))
    return found


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _slots(args: tuple[Any, ...], kwargs: dict[str, Any], skip_first: bool) -> Iterator[tuple[Slot, Any]]:
    for position, value in enumerate(args):
        if position or not skip_first:  # a method's first argument is its instance (or class): left as is
            yield position, value
    yield from kwargs.items()


def _slot_name(slot: Slot) -> str:
    return f"argument {slot + 1}" if isinstance(slot, int) else f"{slot}="


def slot_facts(calls: Calls, constants: dict[str, tuple[str, ...]] | None = None) -> dict[tuple[str, Slot], SlotFacts]:
    facts: dict[tuple[str, Slot], SlotFacts] = {}
    for _, target, args, kwargs in calls:
        for slot, value in _slots(args, kwargs, "." in target):
            facts.setdefault((target, slot), SlotFacts(constants=(constants or {}).get(target, ()))).see(value)
    return facts


def string_constants(code: Any) -> tuple[str, ...]:
    """A function's short non-blank string constants (its code's and the code nested in it, not its
    docstring), in order of appearance."""
    found: list[str] = []
    stack = [code]
    while stack:
        current = stack.pop(0)
        for constant in current.co_consts:
            if isinstance(constant, str) and 0 < len(constant) <= CONSTANT_CHARACTERS and constant.strip():
                if constant not in found:
                    found.append(constant)
            elif hasattr(constant, "co_consts"):
                stack.append(constant)
    return tuple(found)


def tied_slots(calls: Calls) -> dict[str, frozenset[Slot]]:
    """Per target, the slots whose values have one length in every recorded call (two strings XORed
    character by character, two lists zipped): a variant that changes one of their lengths leaves the
    function's domain, so their lengths change together or not at all."""
    lengths: dict[str, dict[Slot, list[int]]] = {}
    counts: dict[str, int] = {}
    for _, target, args, kwargs in calls:
        counts[target] = counts.get(target, 0) + 1
        for slot, value in _slots(args, kwargs, "." in target):
            if isinstance(value, (str, bytes, list, tuple)):
                lengths.setdefault(target, {}).setdefault(slot, []).append(len(value))
    tied: dict[str, frozenset[Slot]] = {}
    for target, by_slot in lengths.items():
        full = {slot: seen for slot, seen in by_slot.items() if len(seen) == counts[target]}
        # the slots with the same lengths in every call as some other slot; all empty says nothing
        group = frozenset(
            slot
            for slot, seen in full.items()
            if any(other != slot and full[other] == seen for other in full) and any(seen)
        )
        if len(group) > 1:
            tied[target] = group
    return tied


def _length(value: Any) -> int | None:
    if isinstance(value, IteratorArgument):
        return len(value.items)  # the items the target took: the size it worked on
    return len(value) if isinstance(value, (str, bytes, list, tuple, set, frozenset, dict)) else None


def _joint(
    target: str, args: tuple[Any, ...], kwargs: dict[str, Any], index: int, slots: frozenset[Slot]
) -> list[Variant]:
    """The tied slots' lengths changed together: all empty, all cut to their first element."""
    found = []
    for what, cut in (("empty", 0), ("one element", 1)):
        new_args, new_kwargs = list(args), dict(kwargs)
        for slot in slots:
            value = args[slot] if isinstance(slot, int) else kwargs[slot]
            new = value[:cut]
            if isinstance(slot, int):
                new_args[slot] = new
            else:
                new_kwargs[slot] = new
        names = ", ".join(_slot_name(slot) for slot in sorted(slots, key=str))
        found.append(Variant(target, tuple(new_args), new_kwargs, index, f"{names}: {what} together"))
    return found


def derive(
    calls: Calls, budget: int, domain: Calls | None = None, constants: dict[str, tuple[str, ...]] | None = None
) -> list[Variant]:
    """Up to `budget` distinct variants of the calls (index, target, args, kwargs), none equal to a recorded
    call. What is near the recorded domain is read off `domain` (every recorded call, held-out ones included:
    facts such as the smallest size reveal no input), default the calls themselves. Taken round-robin over
    the targets, and within a target in rounds over the calls (the first edge of each call's first argument,
    of its second, ..., then the next edge), so that a small budget still tries the empty and one-element
    cases of every target and argument before duplicates and reorderings."""
    domain = calls if domain is None else domain
    facts = slot_facts(domain, constants)
    tied = tied_slots(domain)
    seen = {_key(target, args, kwargs) for _, target, args, kwargs in [*domain, *calls]}
    per_target: dict[str, list[list[Variant]]] = {}
    for index, target, args, kwargs in calls:
        together = tied.get(target, frozenset())
        if together and all(_near_empty(facts[(target, slot)]) for slot in together):
            per_target.setdefault(target, []).append(_joint(target, args, kwargs, index, together))
        for slot, value in _slots(args, kwargs, "." in target):
            options = [
                _replace(target, args, kwargs, index, slot, what, new)
                for what, new in boundary_values(value, facts[(target, slot)])
                # a tied slot keeps its length alone (reordered, or None where None was passed)
                if slot not in together or new is None or _length(new) == _length(value)
            ]
            per_target.setdefault(target, []).append(options)
    queues = [_rounds(lists) for lists in per_target.values()]
    chosen: list[Variant] = []
    while queues and len(chosen) < budget:
        for queue in list(queues):
            variant = next(queue, None)
            while variant is not None:
                key = _key(variant.target, variant.args, variant.kwargs)
                if key is not None and key not in seen:
                    seen.add(key)
                    chosen.append(variant)
                    break
                variant = next(queue, None)
            if variant is None:
                queues.remove(queue)
            if len(chosen) >= budget:
                break
    return chosen


def _rounds(lists: list[list[Variant]]) -> Iterator[Variant]:
    depth = max((len(options) for options in lists), default=0)
    for round_ in range(depth):
        for options in lists:
            if round_ < len(options):
                yield options[round_]


def _replace(
    target: str, args: tuple[Any, ...], kwargs: dict[str, Any], index: int, slot: Slot, what: str, new: Any
) -> Variant:
    if isinstance(slot, int):
        args = (*args[:slot], new, *args[slot + 1 :])
    else:
        kwargs = {**kwargs, slot: new}
    return Variant(target, args, kwargs, index, f"{_slot_name(slot)}: {what}")


def _key(target: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, bytes] | None:
    try:
        return target, pickle.dumps((args, kwargs), protocol=PICKLE_PROTOCOL)
    except Exception:
        return None
