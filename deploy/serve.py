"""Serve a class from one machine: N Streamlit processes behind HAProxy with sticky sessions.

    python deploy/serve.py 2                 # two processes (one per core), the class opens http://HOST:8501
    python deploy/serve.py 2 --address 0.0.0.0 --port 8501

One Streamlit process runs every session's script under one Python interpreter (one GIL), so it uses about
one core; N processes use N. This starts N `streamlit run streamlit_app.py` processes on loopback ports
(PORT+101 ... PORT+100+N) with the container's flags (deploy/Dockerfile's CMD), writes an HAProxy config
from deploy/haproxy/haproxy.cfg.template (a sticky cookie, health checks on /_stcore/health, websockets
with a long tunnel timeout: the shape of deploy/k8s/attention-lab.yaml) and runs Debian's haproxy in the
foreground on ADDRESS:PORT. A Streamlit process that exits is started again on its port (at most
--max-restarts times), as Kubernetes restarts a pod; meanwhile HAProxy sends its students to the others.
Ctrl-C or SIGTERM stops HAProxy and every Streamlit process.

It prints the addresses students can open: for the default 0.0.0.0 (every interface), this machine's own
network addresses, since no browser on another machine can open 0.0.0.0. The logs (each Streamlit process's
and the HAProxy config) are kept after it stops, in --logs or a new folder under the system's temporary folder.

--state FILE writes the process ids and the address as JSON (rewritten after a restart), for
bench/load_test.py to sum memory and CPU over the whole set.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import json
import os
import shutil
import signal
import socket
import string
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = Path(__file__).resolve().parent / "haproxy" / "haproxy.cfg.template"
# deploy/Dockerfile's CMD, minus address and port (tests/system/test_load_smoke.py checks they agree).
STREAMLIT_FLAGS = ("--server.headless", "true", "--server.fileWatcherType", "none")
HAPROXY_CANDIDATES = ("haproxy", "/usr/sbin/haproxy")


def find_haproxy() -> str | None:
    """The haproxy binary: $HAPROXY if set (None when that is not an executable), else PATH or /usr/sbin."""
    if "HAPROXY" in os.environ:
        return shutil.which(os.environ["HAPROXY"])
    for name in HAPROXY_CANDIDATES:
        if path := shutil.which(name):
            return path
    return None


def haproxy_config(bind: str, ports: list[int]) -> str:
    servers = "\n".join(f"    server s{i} 127.0.0.1:{port} cookie s{i}" for i, port in enumerate(ports, 1))
    return string.Template(TEMPLATE.read_text()).substitute(bind=bind, servers=servers)


def machine_addresses() -> list[str]:
    """This machine's IPv4 addresses that another machine may reach (no loopback, no link-local), the one the
    default route leaves by first."""
    found = []
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # a documentation address: connect() on UDP picks a route, sends nothing
        found.append(probe.getsockname()[0])
    found += interface_addresses()
    with contextlib.suppress(OSError):
        found += [info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)]
    return [a for a in dict.fromkeys(found) if reachable(a)]


def interface_addresses() -> list[str]:
    """Each network interface's IPv4 address (Linux: the SIOCGIFADDR ioctl; elsewhere none)."""
    try:
        import fcntl
    except ImportError:
        return []
    out = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        for _, name in socket.if_nameindex():
            with contextlib.suppress(OSError):
                request = struct.pack("256s", name.encode()[:15])
                out.append(socket.inet_ntoa(fcntl.ioctl(sock.fileno(), 0x8915, request)[20:24]))  # SIOCGIFADDR
    return out


def reachable(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    return not (ip.is_loopback or ip.is_link_local or ip.is_unspecified)


def student_urls(address: str, port: int) -> list[str]:
    """What to hand out: http://ADDRESS:PORT, or for 0.0.0.0 (every interface) one per address of this machine."""
    if address not in ("0.0.0.0", "::", ""):
        return [f"http://{f'[{address}]' if ':' in address else address}:{port}"]
    return [f"http://{a}:{port}" for a in machine_addresses()]


def healthy(port: int, timeout: float = 2) -> bool:
    with contextlib.suppress(OSError):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=timeout) as response:
            return response.read() == b"ok"
    return False


class Set:
    """The N Streamlit processes and HAProxy in front of them."""

    def __init__(self, n: int, address: str, port: int, first_port: int, logs: Path, state: Path | None,
                 haproxy: str, extra: tuple[str, ...] = ()):
        self.ports = [first_port + i for i in range(n)]
        self.address, self.port, self.logs, self.state, self.haproxy = address, port, logs, state, haproxy
        self.extra = extra
        self.streamlits: dict[int, subprocess.Popen] = {}
        self.proxy: subprocess.Popen | None = None
        self.restarts = 0

    def start_streamlit(self, port: int) -> None:
        log = open(self.logs / f"streamlit-{port}.log", "ab")
        args = [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.address", "127.0.0.1",
                "--server.port", str(port), *STREAMLIT_FLAGS, *self.extra]
        # Its own process group: Ctrl-C in this terminal reaches only this script, which stops the rest in order.
        self.streamlits[port] = subprocess.Popen(args, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                                 stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()

    def wait_healthy(self, ports: list[int], timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        waiting = set(ports)
        while waiting and time.monotonic() < deadline:
            for port in sorted(waiting):
                if self.streamlits[port].poll() is not None:
                    raise RuntimeError(f"streamlit on {port} exited: see {self.logs}/streamlit-{port}.log")
                if healthy(port):
                    waiting.discard(port)
            time.sleep(0.3)
        if waiting:
            raise RuntimeError(f"streamlit on {sorted(waiting)} not healthy after {timeout:.0f} s "
                               f"(logs in {self.logs})")

    def start(self) -> None:
        for port in self.ports:
            self.start_streamlit(port)
        self.wait_healthy(self.ports)
        config = self.logs / "haproxy.cfg"
        config.write_text(haproxy_config(f"{self.address}:{self.port}", self.ports))
        subprocess.run([self.haproxy, "-c", "-q", "-f", str(config)], check=True,
                       stdout=subprocess.DEVNULL)
        # -db: foreground, no daemon; its log (a process going down or up) goes to this terminal's stderr.
        self.proxy = subprocess.Popen([self.haproxy, "-db", "-f", str(config)], stdin=subprocess.DEVNULL,
                                      start_new_session=True)
        deadline = time.monotonic() + 15
        while not healthy(self.port) and time.monotonic() < deadline:
            if self.proxy.poll() is not None:
                raise RuntimeError(f"haproxy exited with {self.proxy.returncode}")
            time.sleep(0.2)
        self.write_state()

    def write_state(self) -> None:
        if self.state is None:
            return
        state = {"url": f"http://127.0.0.1:{self.port}", "bind": f"{self.address}:{self.port}",
                 "haproxy_pid": self.proxy.pid if self.proxy else None, "logs": str(self.logs),
                 "streamlit": {str(port): proc.pid for port, proc in self.streamlits.items()},
                 "restarts": self.restarts}
        tmp = self.state.with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        tmp.replace(self.state)  # readers never see half a file

    def watch(self, max_restarts: int) -> int:
        """Until HAProxy exits or a signal arrives: restart a Streamlit process that has exited."""
        while True:
            if self.proxy.poll() is not None:
                print(f"haproxy exited with {self.proxy.returncode}", file=sys.stderr, flush=True)
                return self.proxy.returncode or 1
            for port, proc in list(self.streamlits.items()):
                if proc.poll() is not None:
                    if self.restarts >= max_restarts:
                        print(f"streamlit on {port} exited ({proc.returncode}); not restarted "
                              f"({self.restarts} restarts so far)", file=sys.stderr, flush=True)
                        continue
                    self.restarts += 1
                    print(f"streamlit on {port} exited ({proc.returncode}); starting it again", file=sys.stderr,
                          flush=True)
                    self.start_streamlit(port)
                    self.write_state()
            time.sleep(0.5)

    def stop(self) -> None:
        procs = [p for p in (self.proxy, *self.streamlits.values()) if p is not None]
        for proc in procs:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for proc in procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        if self.state is not None:
            self.state.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("processes", type=int, nargs="?", default=os.cpu_count() or 1,
                        help="Streamlit processes (default: one per core)")
    parser.add_argument("--address", default="0.0.0.0", help="where HAProxy listens (default 0.0.0.0)")
    parser.add_argument("--port", type=int, default=8501, help="HAProxy's port (default 8501)")
    parser.add_argument("--first-port", type=int, help="the first Streamlit process's loopback port "
                        "(default PORT+101)")
    parser.add_argument("--state", type=Path, help="write the process ids here as JSON while running")
    parser.add_argument("--logs", type=Path, help="keep the logs here (default: a new folder under the system's "
                        "temporary folder)")
    parser.add_argument("--max-restarts", type=int, default=20,
                        help="restart exited Streamlit processes at most this many times in all (default 20)")
    parser.add_argument("--server-arg", action="append", default=[], metavar="FLAG=VALUE",
                        help="extra streamlit flag, e.g. --server-arg=--runner.postScriptGC=true (repeatable)")
    args = parser.parse_args(argv)
    if args.processes < 1:
        parser.error("at least one process")
    haproxy = find_haproxy()
    if haproxy is None:
        print("haproxy is not installed: apt-get install haproxy (Debian's package)", file=sys.stderr)
        return 2
    if args.logs:
        args.logs.mkdir(parents=True, exist_ok=True)
    logs = args.logs or Path(tempfile.mkdtemp(prefix="attention-lab-serve-"))
    extra = tuple(part for flag in args.server_arg for part in flag.split("=", 1))
    served = Set(args.processes, args.address, args.port, args.first_port or args.port + 101, logs, args.state,
                 haproxy, extra)

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, on_signal)
    try:
        served.start()
        print(f"Attention Lab: {args.processes} Streamlit processes on 127.0.0.1:{served.ports[0]}-"
              f"{served.ports[-1]} behind HAProxy on {args.address}:{args.port} (logs in {logs}); "
              f"Ctrl-C stops them all", flush=True)
        urls = student_urls(args.address, args.port)
        if urls:
            print("Students open " + " or ".join(urls), flush=True)
        else:
            print(f"No network address found: only this machine can open http://127.0.0.1:{args.port}", flush=True)
        code = served.watch(args.max_restarts)
    except KeyboardInterrupt:
        code = 0
    finally:
        # A second signal while stopping must not leave processes behind.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        served.stop()
        print(f"Stopped; the logs are in {logs}", file=sys.stderr, flush=True)
    return code

if __name__ == "__main__":
    sys.exit(main())
