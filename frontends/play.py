"""``rummy play --opponent NAME --rules PRESET [--seed S] [--seat K] [--episode hand|match]``:
a person plays against agents in the terminal.

Each turn (a round in which every player moves once) shows the person's hand (sorted by suit, then rank), the melds on the
table, the upcard, the stock size, the hand sizes and the scores, then the legal
moves numbered. A move is chosen by its number or its action text (``draw stock``,
``meld 4H 5H 6H``, ``layoff JC``, ``discard KS``; cards in any order); a bad input
is explained and asked again. A card drawn from the stock is named
(``you drew QD from the stock``). The opponents' moves are shown as they are made.
``q`` quits; Ctrl-C and end of input also end the game cleanly. Works with a
non-terminal stdin (one answer per line), so it can be scripted.

The opponents are built by ``rummy_env.agents.make_agent`` (``pretrained``, ``ppo:PATH``,
``onnx:DIR``, ``heuristic``, ``greedy``, ``random``); ``pretrained`` (the default)
falls back to ``heuristic``, with a message, when no pretrained policy is shipped.
Only what the person's seat may see is shown (never another hand or the stock).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape

QUIT_WORDS = ("q", "quit", "exit")
HELP_WORDS = ("?", "h", "help", "moves")


def _cards(n: int) -> str:
    """``"1 card"``, ``"5 cards"``."""
    return f"{n} card" if n == 1 else f"{n} cards"


MAX_MOVE_DIGITS = 6
"""Digits (leading zeros aside) beyond which a move number is refused unread: no table has a
million legal moves, and Python refuses to convert a number of more than 4300 digits."""


def move_number(answer: str, count: int) -> int | None:
    """The move number ``answer`` (decimal digits) names, if it is one of ``1..count``; else
    ``None``. A number too long to be a move is refused by its length, before ``int``,
    which raises for a number of more than 4300 digits."""
    digits = answer.lstrip("0") or "0"
    if len(digits) > MAX_MOVE_DIGITS:
        return None
    k = int(digits)
    return k if 1 <= k <= count else None


def _shown_number(answer: str) -> str:
    """``answer`` as a message shows it: a long number by its first digits and its length."""
    return answer if len(answer) <= 12 else f"{answer[:6]}... (a number of {len(answer)} digits)"


def make_opponent(name: str, seed: int | None, console: Console, rules: Any = None) -> tuple[Any, str]:
    """``(agent, name used)`` for a table of ``rules`` (a ``Rules``; ``None``: not checked).
    ``pretrained`` (the default) is the policy shipped for this table
    (``rummy_env.agents.pretrained_for``: ``pretrained:rum500`` at a 500 Rum table, ``pretrained:jokers`` at the jokers table, the
    classic one at the standard heads-up tables); it falls back to ``heuristic``, with a
    message, when no policy is shipped for the table.

    Raises:
        ValueError: an unknown name, a missing or corrupt policy (from ``make_agent``), or
            a policy named by ``ppo:``/``onnx:`` that cannot play this table (the message
            says why and names the agents that can).
    """
    from rummy_env import agents

    pretrained = name.strip().lower() == "pretrained"
    if pretrained:
        preset = "classic" if rules is None else agents.pretrained_for(rules)
        path = None if preset is None else agents.pretrained_path(preset)
        if preset is None:
            console.print(f"no shipped policy plays this table (shipped: {', '.join(agents.PRETRAINED)}); "
                          "playing against 'heuristic' instead")
            return agents.make_agent("heuristic", seed=seed), "heuristic"
        if not os.path.isfile(path):
            console.print(f"no pretrained policy is shipped ({escape(str(path))} is missing); "
                          "playing against 'heuristic' instead")
            return agents.make_agent("heuristic", seed=seed), "heuristic"
        if preset != "classic":
            name = f"pretrained:{preset}"  # the policy shipped for this table
    agent = agents.make_agent(name, seed=seed)
    why = None if rules is None else agents.table_misfit(agent, rules)
    if why is None:
        return agent, name
    if pretrained:
        console.print(f"the shipped policy cannot play this table ({why}); playing against 'heuristic' instead")
        return agents.make_agent("heuristic", seed=seed), "heuristic"
    others = ", ".join(agents.builtin_opponents(rules))
    raise ValueError(f"--opponent {name!r} cannot play this table: {why}; use {others}, or a policy trained for "
                     "this table")


class Game:
    """One terminal game: the env, the person's seat and the opponents.

    Args:
        rules: a preset name (or anything ``rummy_v0.raw_env`` takes).
        opponent: the agent name for every other seat.
        seat: the person's seat.
        seed: seeds the deal and the opponents.
        episode: ``"hand"`` or ``"match"``.
        stdin, console: where answers are read and the table is shown.

    Raises:
        ValueError: bad rules, seat, episode or opponent name.
    """

    def __init__(self, rules: Any, opponent: str, seat: int, seed: int | None, episode: str,
                 stdin: TextIO, console: Console) -> None:
        from rummy_env import rummy_v0

        self.env = rummy_v0.raw_env(rules=rules, episode=episode)
        n = self.env.rules.num_players
        if not isinstance(seat, int) or not 0 <= seat < n:
            raise ValueError(f"--seat must be a seat 0..{n - 1} for {n} players, got {seat!r}")
        self.seat = seat
        self.me = self.env.possible_agents[seat]
        self.console = console
        self.stdin = stdin
        self.episode = episode
        self.opponents: dict[int, Any] = {}
        used = opponent
        for q in range(n):
            if q != seat:
                # the first seat's choice (and its message, if any) holds for every seat
                agent, used = make_opponent(used, None if seed is None else seed + 1 + q, console, self.env.rules)
                self.opponents[q] = agent
        self.opponent_name = used
        self.env.reset(seed=seed)

    # ------------------------------------------------------------------ display
    def _cards(self, cards: list[int]) -> str:
        from rummy_env.cards import TEXT_OF, sort_key

        by_suit: dict[int, list[str]] = {}
        for c in sorted(cards, key=sort_key):  # jokers (52) sort last, as their own group
            by_suit.setdefault(c // 13, []).append(TEXT_OF[c])
        return "  ".join(" ".join(v) for v in by_suit.values()) or "-"

    def show_table(self) -> None:
        from rummy_env.cards import TEXT_OF, count_cards
        from rummy_env.engine import PLAY

        st, c = self.env.state, self.console
        rules = self.env.rules
        phase = "play" if st.phase == PLAY else "draw"
        # st.turn counts every player's turn; a person counts rounds of the table
        c.rule(f"hand {st.hand_number + 1}, turn {st.turn // rules.num_players + 1}: your move "
               f"(player_{self.seat}), {phase}")
        scores = "   ".join(("you" if q == self.seat else f"player_{q}") + f" {st.scores[q]}"
                           for q in range(rules.num_players))
        target = f" (match to {rules.target})" if self.episode == "match" and rules.target else ""
        c.print(f"scores: {scores}{target}")
        up = TEXT_OF[st.discard[-1]] if st.discard else "-"
        c.print(f"stock: {_cards(len(st.stock))}   top discard: {up}   discard pile: {_cards(len(st.discard))}")
        if st.table.digs:  # the whole pile is spread face up (RULES.md §10.4)
            pile = " ".join(TEXT_OF[x] for x in st.discard) or "-"
            hint = ("  (dig with 'draw discard <card>')" if st.phase != PLAY and len(st.discard) > 1 else "")
            c.print(f"discard pile, bottom to top: {pile}{hint}")
        if st.table.melds_scoring:
            mp = "   ".join(("you" if q == self.seat else f"player_{q}") + f" {st.meld_points[q]}"
                           for q in range(rules.num_players))
            c.print(f"melded this hand: {mp}")
        melds = "  |  ".join(" ".join(m.texts()) for m in st.melds)
        c.print(f"table melds: {melds or '-'}")
        for q in range(rules.num_players):
            if q == self.seat:
                continue
            known = count_cards(st.known[q])
            extra = f" (known to hold: {self._cards(known)})" if known else ""
            c.print(f"player_{q}: {st.hands[q].bit_count()} cards{extra}")
        if st.bound >= 0:
            c.print(f"you dug {TEXT_OF[st.bound]} from the discard pile: meld it or lay it off "
                    "before you discard")
        if st.drawn_from_discard >= 0:
            c.print(f"you took {TEXT_OF[st.drawn_from_discard]} from the discard pile: "
                    "you may not discard it this turn")
        if st.named:  # 'joker as <card>' typed alone: the move is being built (docs/env.md)
            c.print(f"jokers named for {self._cards(count_cards(st.named))}: finish that meld or lay-off")
        c.print(f"your hand: {self._cards(count_cards(st.hands[self.seat]))}", style="bold")

    def show_moves(self, moves: list[tuple[str, int]]) -> None:
        self.console.print("your moves:")
        for i, (text, _) in enumerate(moves, 1):
            self.console.print(f"  {i:>3}. {text}")

    def show_hand_end(self, info: dict) -> None:
        res = info["hand_result"]  # rummy_env.env.INFO_KEYS: winner -1 when nobody collects
        c = self.console
        who = lambda q: "you" if q == self.seat else f"player_{q}"  # noqa: E731
        outcome, winner = res["outcome"], res["winner"]
        if outcome == "out":
            text = f"{who(winner)} went out" + (" (rummy!)" if res["rummy"] else "")
        elif winner >= 0:
            text = f"the hand is {outcome}; {who(winner)} collect(s) on lowest deadwood"
        elif self.env.table.melds_scoring:
            text = f"the hand is {outcome}; every seat scores its melds minus its hand"
        else:
            text = f"the hand is {outcome}; nobody scores"
        c.rule("hand over")
        c.print(f"hand over: {text}")
        pts = res.get("points") or []
        c.print("points this hand: " + "   ".join(f"{who(q)} {p}" for q, p in enumerate(pts)))
        c.print("scores: " + "   ".join(f"{who(q)} {s}" for q, s in enumerate(info.get("scores", []))))
        if info["match_over"]:
            ws = [q for q, won in enumerate(info["match_won"]) if won]
            c.print("match over: won by " + " and ".join(who(q) for q in ws))

    # ------------------------------------------------------------------ input
    def _read(self, prompt: str) -> str:
        self.console.print(prompt, end="")
        self.console.file.flush()
        line = self.stdin.readline()
        if not line:
            raise EOFError
        line = line.rstrip("\n")
        if not self.stdin.isatty():
            # echo scripted answers so the transcript reads well, as typed: '[/b]' or ':smile:'
            # is text, not markup or an emoji code
            self.console.print(line, markup=False, emoji=False, highlight=False)
        return line.strip()

    def ask_move(self) -> list[int] | None:
        """The decisions of the person's legal move (one id; a move with jokers is ``joker
        as <card>`` per joker, then the meld or lay-off: ``engine.action_ids``), or
        ``None`` to quit. Raises ``EOFError`` at end of input."""
        from rummy_env import engine

        moves = self.env.legal_moves()
        legal = [a for _, a in moves]
        self.show_table()
        self.show_moves(moves)
        while True:
            answer = self._read(f"your move (1-{len(legal)} or text, ? for moves, q to quit): ")
            low = answer.lower()
            if not answer:
                self.console.print("type a move number or an action text such as 'draw stock'")
                continue
            if low in QUIT_WORDS:
                return None
            if low in HELP_WORDS:
                self.show_table()
                self.show_moves(moves)
                continue
            if answer.isdecimal():  # digits int() reads ('²' is a digit it does not: a text then)
                k = move_number(answer, len(legal))
                if k is not None:
                    return self.env.action_ids(moves[k - 1][0])
                self.console.print(f"there is no move {_shown_number(answer)}: choose a number from 1 to {len(legal)}")
                continue
            try:
                self.env.action_ids(answer)  # a text that names no move is told apart from an illegal one
            except ValueError as e:
                self.console.print(f"not a move: {escape(str(e))}", emoji=False)  # quotes the answer
                continue
            try:  # on a copy: the engine names the reason and the game is untouched
                return engine.legal_action_ids(self.env.state, answer)
            except ValueError as e:
                self.console.print(f"not legal now: {escape(str(e))} (? shows the moves again)", emoji=False)

    # ------------------------------------------------------------------ the game
    def play(self) -> int:
        """Play until the hand (or match) ends or the person quits; returns 0."""
        env, c = self.env, self.console
        c.print(f"you are player_{self.seat}; opponent: {self.opponent_name}; rules: "
                f"{escape(str(env.rules.to_json()))}; episode: {self.episode}")
        while True:
            agent = env.agent_selection
            if env.terminations[agent]:
                break
            q = env.agent_name_mapping[agent]
            hand_before = env.state.hand_number
            if q == self.seat:
                ids = self.ask_move()
                if ids is None:
                    c.print("you left the game")
                    return 0
                from rummy_env.actions import DRAW_STOCK

                before = env.state.hands[self.seat]
                for a in ids:
                    env.step(a)
                if a == DRAW_STOCK:  # name the card drawn (only this seat sees it)
                    from collections import Counter

                    from rummy_env.cards import TEXT_OF, count_cards

                    new = (list(Counter(count_cards(env.state.hands[self.seat])) - Counter(count_cards(before)))
                           if env.state.hand_number == hand_before else [])
                    if new:
                        c.print(f"you drew {TEXT_OF[new[0]]} from the stock")
            else:
                ob = env.observe(agent)
                a = int(self.opponents[q].act(ob["observation"], ob["action_mask"]))
                from rummy_env import engine
                from rummy_env.cards import TEXT_OF

                if env.table.jokers and engine.is_joker_step(env.state, a):
                    env.step(a)  # a joker named for the meld or lay-off that follows: shown with it
                    continue
                text = engine.move_text(env.state, a)

                dug = env.table.dig_card(a)
                if a == 1 and env.state.discard:
                    text += f" (takes {TEXT_OF[env.state.discard[-1]]})"
                elif dug is not None:  # a dig: the card and every card above it (§10.4)
                    from rummy_env.engine import dig_taken

                    taken = dig_taken(env.state.discard, dug)
                    text += f" (takes {' '.join(TEXT_OF[x] for x in taken)})"
                env.step(a)
                c.print(f"player_{q} plays: {text}")
            if env.terminations[self.me] or env.state.hand_number != hand_before:
                self.show_hand_end(env.infos[self.me])
        return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--opponent", default="pretrained", metavar="NAME",
                        help="agent for the other seat(s), as make_agent takes it: pretrained (default; "
                             "heuristic when none is shipped or it does not fit the table), heuristic, heuristic:cutting (the "
                             "strongest scripted player), heuristic:OPTIONS, greedy, random, search, search:OPTIONS, "
                             "ppo:PATH, onnx:DIR, MODULE:ATTR")
    parser.add_argument("--rules", default="classic", metavar="PRESET", help="rules preset (default classic)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the deal and the opponents")
    parser.add_argument("--players", type=int, default=None, metavar="N",
                        help="players at the table (default: the preset's smallest; e.g. 7 with --rules two_decks)")
    parser.add_argument("--seat", type=int, default=0, help="your seat (0 moves first after the dealer; default 0)")
    parser.add_argument("--episode", choices=["hand", "match"], default="hand",
                        help="play one hand (default) or a whole match to the preset's target")


def main(args: argparse.Namespace, stdin: TextIO | None = None, console: Console | None = None) -> int:
    """Run ``rummy play``; returns 0 (also after ``q`` or end of input), 130 on Ctrl-C.

    Raises:
        ValueError: bad rules, seat or opponent (the CLI prints it).
    """
    stdin = sys.stdin if stdin is None else stdin
    console = console or Console(highlight=False, soft_wrap=True)
    rules: Any = args.rules
    players = getattr(args, "players", None)
    if players is not None:
        from rummy_env import Rules

        rules = Rules.make(rules, num_players=players)  # a player count the preset does not allow says which do
    game = Game(rules, args.opponent, args.seat, args.seed, args.episode, stdin, console)
    try:
        return game.play()
    except EOFError:
        console.print("\nend of input: game over")
        return 0
    except KeyboardInterrupt:
        console.print("\ninterrupted: game over")
        return 130
