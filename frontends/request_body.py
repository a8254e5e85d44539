"""Request checks shared by the HTTP frontends (``rummy serve``, ``rummy web``): a body
is accepted only when sent as JSON and read only up to a size limit."""
from __future__ import annotations

from typing import Any

MAX_BODY_BYTES = 64 * 1024  # a full position is about 1 KB


class BodyRefused(ValueError):
    """A request body refused before it is parsed; ``status`` is the HTTP status (400,
    413 or 415), the message the reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def json_content_type_refusal(content_type: str | None) -> str | None:
    """Why a request with this ``Content-Type`` header is not a JSON request, or ``None``
    when it is one (``application/json``, parameters such as ``charset`` allowed).

    A browser sends a cross-site ``text/plain`` or form POST without asking the server
    first (a CORS "simple" request); one sent as ``application/json`` is preceded by a
    preflight, which these servers do not allow (they send no CORS headers), so the
    browser never sends it. Requiring
    the JSON type is what keeps other sites' pages from posting to them."""
    if (content_type or "").split(";")[0].strip().lower() == "application/json":
        return None
    return f"Content-Type must be application/json, got {content_type or 'none'!r}"


async def read_json_body(request: Any, limit: int | None = None) -> bytes:
    """The raw body of ``request`` (a Starlette ``Request``), sent as JSON and at most
    ``limit`` bytes (default ``MAX_BODY_BYTES``), read only up to the limit: a
    ``Content-Length`` above it is refused before a byte of the body is read, and a
    streamed (chunked) body as soon as it passes it, so a huge body never sits in memory.

    Raises:
        BodyRefused: 415 the Content-Type is not ``application/json``
            (``json_content_type_refusal``); 400 a Content-Length that is not a byte
            count; 413 a body larger than ``limit``.
    """
    limit = MAX_BODY_BYTES if limit is None else limit
    why = json_content_type_refusal(request.headers.get("content-type"))
    if why is not None:
        raise BodyRefused(415, why)
    too_big = f"the body is larger than {limit} bytes, the most a request of this server takes"
    length = request.headers.get("content-length")
    if length is not None:
        if not length.isdigit():
            raise BodyRefused(400, f"Content-Length must be a byte count, got {length[:40]!r}")
        if int(length) > limit:  # refused before a byte of it is read
            raise BodyRefused(413, too_big)
    chunks, size = [], 0
    async for chunk in request.stream():  # a chunked body is read only up to the limit
        size += len(chunk)
        if size > limit:
            raise BodyRefused(413, too_big)
        chunks.append(chunk)
    return b"".join(chunks)
