"""RULES.md §1: card notation and point values."""
import pytest

from rummy_env.cards import CardError, card_points, card_text, mask_of, mask_points, parse_card


@pytest.mark.parametrize("text", ["TH", "th", "10H", "10h", "T♥", "t♥", "10♥", " TH "])
def test_ten_of_hearts_spellings(text):
    c = parse_card(text)
    assert card_text(c) == "TH"
    assert c == parse_card("TH")


@pytest.mark.parametrize(
    "text,printed",
    [("AC", "AC"), ("2d", "2D"), ("9♠", "9S"), ("j♣", "JC"), ("Q♦", "QD"), ("kS", "KS"), ("10C", "TC")],
)
def test_printing_uses_rank_then_capital_suit(text, printed):
    assert card_text(parse_card(text)) == printed


def test_every_card_prints_and_parses_back():
    texts = [card_text(c) for c in range(52)]
    assert len(set(texts)) == 52
    for c, t in enumerate(texts):
        assert len(t) == 2 and t[0] in "A23456789TJQK" and t[1] in "CDHS"
        assert parse_card(t) == c


@pytest.mark.parametrize("bad", ["", "H", "1H", "11H", "TX", "HT", "ZZ", "AH2", "0H", "TH♥", "♥T"])
def test_bad_card_text_raises_value_error(bad):
    with pytest.raises(ValueError) as e:
        parse_card(bad)
    assert isinstance(e.value, CardError)


@pytest.mark.parametrize("bad", [None, 5, ["TH"]])
def test_non_text_card_raises(bad):
    with pytest.raises(ValueError):
        parse_card(bad)


@pytest.mark.parametrize("bad", [-1, 53, 3.0, "TH"])
def test_bad_card_number_raises(bad):
    with pytest.raises(ValueError):
        card_text(bad)


def test_card_52_is_the_joker():
    # RULES.md §10.2 / API.md: the joker is written JK; parse_card reads it only where jokers exist
    assert card_text(52) == "JK"
    assert parse_card("jk", joker=True) == 52
    with pytest.raises(ValueError, match="no jokers"):
        parse_card("JK")


@pytest.mark.parametrize(
    "text,points",
    [("AS", 1), ("2C", 2), ("5D", 5), ("9H", 9), ("TC", 10), ("JD", 10), ("QH", 10), ("KS", 10)],
)
def test_point_values(text, points):
    assert card_points(parse_card(text)) == points


def test_ace_points_eleven():
    assert card_points(parse_card("AH"), ace_points=11) == 11
    assert card_points(parse_card("KH"), ace_points=11) == 10


def test_mask_points_seed_examples():
    # seeds/000: K♠ 9♦ 4♣ A♥ = 10 + 9 + 4 + 1
    assert mask_points(mask_of(parse_card(t) for t in ["K♠", "9♦", "4♣", "A♥"])) == 24
    # seeds/001: a king, a 6 and an ace
    assert mask_points(mask_of(parse_card(t) for t in ["KD", "6C", "AS"])) == 17
    # seeds/004: K♣ Q♥ 2♦
    assert mask_points(mask_of(parse_card(t) for t in ["K♣", "Q♥", "2♦"])) == 22
    # aces at 11
    assert mask_points(mask_of(parse_card(t) for t in ["AS", "AH", "3C"]), ace_points=11) == 25
