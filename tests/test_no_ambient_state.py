"""No ambient context variables steer a run (issue 35): what a run needs is passed to it, so that a reader follows
the flow from the call (the run directory's ``RunDir`` and ``created=``, the precision rule's ``stage=``, the
plug-in paths a stored config may import: ``config.parse(cfg, trusted=...)``).

No ``ContextVar(`` is left in simstudy/, and a new one fails."""

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "simstudy"

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


def test_no_context_variable_steers_a_run():
    found = {f"{module}:{line} {name}" for (module, name), line in _context_variables().items()}
    assert not found, f"context variables as hidden control flow: {sorted(found)}; pass the state as an argument"


def test_the_check_finds_a_context_variable(tmp_path):
    text = 'import contextvars\n_X: contextvars.ContextVar[bool] = contextvars.ContextVar("x", default=False)\n'
    assert [m.group(1) for m in _DEFINITION.finditer(text)] == ["_X"]
    assert [m.group(1) for m in _DEFINITION.finditer('_Y = ContextVar("y")\n')] == ["_Y"]
