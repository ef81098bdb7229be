"""The data directory and the audit log are private to the server's user (issue: semantics and
safety, findings 5-7): created owner-only before anything is written, and a directory another
user owns or may write in is refused rather than trusted."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from setpoint.cli.main import cli
from setpoint.cluster.data_directory import DataDirectoryError, private_data_dir
from setpoint.cluster.local_cluster import LocalCluster


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The usual umask (022): what a data directory got from it was 0755."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


async def test_a_new_data_directory_is_created_owner_only(tmp_path: Path, open_umask: None) -> None:
    data_dir = tmp_path / "nested" / "cluster"
    async with LocalCluster(in_memory=False, data_dir=data_dir):
        pass
    assert _mode(data_dir) == 0o700
    assert _mode(data_dir / "admin.token") == 0o600


async def test_the_audit_log_is_created_owner_only(tmp_path: Path, open_umask: None) -> None:
    log = tmp_path / "audit.jsonl"
    async with LocalCluster(controllers=False, audit_log=log):
        pass
    assert _mode(log) == 0o600


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")
async def test_a_data_directory_of_another_user_is_refused(tmp_path: Path) -> None:
    planted = tmp_path / "planted"
    planted.mkdir(mode=0o700)
    (planted / "admin.token").write_text("planted-by-someone-else\n")
    os.chown(planted, 4242, 4242)
    with pytest.raises(DataDirectoryError, match="belongs to uid 4242, not to this user"):
        async with LocalCluster(in_memory=False, data_dir=planted, token=None):
            pass
    assert (planted / "admin.token").read_text() == "planted-by-someone-else\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")
def test_the_cli_refuses_another_users_data_directory_in_one_line(tmp_path: Path) -> None:
    planted = tmp_path / "planted"
    planted.mkdir(mode=0o700)
    os.chown(planted, 4242, 4242)
    result = CliRunner().invoke(cli, ["cluster", "serve", "--data-dir", str(planted)])
    assert result.exit_code == 1
    assert "belongs to uid 4242" in result.output
    assert "Traceback" not in result.output
    result = CliRunner().invoke(
        cli, ["cluster", "user-kubeconfig", "--data-dir", str(planted), "--user", "x", "-o", "x"]
    )
    assert result.exit_code == 1
    assert "belongs to uid 4242" in result.output


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777])
def test_a_data_directory_others_may_write_in_is_refused(tmp_path: Path, mode: int) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, mode)
    with pytest.raises(DataDirectoryError, match=f"writable by other users .*'chmod 700 {shared}'"):
        private_data_dir(shared)
    assert _mode(shared) == mode  # never changed behind the user's back


def test_a_data_directory_others_may_read_is_used_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    readable = tmp_path / "readable"
    readable.mkdir()
    os.chmod(readable, 0o755)
    with caplog.at_level(logging.WARNING):
        assert private_data_dir(readable) == readable
    assert "chmod 700" in caplog.text
    assert _mode(readable) == 0o755


def test_a_file_is_not_a_data_directory(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("")
    with pytest.raises(DataDirectoryError, match="is not a directory"):
        private_data_dir(a_file)
