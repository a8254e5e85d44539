"""Issue 6: `rummy play` driven through a non-terminal stdin."""
from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys

from rich.console import Console


def run_play(args, stdin_text, timeout=60):
    return subprocess.run([sys.executable, "-m", "rummy_env.cli", "play", *args], input=stdin_text,
                          capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, OMP_NUM_THREADS="1", COLUMNS="100"))


def parse(argv):
    from rummy_env.frontends import play

    p = argparse.ArgumentParser()
    play.add_arguments(p)
    return p.parse_args(argv)


def test_a_hand_by_number_and_text_with_bad_input_in_between():
    # text first, then bad inputs (unknown text, no such number, an illegal move), then numbers
    answers = ["draw stock", "bogus move", "99", "meld AC 2C 3C", "0"] + ["1"] * 600
    r = run_play(["--opponent", "random", "--rules", "classic", "--seed", "3"], "\n".join(answers) + "\n")
    out = r.stdout
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    first = out.index("your move (1-")
    assert "draw stock" in out[:first] and "draw discard" in out[:first]  # the numbered moves
    assert "your hand:" in out and "top discard:" in out and "stock: 31 cards" in out and "scores:" in out
    assert "not a move: 'bogus move' names no action" in out
    assert "there is no move 99" in out and "there is no move 0" in out
    assert "not legal now:" in out and "meld AC 2C 3C" in out
    # the text answer was taken: the first table after it is the play phase with 11 cards
    after = out[out.index("draw stock", first):]
    assert "play" in after.split("your hand:")[0]
    assert "player_1 plays:" in out
    assert "hand over:" in out and "points this hand:" in out
    assert "end of input" not in out  # the hand ended before the answers ran out


def test_a_whole_hand_chosen_by_action_text(monkeypatch):
    """In-process: each answer is the text of a legal move, read from the game itself."""
    from rummy_env.frontends import play

    import random

    holder = {}
    rng = random.Random(0)

    class TextStdin:
        n = 0

        def isatty(self):
            return False

        def readline(self):
            env = holder["game"].env
            texts = env.legal_action_texts()
            self.n += 1
            rng.shuffle(texts)
            if self.n % 5 == 0:
                return "discard ZZ\n"  # a bad card, explained and asked again
            return texts[0].lower() + "\n"  # lower-case text works too

    real_game = play.Game

    def spy(*a, **kw):
        g = real_game(*a, **kw)
        holder["game"] = g
        return g

    monkeypatch.setattr(play, "Game", spy)
    buf = io.StringIO()
    console = Console(file=buf, width=100, highlight=False)
    rc = play.main(parse(["--opponent", "random", "--seed", "11", "--seat", "1"]), stdin=TextStdin(), console=console)
    out = buf.getvalue()
    assert rc == 0
    assert "you are player_1" in out
    assert "hand over:" in out
    assert "not a move:" in out
    g = holder["game"]
    assert all(g.env.terminations.values())


def test_end_of_input_quit_and_fallback_are_clean(monkeypatch, tmp_path, capsys):
    from rummy_env.cli import main as rummy

    r = run_play(["--opponent", "random", "--seed", "1"], "1\n")
    assert r.returncode == 0 and "end of input" in r.stdout and "Traceback" not in r.stderr
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    assert rummy(["play", "--opponent", "random", "--seed", "1"]) == 0
    assert "you left the game" in capsys.readouterr().out
    assert rummy(["play", "--opponent", "nobody"]) == 2
    assert "unknown agent 'nobody'" in capsys.readouterr().err
    assert rummy(["play", "--opponent", "random", "--seat", "2"]) == 2
    assert "--seat must be a seat 0..1" in capsys.readouterr().err

    from rummy_env import agents
    from rummy_env.frontends import play

    monkeypatch.setattr(agents.shipped, "FOLDER", str(tmp_path / "missing"))  # a broken install
    buf = io.StringIO()
    rc = play.main(parse(["--seed", "2"]), stdin=io.StringIO("q\n"), console=Console(file=buf, width=100))
    out = buf.getvalue()
    assert rc == 0
    assert "no pretrained policy is shipped" in out and "opponent: heuristic" in out


def test_a_match_with_episode_match():
    """practice has no target, so its match is one hand; the match result is shown."""
    r = run_play(["--opponent", "greedy", "--rules", "practice", "--seed", "4", "--episode", "match"],
                 "1\n" * 600)
    assert r.returncode == 0, r.stderr
    assert "episode: match" in r.stdout and "match over: won by" in r.stdout


def test_interrupt_is_clean(monkeypatch):
    from rummy_env.frontends import play

    class Interrupting:
        def isatty(self):
            return False

        def readline(self):
            raise KeyboardInterrupt

    buf = io.StringIO()
    rc = play.main(parse(["--opponent", "random"]), stdin=Interrupting(), console=Console(file=buf, width=100))
    assert rc == 130 and "interrupted" in buf.getvalue()


def test_only_the_players_own_cards_are_shown():
    """The opponent's hand never appears in the transcript (cards it took from the pile aside)."""
    from rummy_env.frontends import play

    buf = io.StringIO()
    game = play.Game("classic", "random", 0, 5, "hand", io.StringIO(""), Console(file=buf, width=200))
    game.show_table()
    out = buf.getvalue()
    st = game.env.state_dict()
    for card in st["hands"][1]:
        assert card not in out
    for card in st["hands"][0]:
        assert card in out


def test_a_move_number_of_thousands_of_digits_is_refused_and_asked_again():
    """Python's int() refuses strings of more than 4300 digits; an over-long move number is
    told to be no move and the prompt asks again; a long run of leading zeros still names
    its move, and the game goes on."""
    from rummy_env.frontends import play

    huge = "7" * 5000
    answers = [huge, "9" * 4301, "0" * 5000 + "1", "q"]
    buf = io.StringIO()
    rc = play.main(parse(["--opponent", "random", "--seed", "3"]), stdin=io.StringIO("\n".join(answers) + "\n"),
                   console=Console(file=buf, width=100, highlight=False))
    out = buf.getvalue()
    assert rc == 0
    assert "Exceeds the limit" not in out and "error" not in out
    assert "there is no move 777777... (a number of 5000 digits): choose a number from 1 to" in out
    assert "there is no move 999999... (a number of 4301 digits): choose a number from 1 to" in out
    assert out.count("your move (1-") == 4  # asked again after each refusal, then the play phase
    assert "you drew " in out  # 000...001 is move 1, 'draw stock'
    assert "you left the game" in out


def test_an_answer_that_looks_like_console_markup_is_echoed_as_typed_and_asked_again():
    """Scripted answers are echoed into the transcript; one that reads as rich markup
    (a closing tag with no opening one raised MarkupError and ended the match) or as an
    emoji code is shown as typed, told to be no move, and the prompt asks again."""
    from rummy_env.frontends import play

    answers = ["[/bold]", "[red]1[/red]", "[bold]draw stock", ":smile:", "q"]
    buf = io.StringIO()
    rc = play.main(parse(["--opponent", "random", "--seed", "3"]), stdin=io.StringIO("\n".join(answers) + "\n"),
                   console=Console(file=buf, width=200, highlight=False))
    out = buf.getvalue()
    assert rc == 0
    for a in answers[:-1]:
        assert f"to quit): {a}\n" in out, a  # the echo, as typed
        assert f"not a move: '{a}' names no action" in out, a
    assert out.count("your move (1-") == 5 and "you drew " not in out
    assert "you left the game" in out
