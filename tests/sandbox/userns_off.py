"""Run a command as UID:GID where unprivileged user namespaces are switched off, without touching the host.

    python userns_off.py UID GID PROGRAM [ARGS...]      # run by root

A machine with `user.max_user_namespaces = 0` (or Debian's old `kernel.unprivileged_userns_clone = 0`),
reproduced for one process tree: root creates a user namespace that maps every uid to itself, sets
that namespace's own `user.max_user_namespaces` to 0 (the sysctl is per namespace, so the host's
value is untouched), drops to UID:GID and runs PROGRAM. There, bwrap's user namespace fails exactly
as it does on such a machine (ENOSPC) and /proc/sys/user/max_user_namespaces reads 0.
"""

from __future__ import annotations

import ctypes
import os
import sys

CLONE_NEWUSER = 0x10000000


def main() -> int:
    uid, gid, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    libc = ctypes.CDLL(None, use_errno=True)
    go_read, go_write = os.pipe()
    unshared_read, unshared_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            if libc.unshare(CLONE_NEWUSER) != 0:
                raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUSER)")
            os.write(unshared_write, b"u")
            os.read(go_read, 1)  # the parent has written our uid and gid maps
            with open("/proc/sys/user/max_user_namespaces", "w") as switch:
                switch.write("0")
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            os.execvpe(argv[0], argv, dict(os.environ))
        except BaseException as exc:  # noqa: BLE001 - the child must never return into the parent's code
            print(f"userns_off: {exc}", file=sys.stderr)
        os._exit(127)
    os.close(unshared_write)  # so that a child dying before it unshared reads as end-of-file here
    os.close(go_read)
    if os.read(unshared_read, 1) != b"u":
        os.waitpid(pid, 0)
        return 127
    for name in ("uid_map", "gid_map"):
        with open(f"/proc/{pid}/{name}", "w") as mapping:
            mapping.write("0 0 4294967295\n")
    os.write(go_write, b"g")
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
