"""Confining ``--run-pods`` containers: what a pod's processes can see and who they run as.

A container's command runs inside a bubblewrap (``bwrap``) sandbox: new user, mount, PID, IPC
and UTS namespaces, a root filesystem that holds only the system's programs and libraries
(``/usr`` and ``/etc`` read-only, fresh ``/proc``, ``/dev`` and ``/tmp``), the pod's working
directory and the volumes the pod spec mounts. The server's data directory, its credentials,
other pods' directories and the user's home are simply not there. When the server runs as root
the sandbox runs as ``nobody`` (65534), never as root.

The command runs under bwrap's small init (PID 1 of a new PID namespace, as ``docker run
--init`` does), which ends when the command ends; the kernel then ends every other process of
the namespace, backgrounded and ``setsid`` ones included. A stop is SIGTERM to the command (a
shell without a trap dies of it, as it would not as PID 1), then SIGKILL to the sandbox.
``kubectl exec``, exec probes and preStop hooks enter the same namespaces with ``nsenter``.

The network is not isolated: pods share the host's loopback (they reach the API server and
each other there). There are no resource limits (no cgroups).

Where ``bwrap`` or unprivileged user namespaces are missing, :func:`detect_isolation` says why
and the cluster runs pods unconfined only when told ``--run-pods=unsafe``.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

#: The unprivileged user (``nobody``) pods run as when the server runs as root.
UNPRIVILEGED_ID: Final = 65534
#: Host trees the sandbox sees read-only (``/bin``, ``/lib``… follow as links or binds).
SYSTEM_TREES: Final = ("/usr", "/etc")
MERGED_TREES: Final = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: How long the start-up check may take.
PROBE_TIMEOUT_SECONDS: Final = 10.0


@dataclass(frozen=True, slots=True)
class Mount:
    """A host directory or file the container sees at ``target``."""

    source: Path
    target: str
    read_only: bool = True


@dataclass(frozen=True, slots=True)
class Isolation:
    """How this machine confines pod processes (see the module docstring)."""

    #: Whether sandboxes can be made here; if not, ``reason`` says why.
    available: bool
    reason: str = ""
    #: The user and group the sandbox runs as (None: the server's own).
    uid: int | None = None
    gid: int | None = None
    #: Host paths masked with an empty tmpfs should they lie under a tree the sandbox sees.
    hidden: tuple[str, ...] = ()
    bwrap: str = "bwrap"
    nsenter: str = "nsenter"
    setpriv: str = "setpriv"

    def with_hidden(self, paths: Iterable[str | Path]) -> Isolation:
        """The same isolation also masking ``paths``."""
        return Isolation(
            self.available,
            self.reason,
            self.uid,
            self.gid,
            (*self.hidden, *(str(Path(p).expanduser().resolve()) for p in paths)),
            self.bwrap,
            self.nsenter,
            self.setpriv,
        )

    def _as_sandbox_user(self) -> list[str]:
        # setpriv, not Popen(user=...): dropping privileges in the child makes Python fork
        # the whole server instead of vfork (~8 ms more CPU per start for a 150 MiB server).
        if self.uid is None:
            return []
        gid = self.uid if self.gid is None else self.gid
        return [self.setpriv, f"--reuid={self.uid}", f"--regid={gid}", "--clear-groups"]

    def sandbox_argv(
        self,
        workdir: Path,
        mounts: Sequence[Mount],
        command: Sequence[str],
        info_fd: int,
    ) -> list[str]:
        """``bwrap`` running ``command`` with ``workdir`` (read-write, also its cwd) and
        ``mounts``; the host PID of the sandbox's init goes to ``info_fd`` as JSON
        (``child-pid``)."""
        argv = [
            *self._as_sandbox_user(),
            self.bwrap,
            "--unshare-user",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--new-session",
            "--die-with-parent",
            "--hostname",
            "pod",
        ]
        for tree in SYSTEM_TREES:
            if os.path.isdir(tree):
                argv += ["--ro-bind", tree, tree]
        for tree in MERGED_TREES:
            if os.path.islink(tree):
                argv += ["--symlink", os.readlink(tree), tree]
            elif os.path.isdir(tree):
                argv += ["--ro-bind", tree, tree]
        for hidden in self.hidden:
            if any(hidden == t or hidden.startswith(t + "/") for t in SYSTEM_TREES):
                argv += ["--tmpfs", hidden]
        argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", "/var/tmp"]
        argv += ["--bind", str(workdir), str(workdir)]
        for mount in mounts:
            argv += ["--ro-bind" if mount.read_only else "--bind", str(mount.source), mount.target]
        argv += ["--chdir", str(workdir), "--info-fd", str(info_fd), "--", *command]
        return argv

    def enter_argv(self, pid: int, command: Sequence[str]) -> list[str]:
        """``nsenter`` running ``command`` inside the sandbox whose init is host ``pid``, as
        the sandbox's user, in its root and working directory."""
        uid = os.getuid() if self.uid is None else self.uid
        gid = os.getgid() if self.gid is None else self.gid
        argv = [self.nsenter, f"--target={pid}", "--user", "--mount", "--pid", "--ipc", "--uts"]
        argv += ["--root", "--wd"]
        if self.uid is None:
            # Entering a namespace one owns: keep one's own (mapped) uid and gid.
            argv.append("--preserve-credentials")
        else:
            argv += [f"--setuid={uid}", f"--setgid={gid}"]
        return [*argv, "--", *command]


def detect_isolation(hidden: Iterable[str | Path] = ()) -> Isolation:
    """Whether pods can be sandboxed here: ``bwrap``, ``nsenter`` and ``setpriv`` installed,
    and a trial sandbox (as the user pods would run as) starts. The trial runs once per
    process; ``hidden`` paths are added to its answer."""
    return _detect().with_hidden(hidden)


@functools.cache
def _detect() -> Isolation:
    bwrap = shutil.which("bwrap")
    nsenter = shutil.which("nsenter")
    setpriv = shutil.which("setpriv")
    if bwrap is None:
        return Isolation(False, "bubblewrap (bwrap) is not installed")
    if nsenter is None or setpriv is None:
        return Isolation(False, "nsenter or setpriv (util-linux) is not installed")
    root = os.geteuid() == 0
    isolation = Isolation(
        True,
        uid=UNPRIVILEGED_ID if root else None,
        gid=UNPRIVILEGED_ID if root else None,
        bwrap=bwrap,
        nsenter=nsenter,
        setpriv=setpriv,
    )
    read, write = os.pipe()
    try:
        argv = isolation.sandbox_argv(Path("/tmp"), (), ["true"], write)
        trial = subprocess.run(
            argv,
            pass_fds=(write,),
            capture_output=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return Isolation(False, f"bwrap cannot start: {exc}")
    finally:
        os.close(read)
        os.close(write)
    if trial.returncode != 0:
        why = trial.stderr.decode(errors="replace").strip().splitlines()
        return Isolation(
            False,
            "bwrap cannot create a sandbox here"
            + (f" ({why[-1]})" if why else "")
            + ": unprivileged user namespaces may be disabled",
        )
    return isolation


def sandboxed_command(init_pid: int) -> int | None:
    """The host PID of the command a sandbox's init (host PID ``init_pid``) runs: its first
    child (None once it is gone)."""
    try:
        with open(f"/proc/{init_pid}/task/{init_pid}/children", encoding="ascii") as children:
            first = children.read().split()
    except OSError:
        return None
    return int(first[0]) if first else None
