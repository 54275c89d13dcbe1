"""No ambient context variables steer a run (issue 35): what a run needs is passed to it, so that a reader follows
the flow from the call (the run directory's ``RunDir`` and ``created=``, the precision rule's ``stage=``).

Every ``ContextVar(`` in simstudy/ is listed below with the reason it is still there; a new one fails, and so does
a listed one that is gone (the list only shrinks)."""

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "simstudy"

#: (module, variable) -> why it is still a context variable. Remove an entry with the variable.
ALLOWED = {
    # which plug-in paths a stored config (collect, replay) may import: threading trusted= from config.parse down
    # to every import site (distributions, estimators, band and selection checks) is the follow-up
    ("_imports.py", "_TRUSTED"): "the trust of a stored config's plug-in paths",
}

_DEFINITION = re.compile(r"^\s*(\w+)\s*(?::[^=]*)?=\s*(?:contextvars\.)?ContextVar\(", re.M)


def _context_variables() -> dict[tuple[str, str], int]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for m in _DEFINITION.finditer(text):
            found[(str(path.relative_to(PACKAGE)), m.group(1))] = text.count("\n", 0, m.start()) + 1
        assert text.count("ContextVar(") == len(_DEFINITION.findall(text)), (
            f"{path}: a ContextVar( not assigned to a name"
        )
    return found


def test_no_context_variable_steers_a_run_but_the_listed_ones():
    found = _context_variables()
    new = {f"{module}:{line} {name}" for (module, name), line in found.items() if (module, name) not in ALLOWED}
    assert not new, f"context variables as hidden control flow: {sorted(new)}; pass the state as an argument"
    gone = set(ALLOWED) - set(found)
    assert not gone, f"listed but gone (remove them from ALLOWED): {sorted(gone)}"


def test_the_check_finds_a_context_variable(tmp_path):
    text = 'import contextvars\n_X: contextvars.ContextVar[bool] = contextvars.ContextVar("x", default=False)\n'
    assert [m.group(1) for m in _DEFINITION.finditer(text)] == ["_X"]
    assert [m.group(1) for m in _DEFINITION.finditer('_Y = ContextVar("y")\n')] == ["_Y"]
