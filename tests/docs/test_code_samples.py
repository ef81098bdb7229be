"""Every Python sample in the runtime docs and the README uses names the code really has."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.sample_checker import check_samples

REPOSITORY = Path(__file__).resolve().parents[2]
DOCUMENTS = [
    "docs/runtime.md",
    "docs/client.md",
    "docs/operations.md",
    "docs/composite-controllers.md",
    "docs/ansible-operators.md",
    "README.md",
]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_python_samples_match_the_api(document: str) -> None:
    count, problems = check_samples(REPOSITORY / document)
    assert count > 0, f"{document} has no ```python samples"
    assert problems == []


def test_the_checker_catches_a_wrong_keyword_and_a_missing_name(tmp_path: Path) -> None:
    document = tmp_path / "wrong.md"
    document.write_text(
        "```python\n"
        "from setpoint.controller import create_or_patch, no_such_helper\n"
        "op.reconciler(for_=('v1', 'ConfigMap'), max_concurrency=2)\n"
        "await ctx.client.apply(obj, fieldManager='x')\n"
        "setpoint.Operatorr('x')\n"
        "```\n"
    )
    count, problems = check_samples(document)
    assert count == 1
    assert len(problems) == 4, problems
    assert "no 'no_such_helper'" in problems[0]
    assert "max_concurrency" in problems[1]
    assert "fieldManager" in problems[2]
    assert "Operatorr" in problems[3]
