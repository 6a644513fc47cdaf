"""Tests for sandbox/coderefine_sandbox/behaviour/variants.py: boundary variants derived from recorded calls
(pure functions, no sandbox)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "sandbox"))

from coderefine_sandbox.behaviour import lazy
from coderefine_sandbox.behaviour.variants import LARGE_INT, SlotFacts, boundary_values, derive, string_constants


def values(value, **facts):
    return {what: new for what, new in boundary_values(value, SlotFacts(**facts))}


def test_containers_get_empty_one_element_and_a_duplicate_and_keep_their_type():
    assert values([3, 1, 2]) == {"empty list": [], "one-element list": [3], "list with a duplicate": [3, 1, 2, 3]}
    found = values((3, 1))
    assert found["empty tuple"] == () and found["one-element tuple"] == (3,)
    assert values({1, 2}) == {"empty set": set(), "one-element set": {1}}
    assert values({"a": 1, "b": 2}) == {"empty dict": {}, "one-item dict": {"a": 1}}
    # an empty container is already the edge: nothing smaller to try
    assert values([]) == {}


def test_order_is_varied_only_where_the_recorded_sequences_were_not_all_sorted():
    # sorted input may be the function's precondition (a binary search): a reversed list is outside its domain
    assert "reversed list" not in values([1, 2, 3])
    found = values([3, 1, 2], unsorted=True)
    assert found["reversed list"] == [2, 1, 3] and found["sorted list"] == [1, 2, 3]
    assert "sorted list" not in values([1, "a"], unsorted=True)  # incomparable: no sorted variant, no error


def test_numbers_get_zero_one_large_and_a_negative_only_when_one_was_recorded():
    assert values(7) == {"0": 0, "1": 1, "a large integer": LARGE_INT}
    assert values(7, negative=True)["-1"] == -1
    assert values(0) == {"1": 1, "a large integer": LARGE_INT}  # the recorded value itself is not a variant
    assert values(2.5) == {"0.0": 0.0}
    assert values(True) == {}  # a flag is not a number here


def test_strings_get_empty_short_non_ascii_and_repeated_separators_and_newlines():
    found = values("a,b c")
    assert found["empty string"] == "" and found["one character"] == "a"
    assert "non-ASCII text" not in found  # tested on ASCII alone: maybe defined for English letters alone
    assert values("a,b c", non_ascii=True)["non-ASCII text"] == "a,b cßéﬁ"
    assert found["repeated separator ' '"] == "a,b  c"
    assert "a newline" not in found  # no recorded string held whitespace: none of them was text
    assert values("a b", whitespace=True)["a newline"] == "a b\n"
    assert values("x\ny")["repeated newlines"] == "x\n\ny"
    assert values(b"ab") == {"empty bytes": b"", "one byte": b"a"}


def test_none_only_where_a_recorded_call_passed_none():
    assert "None" not in values([1])
    assert values([1], none=True)["None"] is None


def test_derive_varies_one_argument_at_a_time_and_never_repeats_a_recorded_call():
    calls = [(0, "f", ([5, 4],), {"sep": ","}), (1, "f", ([],), {"sep": ","})]
    variants = derive(calls, 100)
    changed = [repr((v.args, v.kwargs)) for v in variants]
    assert repr((([5],), {"sep": ","})) in changed
    assert repr((([5, 4],), {"sep": ""})) in changed
    assert repr((([],), {"sep": ","})) not in changed  # recorded call 1 itself
    assert len(set(changed)) == len(variants)  # distinct
    assert all(v.source in (0, 1) and v.change for v in variants)


def test_derive_takes_the_first_edges_of_every_target_before_the_rest_within_the_budget():
    calls = [(0, "f", ([1, 2], "a"), {}), (1, "g", (2,), {}), (2, "g", (-3,), {})]
    first = derive(calls, 3)
    assert [v.target for v in first] == ["f", "g", "f"]
    assert first[0].change == "argument 1: empty list" and first[1].args == (0,)
    assert first[2].change == "argument 2: empty string"


def test_a_methods_instance_is_left_as_recorded():
    calls = [(0, "Stack.push", ([1, 2], 3), {})]
    assert {v.change.split(":")[0] for v in derive(calls, 50)} == {"argument 2"}


def test_arguments_of_one_length_in_every_recorded_call_change_length_together():
    # string_xor(a, b) is defined for strings of one length: an empty a with a long b is outside its domain
    calls = [(0, "xor", ("0101", "1100"), {}), (1, "xor", ("1", "0"), {}), (2, "pad", ("ab", "xyz"), {})]
    variants = [v for v in derive(calls, 200) if v.target == "xor"]
    assert all(len(v.args[0]) == len(v.args[1]) for v in variants), [v.args for v in variants]
    assert ("", "") in [v.args for v in variants] and ("0", "1") in [v.args for v in variants]
    # lengths that differ in some recorded call are not tied
    assert ("", "xyz") in [v.args for v in derive(calls, 200) if v.target == "pad"]


def test_empty_and_one_element_only_near_the_smallest_recorded_size():
    # a grid of 3x3 and more, bit strings of 100 characters: the function may be defined only above that
    found = values([[1, 2, 3]] * 3, smallest=3)
    assert "empty list" not in found and "one-element list" not in found and "list with a duplicate" in found
    assert "empty string" not in values("0101", smallest=4)
    assert values("01", smallest=2)["empty string"] == ""
    calls = [(0, "xor", ("0" * 100, "1" * 100), {})]
    assert all(len(v.args[0]) == len(v.args[1]) >= 100 for v in derive(calls, 200))


def test_zero_and_one_only_within_the_recorded_range():
    # largest_divisor(n) tested on n from 2 up: n = 0 is outside what it is defined for
    assert values(11, least=2) == {"a large integer": LARGE_INT}
    assert values(11, least=1) == {"1": 1, "a large integer": LARGE_INT}
    assert values(11, least=0)["0"] == 0
    assert values(2.5, least=0.5) == {}


def test_what_is_near_the_domain_is_read_off_every_recorded_call_but_only_the_shown_ones_are_varied():
    shown = [(1, "f", ((2, 3, 4),), {})]
    domain = [(0, "f", ((1, 2),), {}), *shown]  # the held-out call passed two elements
    variants = derive(shown, 50, domain)
    assert ((),) in [v.args for v in variants] and all(v.source == 1 for v in variants)
    assert ((),) not in [v.args for v in derive(shown, 50)]


def test_the_functions_own_short_string_constants_are_inserted_into_its_text_arguments():
    # inflection's underscore: `word.replace("-", "_")`; a rewrite leaving dashes alone passed every test
    def underscore(word):
        """Make an underscored, lowercase form from the expression in the string."""
        word = word.replace("-", "_")
        return "".join(ch for ch in word if ch != "~").lower() + ("" if word else "empty")

    constants = string_constants(underscore.__code__)
    # not the docstring, "", blanks nor the longer ones; the nested generator's too
    assert constants == ("-", "_", "~")
    calls = [(0, "underscore", ("DeviceType",), {}), (1, "underscore", ("IO",), {})]
    found = {(v.change, v.args) for v in derive(calls, 50, None, {"underscore": constants})}
    assert ("argument 1: the function's constant '-' inserted", ("Devic-eType",)) in found
    assert ("argument 1: the function's constant '~' inserted", ("I~O",)) in found
    plain = {v.change for v in derive(calls, 50)}
    assert not any("constant" in change for change in plain)  # without constants: as before


def test_an_iterator_argument_gets_an_empty_and_a_one_element_iterator_of_its_kind_an_async_one_none():
    taken = lazy.IteratorArgument("map", [b"a", b"b"], True)
    assert values(taken) == {
        "empty map": lazy.IteratorArgument("map", [], False),
        "one-element map": lazy.IteratorArgument("map", [b"a"], False),
    }
    assert values(lazy.IteratorArgument("generator", [], True)) == {}  # already empty
    assert values(lazy.IteratorArgument(lazy.ASYNC_GENERATOR, [b"a", b"b"], True)) == {}
    # the items the target took are its size: an iterator of which it took many is not made empty
    assert values(lazy.IteratorArgument("map", [b"a"] * 5, False), smallest=5) == {}
