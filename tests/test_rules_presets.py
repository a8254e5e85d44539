"""RULES.md §8 (options), §9 and §10.5 (presets): values, defaults, validation."""
import dataclasses

import pytest

from rummy_env import PRESETS, Rules

DEFAULTS = dict(
    num_players=2, hand_size=None, aces="low", ace_points=1, layoffs=True, must_discard_to_go_out=False,
    rummy_multiplier=2, rummy_needs_no_discard=False, scoring="winner_takes", jokers=0, decks=1, draw="top",
    recycle="shuffle",
    max_recycles=1, dry_trigger="on_empty", dry_hand="void", max_turns=300,
)

# RULES.md §9, written out by hand.
EXPECTED_PRESETS = {
    "classic": dict(DEFAULTS, target=100),
    "turnover": dict(DEFAULTS, recycle="turn_over", max_recycles=None, target=100),
    "deadwood": dict(DEFAULTS, target=250, rummy_multiplier=1, recycle="turn_over", max_recycles=None,
                     dry_hand="lowest_deadwood"),
    "stalemate": dict(DEFAULTS, target=100),
    "practice": dict(DEFAULTS, target=None, rummy_multiplier=1, dry_trigger="on_request"),
    # §10.5: scoring melds, dig, target 500, no recycle, rummy_multiplier 1
    "rum500": dict(DEFAULTS, scoring="melds", draw="dig", target=500, max_recycles=0, rummy_multiplier=1,
                   hand_size=13),  # §10.5: 13 cards heads-up (7 for 3-6 players, tested below)
    # §10.5: turnover with jokers = 2 (2-6 players), turnover with decks = 2 (5-7 players, 5 by default;
    # the target by players: 5 -> 200)
    "jokers": dict(DEFAULTS, recycle="turn_over", max_recycles=None, target=100, jokers=2),
    "two_decks": dict(DEFAULTS, num_players=5, recycle="turn_over", max_recycles=None, target=200, decks=2),
}
PLAYER_RANGES = {"classic": (2, 2), "turnover": (2, 6), "deadwood": (2, 6), "stalemate": (2, 4), "practice": (2, 2),
                 "rum500": (2, 6), "jokers": (2, 6), "two_decks": (5, 7)}


def test_option_names_are_rules_md_section_8():
    names = {f.name for f in dataclasses.fields(Rules)} - {"preset_name"}
    assert names == set(DEFAULTS) | {"target"}


def test_defaults_are_classic():
    r = Rules()
    for k, v in DEFAULTS.items():
        assert getattr(r, k) == v, k
    assert r.target == 100


def test_rules_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        PRESETS["classic"].aces = "high"


def test_exactly_the_presets_of_sections_9_and_10_5_this_release_plays():
    assert set(PRESETS) == set(EXPECTED_PRESETS)


@pytest.mark.parametrize("name", list(EXPECTED_PRESETS))
def test_preset_options(name):
    r = PRESETS[name]
    for k, v in EXPECTED_PRESETS[name].items():
        assert getattr(r, k) == v, (name, k)
    assert Rules.preset(name) == r


@pytest.mark.parametrize("n,target", [(2, 100), (3, 150), (4, 200)])
def test_target_by_players(n, target):
    assert Rules.preset("turnover", num_players=n).target == target
    assert Rules.preset("stalemate", num_players=n).target == target


@pytest.mark.parametrize("n", [5, 6])
def test_target_by_players_five_six(n):
    assert Rules.preset("turnover", num_players=n).target == 200


@pytest.mark.parametrize("n", [2, 3, 6])
def test_deadwood_target_is_250_for_any_count(n):
    assert Rules.preset("deadwood", num_players=n).target == 250


@pytest.mark.parametrize("n,size", [(2, 10), (3, 7), (4, 7), (5, 6), (6, 6)])
def test_hand_size_by_players(n, size):
    assert Rules.preset("turnover", num_players=n).cards_dealt == size
    assert Rules.preset("turnover", num_players=n, hand_size=4).cards_dealt == 4


@pytest.mark.parametrize("name", list(PLAYER_RANGES))
def test_player_ranges(name):
    lo, hi = PLAYER_RANGES[name]
    for n in range(2, 7):
        if lo <= n <= hi:
            assert Rules.preset(name, num_players=n).num_players == n
        else:
            with pytest.raises(ValueError) as e:
                Rules.preset(name, num_players=n)
            allowing = [p for p, (a, b) in PLAYER_RANGES.items() if a <= n <= b]
            msg = str(e.value)
            for p in allowing:
                assert p in msg, (name, n, msg)
            for p in set(PLAYER_RANGES) - set(allowing) - {name}:
                assert f"{p}" not in msg.split("allow")[-1], (name, n, msg)


def test_classic_with_three_names_the_three_presets_that_allow_it():
    with pytest.raises(ValueError) as e:
        Rules.preset("classic", num_players=3)
    msg = str(e.value)
    assert "turnover" in msg and "deadwood" in msg and "stalemate" in msg


def test_overrides_apply_on_top_of_the_preset():
    r = Rules.preset("deadwood", aces="either", rummy_multiplier=2, num_players=3)
    assert (r.aces, r.rummy_multiplier, r.num_players, r.recycle, r.target) == ("either", 2, 3, "turn_over", 250)
    assert Rules.preset("practice", target=50).target == 50


def test_unknown_preset_names_the_presets():
    with pytest.raises(ValueError) as e:
        Rules.preset("gin")
    msg = str(e.value)
    assert "gin" in msg
    for p in PLAYER_RANGES:
        assert p in msg


def test_unknown_field_is_named():
    with pytest.raises(ValueError) as e:
        Rules.preset("classic", jokers=True)
    assert "jokers" in str(e.value)
    with pytest.raises(ValueError) as e:
        Rules.from_json({"preset": "classic", "wild": 2})
    assert "wild" in str(e.value)
    with pytest.raises(ValueError) as e:
        Rules.from_json({"aces": "low", "wild": 2})
    assert "wild" in str(e.value)


@pytest.mark.parametrize(
    "field,value,allowed",
    [
        ("aces", "sideways", ["low", "high", "either"]),
        ("aces", True, ["low", "high", "either"]),
        ("ace_points", 5, ["1", "11"]),
        ("scoring", "rubber", ["winner_takes", "penalty"]),
        ("recycle", "burn", ["shuffle", "turn_over"]),
        ("dry_trigger", "never", ["on_empty", "on_request"]),
        ("dry_hand", "split", ["void", "lowest_deadwood"]),
        ("layoffs", "yes", ["true", "false"]),
        ("must_discard_to_go_out", 1, ["true", "false"]),
        ("rummy_needs_no_discard", None, ["true", "false"]),
        ("rummy_multiplier", 0, ["from 1 to 10"]),
        ("rummy_multiplier", 1.5, ["from 1 to 10"]),
        ("max_recycles", -1, ["null", "from 0 to 1000"]),
        ("max_turns", 0, ["from 1 to 100000"]),
        ("target", 0, ["null", "from 1 to 100000"]),
        ("target", "lots", ["null"]),
        ("hand_size", 0, ["1", "13"]),
        ("hand_size", 14, ["1", "13"]),
    ],
)
def test_bad_values_name_field_and_allowed_values(field, value, allowed):
    with pytest.raises(ValueError) as e:
        Rules.preset("classic", **{field: value})
    msg = str(e.value)
    assert field in msg
    for a in allowed:
        assert a in msg, (field, msg)


@pytest.mark.parametrize("n", [1, 7, 0, "2"])
def test_bad_player_count(n):
    with pytest.raises(ValueError) as e:
        Rules(num_players=n)
    assert "num_players" in str(e.value)


def test_hand_size_that_leaves_no_stock_is_rejected():
    # 5 players x 12 cards = 60 > 52 - upcard
    with pytest.raises(ValueError) as e:
        Rules.preset("turnover", num_players=5, hand_size=12)
    assert "hand_size" in str(e.value)
    assert Rules.preset("turnover", num_players=4, hand_size=12).cards_dealt == 12


def test_legal_edge_values():
    assert Rules(max_recycles=0).max_recycles == 0
    assert Rules(max_recycles=None).max_recycles is None
    assert Rules(target=None).target is None
    assert Rules(max_turns=1).max_turns == 1
    assert Rules(ace_points=11).ace_points == 11


def test_rules_json_round_trip():
    for r in [PRESETS["classic"], Rules.preset("turnover", num_players=5), Rules.preset("practice", aces="high"),
              Rules(num_players=3, scoring="penalty", target=None)]:
        assert Rules.from_json(r.to_json()) == r
    assert PRESETS["classic"].to_json() == "classic"


@pytest.mark.parametrize("field,value", [("rummy_multiplier", 11), ("max_turns", 10**12), ("target", 10**9),
                                         ("max_recycles", 10**6)])
def test_values_above_the_allowed_range_are_refused(field, value):
    with pytest.raises(ValueError, match=field):
        Rules.preset("classic", **{field: value})
