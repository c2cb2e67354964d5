"""The NVTX range-name contract: what the builder writes the parser reads back, and nothing else."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from l2attr.vocab import (CELL_CONDITIONS, EDGE_ARMS, LADDER_STATES, RANGE_ROLES, STEP_CONDITIONS, Family, L2Condition, Pin,
                          Role, Timer, cell_condition, condition_words, ladder_state)
from l2attr.names import NVTX_DOMAIN, parse_range_name, range_name

names = st.text(alphabet=st.characters(blacklist_characters=":\n", blacklist_categories=("Cs",)),
                min_size=1, max_size=20)


@given(role=st.sampled_from([Role(r) for r in RANGE_ROLES]), family=st.sampled_from(Family), rung=names, pin=st.sampled_from(Pin),
       profile=names, state=st.sampled_from(LADDER_STATES), table=st.integers(0, 10**6), batch=st.integers(0, 10**6))
def test_round_trip(role, family, rung, pin, profile, state, table, batch):
    name = range_name(role, family, rung, pin, profile, state, table, batch)
    assert "/" not in name or "/" in rung + profile     # never a '/' of our own (ncu splits on it)
    back = parse_range_name(f"{NVTX_DOMAIN}@{name}")   # as the importer records a domain range
    assert (back["role"], back["family"], back["rung"], back["pin"], back["profile"], back["l2_state"],
            back["table"], back["batch"]) == (role.value, family.value, rung, pin.value, profile,
                                              state.value, table, batch)
    assert back["cell"] == f"{family.value}:{rung}:{pin.value}:{profile}:{state.value}"


def test_known_name():
    assert range_name(Role.PIN, Family.ARTIFACT, "l2p_optmt", Pin.ELEMENT, "reuse_low", L2Condition.FLUSH, 11, 3) \
        == "pin:artifact:l2p_optmt:element:reuse_low:flush:t11:b3"
    # the same name before l2attr had a domain (default domain, `l2attr:` prefix) reads the same
    assert parse_range_name("l2attr:pin:artifact:l2p_optmt:element:reuse_low:flush:t11:b3")["cell"] \
        == parse_range_name("l2attr@pin:artifact:l2p_optmt:element:reuse_low:flush:t11:b3")["cell"] \
        == "artifact:l2p_optmt:element:reuse_low:flush"


def test_names_before_families_read_as_tuned_with_pin_unknown():
    old = parse_range_name("l2attr:pin:combined:reuse_low:flush:t11:b3")
    assert (old["role"], old["family"], old["rung"], old["pin"], old["profile"], old["l2_state"]) == \
        ("pin", "tuned", "combined", "", "reuse_low", "flush")
    assert (old["table"], old["batch"]) == (11, 3)


@pytest.mark.parametrize("name", ["my_app:step", "", None, "l2attr:consumer:r:p:hot:t1:b2",
                                  "pin:artifact:optmt:none:random:natural:t1:b2",   # not ours: no domain
                                  "other@pin:artifact:optmt:none:random:natural:t1:b2",
                                  "l2attr:consumer:artifact:optmt:sideways:random:natural:t1:b2"])
def test_foreign_or_malformed_names_leave_the_identity_empty(name):
    out = parse_range_name(name)
    assert out["rung"] == "" and out["table"] is None and out["cell"] == ""


def test_role_only_names_give_the_role():
    assert parse_range_name("l2attr:consumer:nopin")["role"] == "consumer"
    assert parse_range_name("l2attr:consumer:nopin")["cell"] == ""


def test_enums_are_their_plain_words():
    assert str(Timer.ARTIFACT) == "artifact" and f"{Family.TUNED}" == "tuned"
    assert Family("artifact") is Family.ARTIFACT and condition_words(LADDER_STATES)[0] == "natural"


# -- the one condition registry (vocab/conditions.py) and the size of the vocabulary ----------------

def test_the_written_words_of_every_engine_are_unchanged():
    """Committed run dirs are read back: each engine's column keeps the words it always wrote."""
    assert condition_words(LADDER_STATES) == ("natural", "flush", "flush_after_pin", "reset_after_pin")
    assert condition_words(CELL_CONDITIONS) == ("natural", "no_producer", "flush_before_call",
                                                "flush_after_producer", "reset_after_producer")
    assert condition_words(STEP_CONDITIONS) == ("natural", "cold", "cold_dirty", "cold_matched", "cold_start",
                                                "rewarmed", "warm_inputs")
    assert condition_words(EDGE_ARMS) == ("natural", "cold", "rewarmed", "edge_cold")


def test_every_condition_runs_device_verbs_the_protocol_has():
    """`before` / `between` name methods of the cell protocol's device (measure/cell.py)."""
    from l2attr.measure.cell import GpuVerbs

    for c in L2Condition:
        for verb in (c.before, c.between):
            assert not verb or callable(getattr(GpuVerbs, verb, None)), (c, verb)


def test_a_ladder_word_runs_what_its_generic_condition_runs():
    for state in LADDER_STATES:
        g = state.generic
        assert g.ladder == state.value and "experiment" in g.engines
        assert (state.before, state.between, state.producer) == (g.before, g.between, g.producer), state
    assert L2Condition.FLUSH_AFTER_PIN.generic is L2Condition.FLUSH_AFTER_PRODUCER
    assert L2Condition.COLD.generic is L2Condition.COLD           # no ladder word: itself


def test_a_word_outside_an_engine_is_refused_with_the_valid_ones():
    with pytest.raises(ValueError, match="flush_before_call"):
        cell_condition("flush")                # the ladder's word, not an experiment's
    with pytest.raises(ValueError, match="flush_after_pin"):
        ladder_state("cold")


def test_the_vocabulary_has_at_most_thirty_classes():
    """Parallel sets stay merged: a part of a set is a tuple of words beside it, not a new class."""
    import re
    from pathlib import Path

    import l2attr.vocab

    folder = Path(l2attr.vocab.__file__).parent
    count = sum(len(re.findall(r"^class ", p.read_text(), re.M)) for p in folder.glob("*.py"))
    assert count <= 30, count


@pytest.mark.parametrize("argv", [["cache", "ladder"], ["cache", "timeline"], ["ladder", "--l2", "cold"],
                                  ["profile", "--cache-control", "base"], ["profile", "--clock-control", "all"]])
def test_a_flag_takes_only_its_part_of_a_merged_set(argv, capsys):
    """`l2attr cache` takes info/clear, not every Command; --l2 the ladder's words; each ncu flag its own."""
    from l2attr.cli import main

    try:
        rc = main(argv)
    except SystemExit as stop:          # argparse's refusal of a choice
        rc = stop.code
    assert rc == 2
    err = capsys.readouterr().err
    assert "error" in err and argv[-1] in err
