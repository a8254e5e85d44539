"""Shared helpers for the tests of the servers (``rummy serve``, ``rummy web``): run
one in a thread, and look into the JSON answers for what must not be in them."""
from __future__ import annotations

import contextlib
import threading
import time
from typing import Any, Iterator


@contextlib.contextmanager
def running_server(srv: Any, timeout: float = 20.0) -> Iterator[list[tuple]]:
    """Run the uvicorn server ``srv`` in a daemon thread and yield the addresses its
    sockets are bound to (``(host, port, ...)`` tuples) once it has started; stop it on
    exit (joined for at most 10 s).

    Raises:
        AssertionError: the server did not start within ``timeout`` seconds.
    """
    t = threading.Thread(target=srv.run, daemon=True)
    t.start()
    try:
        deadline = time.time() + timeout
        while not srv.started:
            assert time.time() < deadline, "server did not start"
            time.sleep(0.02)
        yield [s.getsockname() for sv in srv.servers for s in sv.sockets]
    finally:
        srv.should_exit = True
        t.join(10)


def keys_of(obj: Any) -> Iterator[str]:
    """Every key of every dict nested anywhere in ``obj`` (dicts and lists)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from keys_of(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from keys_of(v)


def hidden_cards(sd: dict, seat: int = 0, seen: Any = ()) -> set[str]:
    """The cards the person at ``seat`` of a 2-player STATE JSON ``sd`` may not know: the
    opponent's cards that it did not take from the discard pile, and the whole stock,
    less the cards ``seen`` face up earlier in the hand (a recycled stock is made of
    old discards)."""
    other = 1 - seat
    return ((set(sd["hands"][other]) - set(sd["known_cards"][other])) | set(sd["stock"])) - set(seen)
