"""The browser pages: ``/`` (the query page), ``/live`` (detections as they arrive) and the
files under ``/static/`` they load, all shipped inside the package (``reasoner/server/static``,
read with :mod:`importlib.resources`; nothing is fetched from elsewhere, at build or run time).

Every page answer carries a Content-Security-Policy that lets the browser run only scripts
and styles served from here and connect only back to this server, so a query result can
never make the page load or send anything elsewhere.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable

from reasoner.server.errors import EndpointError

# The one inline style allowed, by its hash: the fixed <style> element that YASGUI's table
# column resizer adds (from the shipped yasgui.min.js; text ".grip-resizable{table-layout:...").
_YASGUI_RESIZER_STYLE = "'sha256-zCK2EVMoPc04mRF/g5CotUvxbJPWS+8V0b+s9ptqQIk='"

#: The policy sent with every page and static file.
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; script-src 'self'; style-src 'self' {_YASGUI_RESIZER_STYLE}; "
    "img-src 'self' data:; "
    "font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)

#: The page at each path.
PAGES = {"/": "index.html", "/live": "live.html"}

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".geojson": "application/geo+json",
    ".svg": "image/svg+xml",
}


def static_root() -> Traversable:
    """The folder of shipped page files (a package resource)."""
    return files("reasoner.server") / "static"


@cache
def asset(name: str) -> tuple[bytes, str]:
    """A shipped file's bytes and media type, by its path below ``static/``.

    Args:
        name: e.g. ``"live.js"`` or ``"vendor/yasgui.min.js"``.
    Returns:
        the content and its ``Content-Type``.
    Raises:
        EndpointError: 404 for anything that is not a shipped file of a served type
            (``..``, hidden files and unknown extensions included).

    >>> asset("index.html")[1]
    'text/html; charset=utf-8'
    """
    parts = name.split("/")
    suffix = "." + name.rpartition(".")[2]
    if suffix not in _TYPES or any(not part or part.startswith(".") for part in parts):
        raise EndpointError(404, f"no file /static/{name}")
    resource = static_root().joinpath(*parts)
    if not resource.is_file():
        raise EndpointError(404, f"no file /static/{name}")
    return resource.read_bytes(), _TYPES[suffix]


def page_headers(content_type: str) -> dict[str, str]:
    """Headers of a page or static answer: its type, the policy, no sniffing, caching.

    >>> page_headers("text/css")["X-Content-Type-Options"]
    'nosniff'
    """
    return {
        "Content-Type": content_type,
        "Content-Security-Policy": CONTENT_SECURITY_POLICY,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",
    }
