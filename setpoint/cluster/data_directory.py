"""The data directory of a local cluster: private before anything is written in it.

``--data-dir`` holds every Secret, the admin token and the certificate authority's key, so it
must be the server user's own and closed to others, as etcd's data directory is
(``PrivateDirMode``, 0700). A new directory is created 0700 before the first file goes in. An
existing one is checked: owned by another user, or writable by group or others, it is refused
(another user could have planted an ``admin.token`` that would then work as admin, or swap
files under the server); readable by others, it is used with a warning (the user may share it
on purpose), and never changed.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import Final

log = logging.getLogger(__name__)

#: Owner only, as etcd's ``PrivateDirMode``.
DATA_DIR_MODE: Final = 0o700


class DataDirectoryError(RuntimeError):
    """The data directory cannot be used safely (a one-line message naming the fix)."""


def private_data_dir(data_dir: str | Path) -> Path:
    """``data_dir``, created owner-only (0700) if missing; :class:`DataDirectoryError` when an
    existing one belongs to another user or others may write in it."""
    directory = Path(data_dir).expanduser()
    try:
        if not directory.exists():
            directory.mkdir(mode=DATA_DIR_MODE, parents=True)
            # mkdir's mode passes through the umask; the directory must be 0700 whatever it is.
            os.chmod(directory, DATA_DIR_MODE)
            return directory
        info = os.stat(directory)
    except OSError as error:
        raise DataDirectoryError(
            f"cannot use the data directory {directory}: {error.strerror or error}"
        ) from error
    if not stat.S_ISDIR(info.st_mode):
        raise DataDirectoryError(f"the data directory {directory} is not a directory")
    owner = os.geteuid()
    if info.st_uid != owner:
        raise DataDirectoryError(
            f"the data directory {directory} belongs to uid {info.st_uid}, not to this user "
            f"(uid {owner}): its files would hold this cluster's credentials; use a directory "
            "of your own (--data-dir)"
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o022:
        raise DataDirectoryError(
            f"the data directory {directory} is writable by other users (mode {mode:o}): "
            f"'chmod 700 {directory}' to keep them out"
        )
    if mode & 0o077:
        log.warning(
            "data directory %s has permissions %o; it holds every Secret: "
            "'chmod 700 %s' to keep other users out",
            directory,
            mode,
            directory,
        )
    return directory
