"""What ``report.html`` reads from a directory someone sent, and how their strings land on the page.

A run directory may come from anyone: :class:`Files` reads its files as data and only where they are its own
(never through a link out of the directory, never a FIFO or a device, which would block the reader for ever);
:func:`markdown_page` renders its pages without raw HTML and with links and images only to its own files;
:func:`script_json` puts data inside a ``<script>`` element so that no string can end it or change the HTML
parser's state; :data:`CSP` is the page's Content-Security-Policy, a second wall behind the escaping.

======================  ================================================================================
:class:`Files`          the directory's files read as data (``read``, ``text``, ``json``, ``csv``, ``parquet``)
:func:`markdown_page`   a markdown page as HTML: no raw HTML, only the directory's own links and images
:func:`script_json`     JSON safe inside ``<script type="application/json">``
:func:`inside`          whether a path, every link resolved, is a regular file of a directory
:func:`plain_titles`    a chart spec's titles on one printable line (Vega-Lite parses them)
:data:`CSP`             the page's Content-Security-Policy
:class:`NotAReport`     a directory with nothing to report, or a summary that cannot be read
======================  ================================================================================
"""

from __future__ import annotations

import base64
import html
import json
import logging
import os
from pathlib import Path
from typing import Any

__all__ = ["CSP", "Files", "NotAReport", "inside", "markdown_page", "plain_titles", "script_json"]

log = logging.getLogger("simstudy")


class NotAReport(ValueError):
    """A directory with nothing to report (no ``summary.parquet`` and no page), or a ``report.html`` there
    that simstudy did not write (never replaced); the message is one line naming the directory and the fix.

    Examples
    --------
    >>> str(NotAReport("run_dir=x: no summary.parquet there"))
    'run_dir=x: no summary.parquet there'
    """


class Files:
    """The directory's files, read as data and only where they are its own: a file that is a link out of the
    directory or not a regular file (a FIFO would block its reader for ever) is skipped, and :attr:`notes`
    says so (the page shows them at its top, the terminal as warnings).

    Parameters
    ----------
    root : pathlib.Path
        The run (or sweep, or command) directory.

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     root = Path(d)
    ...     _ = (root / "run.json").write_text('{"kind": "demo"}')
    ...     os.symlink("/etc/hostname", root / "config.yaml")
    ...     files = Files(root)
    ...     files.json(root / "run.json"), files.read(root / "config.yaml"), len(files.notes)
    ({'kind': 'demo'}, None, 1)
    """

    def __init__(self, root: Path):
        self.root = root
        self.notes: list[str] = []

    def read(self, path: Path) -> bytes | None:
        """The file's bytes; None if it is missing, unreadable, or refused (with a note)."""
        from simstudy.io import NotARegularFile, open_regular

        try:
            with open_regular(path, inside=self.root) as fh:
                return fh.read()
        except NotARegularFile as exc:
            self.notes.append(str(exc))
            log.warning("report.html: %s", exc)
        except OSError:
            pass
        return None

    def text(self, path: Path) -> str | None:
        data = self.read(path)
        return None if data is None else data.decode("utf-8", errors="replace")

    def json(self, path: Path) -> dict:
        """A JSON object's contents; {} if missing, refused, not JSON or not an object."""
        text = self.text(path)
        try:
            data = json.loads(text) if text is not None else {}
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}

    def csv(self, path: Path):
        """A table as a frame; None if it is missing, refused (with a note) or not a CSV table."""
        import io

        import pandas as pd

        data = self.read(path)
        if data is None:
            return None
        try:
            return pd.read_csv(io.BytesIO(data))
        except (OSError, ValueError):
            return None

    def parquet(self, path: Path, what: str):
        """A summary as a frame; a file that is refused or not a parquet table raises :class:`NotAReport`."""
        import pandas as pd
        import pyarrow as pa

        from simstudy.io import NotARegularFile, open_regular

        try:
            with open_regular(path, inside=self.root) as fh:
                data = fh.read()
        except NotARegularFile as exc:
            raise NotAReport(f"{what}: {exc}: copy the file into the directory, or give another run_dir") from None
        except OSError as exc:
            raise NotAReport(f"{what}: {path} unreadable ({exc.strerror or exc})") from None
        try:
            return pd.read_parquet(pa.BufferReader(data))
        except (pa.ArrowException, ValueError, OSError) as exc:
            reason = " ".join(str(exc).split())[:200]
            raise NotAReport(
                f"{what}: {path} is not a parquet table ({type(exc).__name__}: {reason}): "
                f"rerun the study, or simstudy collect sweep_dir=... for a sweep"
            ) from None


#: The images a page may embed (from the run's own files), by suffix.
_IMAGES = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}


def _own_file(files: Files, page: Path, target: str) -> Path | None:
    """The file a page's link or image names, if it is a relative path to a regular file of the directory
    (no scheme such as ``http:`` or ``javascript:``, no ``//host``, no absolute path, not a link out of it)."""
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not parts.path or parts.path.startswith(("/", "\\")):
        return None
    path = page.parent / unquote(parts.path)
    return path if inside(files.root, path) else None


def inside(root: Path, path: Path) -> bool:
    """Whether ``path``, every link resolved, is a regular file in ``root``.

    Parameters
    ----------
    root : pathlib.Path
        The directory.
    path : pathlib.Path
        A path that may be a link, or pass through links.

    Returns
    -------
    bool
        True if the file it leads to exists, is a regular file and lies in ``root``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "a.txt").write_text("x")
    ...     inside(Path(d), Path(d) / "a.txt"), inside(Path(d), Path(d) / ".." / "etc")
    (True, False)
    """
    real = Path(os.path.realpath(path))
    return real.is_relative_to(Path(os.path.realpath(root))) and real.is_file()


def markdown_page(files: Files, path: Path) -> str | None:
    """A markdown page as HTML without raw HTML (escaped), its images of the directory's own files embedded
    as ``data:`` URIs and its links kept only to the directory's own files; any other image is shown as its
    alt text and any other link as its text, so that the offline page never loads or leads anywhere else.

    Parameters
    ----------
    files : Files
        The directory's reader (its root bounds every link and image).
    path : pathlib.Path
        The markdown page, in that directory.

    Returns
    -------
    str or None
        The page's HTML; None if the page was refused (``files.notes`` says why).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     page = Path(d) / "AUDIT.md"
    ...     _ = page.write_text("# A\\n\\n<img src=x>\\n\\n![t](http://example.org/t.png) [out](https://example.org)")
    ...     print(markdown_page(Files(Path(d)), page).strip())
    <h1>A</h1>
    <p>&lt;img src=x&gt;</p>
    <p>[image not shown: t] out</p>
    """
    text = files.text(path)
    if text is None:
        return None
    try:
        from markdown_it import MarkdownIt
        from markdown_it.token import Token
    except ImportError:
        return f"<pre>{html.escape(text)}</pre>"
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(text)
    for token in tokens:
        children = token.children or []
        for i, child in enumerate(children):
            if child.type == "image":
                src = child.attrGet("src")
                own = _own_file(files, path, src) if isinstance(src, str) else None
                mime = _IMAGES.get(own.suffix.lower()) if own is not None else None
                data = files.read(own) if own is not None and mime else None
                if data is not None:
                    child.attrSet("src", f"data:{mime};base64," + base64.b64encode(data).decode())
                else:  # a remote or foreign image: its alt text, not a fetch when the page is opened
                    children[i] = Token("text", "", 0, content=f"[image not shown: {child.content or src}]")
            elif child.type == "link_open":
                href = child.attrGet("href")
                if not (isinstance(href, str) and (href.startswith("#") or _own_file(files, path, href))):
                    children[i] = Token("text", "", 0, content="")
                    for j in range(i + 1, len(children)):  # its closing token: the link's text stays, as text
                        if children[j].type == "link_close" and children[j].level == child.level:
                            children[j] = Token("text", "", 0, content="")
                            break
    return md.renderer.render(tokens, md.options, {})


#: Characters that must not appear as themselves in JSON inside a script element: ``<`` (``</script``, ``<!--``
#: and ``<script`` change the HTML parser's state), ``>`` and ``&`` (for good measure, as Django and Rails
#: escape them), U+2028 and U+2029 (line terminators to older JavaScript). JSON allows ``\\uXXXX`` for each.
_SCRIPT_UNSAFE = {ord(c): f"\\u{ord(c):04x}" for c in "<>&\u2028\u2029"}


def script_json(value: Any) -> str:
    """``value`` as JSON safe to put between ``<script type="application/json">`` and ``</script>``: the
    characters of :data:`_SCRIPT_UNSAFE` as ``\\u`` escapes (only inside strings, the one place JSON has them),
    so that no string of the data can end the element or put the parser in a script-escape state.

    Parameters
    ----------
    value : object
        Data that :func:`json.dumps` takes (no NaN or infinity).

    Returns
    -------
    str
        Compact JSON with no ``<``, ``>``, ``&``, U+2028 or U+2029 as themselves.

    Examples
    --------
    >>> script_json(["<!--<script>", "a&b", "\\u2028"])
    '["\\\\u003c!--\\\\u003cscript\\\\u003e","a\\\\u0026b","\\\\u2028"]'
    """
    return json.dumps(value, separators=(",", ":"), allow_nan=False).translate(_SCRIPT_UNSAFE)


#: The page's Content-Security-Policy, a second wall behind the escaping: nothing is fetched from anywhere
#: (images only as ``data:``, no connections, no frames, forms or base URL), and scripts and styles only inline.
#: 'unsafe-eval': vega compiles its expressions with ``new Function``.
CSP = (
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src data:; '
    "style-src 'unsafe-inline'; script-src 'unsafe-inline' 'unsafe-eval'; base-uri 'none'; form-action 'none'\">"
)


def plain_titles(spec: Any) -> Any:
    r"""``spec`` with every ``title`` (a chart's, an axis', a legend's, a tooltip's: the user's names of keys and
    measures) on one printable line: Vega-Lite writes titles into the expressions of its default tooltips,
    where a U+2028 or a control character is a parse error that leaves the chart blank. Data are untouched.

    Parameters
    ----------
    spec : object
        A Vega-Lite spec (dicts and lists), or any part of one.

    Returns
    -------
    object
        The same structure, each ``title`` string made printable; ``data`` as it was.

    Examples
    --------
    >>> plain_titles({"title": "a\u2028b", "data": {"values": [{"title": "x\u2028"}]}})
    {'title': 'a b', 'data': {'values': [{'title': 'x\u2028'}]}}
    >>> plain_titles({"title": {"text": "a\u2028b", "subtitle": ["c\u2028"]}})  # a chart's notes too
    {'title': {'text': 'a b', 'subtitle': ['c ']}}
    """
    if isinstance(spec, list):
        return [plain_titles(v) for v in spec]
    if not isinstance(spec, dict):
        return spec
    out: dict[str, Any] = {}
    for key, value in spec.items():
        if key == "title" and isinstance(value, str):
            out[key] = "".join(c if c.isprintable() else " " for c in value)
        elif key == "title" and isinstance(value, dict):  # a title with a subtitle (a chart's notes): each line
            lines = value.get("subtitle")
            out[key] = {
                **value,
                "text": plain_titles({"title": value.get("text")})["title"],
                **(
                    {"subtitle": [plain_titles({"title": t})["title"] for t in lines]}
                    if isinstance(lines, list)
                    else {}
                ),
            }
        else:
            out[key] = value if key == "data" else plain_titles(value)
    return out
