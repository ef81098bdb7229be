"""docs/local-cluster.md and docs/testing.md describe the real `setpoint cluster serve` and plugin.

- the options table of docs/local-cluster.md names exactly the options of `setpoint cluster serve`;
- the fixture table of docs/testing.md names exactly the fixtures of `setpoint.testing.plugin`,
  with their scopes;
- the Python samples of both use names the code really has;
- the integration-test example of docs/testing.md passes, run by pytest as a user's project would.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from _pytest.fixtures import getfixturemarker

from setpoint.cli.cluster import serve
from setpoint.testing import plugin
from tests.docs.sample_checker import check_samples
from tests.docs.test_operations_reference import command_options

REPOSITORY = Path(__file__).resolve().parents[2]
LOCAL_CLUSTER = REPOSITORY / "docs" / "local-cluster.md"
TESTING = REPOSITORY / "docs" / "testing.md"
QUICKSTART_OPERATOR = REPOSITORY / "examples" / "quickstart" / "operator.py"
# The example starts a server and an operator per test; far above its usual ~3 s on 2 cores.
EXAMPLE_RUN_TIMEOUT_SECONDS = 90

_TABLE_ROW_FIRST_CELL = re.compile(r"^\| ([^|]*)\|", re.MULTILINE)
_BACKTICKED = re.compile(r"`([^`]+)`")
_FENCED_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_ANY_FENCED_BLOCK = re.compile(r"^```.*?^```\n", re.MULTILINE | re.DOTALL)


def section(text: str, heading: str) -> str:
    """The body of the Markdown section titled ``heading``, up to the next heading of its level
    or higher. Fenced code blocks are left out (their ``# comments`` are not headings)."""
    text = _ANY_FENCED_BLOCK.sub("", text)
    depth = len(heading.split(" ", 1)[0])
    title = re.search(rf"^{re.escape(heading)}\n", text, re.MULTILINE)
    if title is None:
        raise AssertionError(f"no section {heading!r}")
    start = title.end()
    following = re.search(rf"^#{{1,{depth}}} ", text[start:], re.MULTILINE)
    return text[start : start + following.start()] if following else text[start:]


def first_cells(table_text: str) -> list[str]:
    """The first cell of every table row, header and separator rows excluded."""
    cells = [match.group(1).strip() for match in _TABLE_ROW_FIRST_CELL.finditer(table_text)]
    return [cell for cell in cells if cell and not set(cell) <= {"-", " "}][1:]


def documented_options(text: str) -> set[str]:
    """Option names (``--port``) in the first column of the ``### Options`` table of ``text``."""
    rows = first_cells(section(text, "### Options"))
    names: set[str] = set()
    for cell in rows:
        for code in _BACKTICKED.findall(cell):
            names.add(code.split(" ", 1)[0])
    return names


def documented_fixtures(text: str) -> dict[str, str]:
    """``{fixture: scope}`` from the fixture table of the plugin section of ``text``."""
    body = section(text, "## The pytest plugin")
    fixtures: dict[str, str] = {}
    for match in re.finditer(r"^\| `(\w+)` \| (\w+) \|", body, re.MULTILINE):
        fixtures[match.group(1)] = match.group(2)
    return fixtures


def plugin_fixtures() -> dict[str, str]:
    """``{fixture: scope}`` of every fixture `setpoint.testing.plugin` defines."""
    fixtures: dict[str, str] = {}
    for attribute, value in vars(plugin).items():
        marker = getfixturemarker(value)
        if marker is not None:
            fixtures[marker.name or attribute] = str(marker.scope)
    return fixtures


def fenced_block(text: str, language: str, first_line: str) -> str:
    """The ```language block whose first line is ``first_line``."""
    for match in _FENCED_BLOCK.finditer(text):
        if match.group(1) == language and match.group(2).startswith(first_line + "\n"):
            return match.group(2)
    raise AssertionError(f"no ```{language} block starting with {first_line!r}")


def test_the_options_table_matches_the_serve_command_exactly() -> None:
    documented = documented_options(LOCAL_CLUSTER.read_text())
    assert documented, "the options table of docs/local-cluster.md was not found"
    assert documented == command_options(serve)


def test_the_fixture_table_matches_the_plugin_exactly() -> None:
    documented = documented_fixtures(TESTING.read_text())
    assert documented, "the fixture table of docs/testing.md was not found"
    assert documented == plugin_fixtures()


def test_the_table_readers_see_a_missing_option_and_a_wrong_scope() -> None:
    options = (
        "## Starting\n\n### Options\n\n| option | default | meaning |\n| --- | --- | --- |\n"
        "| `--port N` | `0` | p |\n| `--no-such-option` | | x |\n\n"
        "```sh\n# a comment, not a heading\n```\n\n"
        "| `--still-options` | after a code block |\n\n"
        "## Next\n\n| `--elsewhere` | not in the options section |\n"
    )
    assert documented_options(options) == {"--port", "--no-such-option", "--still-options"}
    assert documented_options(options) != command_options(serve)
    fixtures = (
        "## The pytest plugin\n\n| fixture | scope | what |\n| --- | --- | --- |\n"
        "| `local_cluster` | function | x |\n| `namespace` | function | y |\n\n## Next\n"
        "| `other` | session | z |\n"
    )
    assert documented_fixtures(fixtures) == {"local_cluster": "function", "namespace": "function"}
    assert documented_fixtures(fixtures) != plugin_fixtures()


def test_python_samples_use_names_the_code_has() -> None:
    for document in (LOCAL_CLUSTER, TESTING):
        count, problems = check_samples(document)
        assert count > 0, f"{document.name} has no ```python samples"
        assert problems == []


def test_the_foo_and_cnat_walkthrough_passes_without_warnings(tmp_path: Path) -> None:
    """The files of the walkthrough (and of the cluster-clock section), as a user's project,
    pass with warnings as errors (the documented configuration is warning-free)."""
    text = TESTING.read_text()
    project = tmp_path / "operators"
    (project / "tests").mkdir(parents=True)
    (project / "pyproject.toml").write_text(fenced_block(text, "toml", "# pyproject.toml"))
    for name in (
        "tests/conftest.py",
        "crds.py",
        "foo_operator.py",
        "cnat_operator.py",
        "tests/test_foo.py",
        "tests/test_cnat.py",
        "tests/test_on_the_cluster_clock.py",
    ):
        (project / name).write_text(fenced_block(text, "python", f"# {name}"))

    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-W",
            "error",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:hypothesispytest",
            "tests",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=EXAMPLE_RUN_TIMEOUT_SECONDS,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert re.search(r"\b5 passed\b", completed.stdout), completed.stdout
