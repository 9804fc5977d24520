"""Distributed DP-Helmet over SecAgg+ on a Flower deployment of separate processes on localhost.

Starts one ``flower-superlink`` and ``--users`` ``flower-supernode`` processes (node config
``partition-id=u``), submits the Flower App in ``trainers/flower/app`` with ``flwr run`` and
prints the ServerApp's JSON release (accuracy, guarantees, survivors, upload bytes, stage times).
The same commands, with each SuperNode on its own machine, ``--superlink <host>:<fleet port>``
and TLS instead of ``--insecure``, run the round on a real multi-machine deployment. Every
process this script starts is stopped at the end with its process group, and so are the SuperExecs
they start (a SuperNode's shares its group, the SuperLink's has its own). Ports: ``--base-port`` for the
SuperLink's HTTP APIs, + 1 for its health server and + 10 + u for SuperNode u's runtime API.
Run: ``PYTHONPATH=. python benchmarks/flower_localhost.py`` (about a minute or two).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time

APP = pathlib.Path(__file__).resolve().parent.parent / "trainers" / "flower" / "app"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=5, help="at least 3 (SecAgg+ needs threshold < shares)")
    parser.add_argument("--base-port", type=int, default=19100)
    parser.add_argument("--timeout", type=float, default=400.0)
    arguments = parser.parse_args()
    bin_dir = pathlib.Path(sys.executable).parent
    port = arguments.base_port
    with tempfile.TemporaryDirectory(prefix="dpmech-flower-") as work:
        work = pathlib.Path(work)
        environment = {**os.environ, "FLWR_HOME": str(work / "flwr-home"),
                       "PYTHONPATH": os.pathsep.join(filter(None, [str(APP.parent.parent.parent),
                                                                   os.environ.get("PYTHONPATH")]))}
        (work / "flwr-home").mkdir()
        (work / "flwr-home" / "config.toml").write_text(
            f'[superlink]\ndefault = "localhost"\n\n[superlink.localhost]\naddress = "127.0.0.1:{port}"\n'
            "insecure = true\n")
        processes = []

        def start(command, log_name):
            log = open(work / log_name, "w")
            # Its own session and process group, which the SuperExec it spawns (a plain child) joins, so that
            # stopping the group stops both; a SuperExec whose parent died on its own lingers for tens of seconds.
            processes.append(subprocess.Popen(command, env=environment, stdout=log, stderr=subprocess.STDOUT,
                                              start_new_session=True))

        try:
            # Flower >= 1.40 serves the SuperLink's Runtime, Fleet and Control APIs over one HTTP port.
            start([str(bin_dir / "flower-superlink"), "--insecure", "--disable-runtime-dependency-installation",
                   "--port", str(port), "--health-server-address", f"127.0.0.1:{port + 1}"], "superlink.log")
            time.sleep(5)
            for user in range(arguments.users):
                start([str(bin_dir / "flower-supernode"), "--insecure", "--superlink", f"127.0.0.1:{port}",
                       "--port", str(port + 10 + user),
                       "--node-config", f"partition-id={user} num-partitions={arguments.users}"],
                      f"supernode-{user}.log")
            output = work / "release.json"
            start_time = time.perf_counter()
            start([str(bin_dir / "flwr"), "run", str(APP), "localhost", "--stream", "--run-config",
                   f'num-users={arguments.users} reconstruction-threshold={arguments.users // 2 + 1} output="{output}"'],
                  "flwr-run.log")
            while not output.exists() and time.perf_counter() - start_time < arguments.timeout:
                if processes[-1].poll() is not None:  # flwr run ends with the run; the release is written before
                    time.sleep(2)
                    break
                time.sleep(1)
            if not output.exists():
                for log in sorted(work.glob("*.log")):
                    lines = [line for line in log.read_text().splitlines() if "Connection attempt failed" not in line]
                    print(f"--- {log.name}", *lines[-40:], sep="\n")
                raise SystemExit("the ServerApp wrote no release")
            print(f"Flower deployment on localhost: 1 SuperLink, {arguments.users} SuperNodes, "
                  f"{time.perf_counter() - start_time:.1f} s from flwr run to the release")
            print(json.dumps(json.loads(output.read_text()), indent=2))
        finally:
            # The SuperLink starts its SuperExec in a session of its own: its group is stopped too.
            groups = {process.pid for process in processes}.union(*(child_groups(process.pid)
                                                                       for process in processes))
            groups.discard(os.getpgrp())  # never this script's own group
            for group in groups:
                signal_group(group, signal.SIGTERM)
            deadline = time.monotonic() + 20
            while any(group_alive(group) for group in groups) and time.monotonic() < deadline:
                for process in processes:
                    process.poll()  # reaps a leader, so that an exited group reads as empty
                time.sleep(0.2)
            for group in groups:
                signal_group(group, signal.SIGKILL)
            for process in processes:
                process.wait()


def child_groups(parent: int) -> set:
    """The process groups of ``parent``'s running child processes (listed by ``pgrep -P``)."""
    listed = subprocess.run(["pgrep", "-P", str(parent)], capture_output=True, text=True, check=False)
    groups = set()
    for child in listed.stdout.split():
        try:
            groups.add(os.getpgid(int(child)))
        except ProcessLookupError:  # it exited after the listing
            continue
    return groups


def signal_group(group: int, number: int) -> None:
    """Send signal ``number`` to every process of process group ``group`` (none left: nothing to do)."""
    try:
        os.killpg(group, number)
    except ProcessLookupError:
        pass


def group_alive(group: int) -> bool:
    """Whether process group ``group`` still has a process (signal 0 checks without sending)."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


if __name__ == "__main__":
    main()
