"""The version is set in one place, pyproject.toml; the package, the docs and the changelog agree with it."""

import re
import tomllib
from pathlib import Path

import simstudy

ROOT = Path(__file__).resolve().parent.parent


def _pyproject_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_the_package_reports_the_pyproject_version():
    # An editable install reads the version from its metadata, written from pyproject.toml at install time.
    assert simstudy.__version__ == _pyproject_version()


def test_the_newest_changelog_release_is_the_version():
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert releases, "CHANGELOG.md has no '## [X.Y.Z] - YYYY-MM-DD' release heading"
    assert releases[0][0] == _pyproject_version()


def test_the_package_ships_its_type_information():
    assert (Path(simstudy.__file__).parent / "py.typed").is_file()
