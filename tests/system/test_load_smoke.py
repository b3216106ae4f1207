"""A small class on the real server, and the deployment files that run it.

The load smoke test is a short bench/load_test.py: the server started with the container's own command
line (deploy/Dockerfile's CMD, on a loopback port), five students on one page for ten seconds over
Streamlit's websocket protocol. Every rerun must finish without an exception, p95 must stay under a
generous bound, and the server must still be healthy afterwards. The long runs and the figures are in
bench/ and docs/LOAD.md.

The deployment checks parse what can be parsed without Docker or a cluster: the Dockerfile installs the
requirements.txt the README names and runs the README's entry point; its HEALTHCHECK command passes
against the running server; the Kubernetes probes point at Streamlit's health endpoint on the container's
port, and the load balancer keeps a browser on one pod.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import socket
import subprocess
import sys
import time

import pytest

from bench.load_test import Result, percentile, student
from bench.streamlit_client import Server, Session
from tests.apptest_helpers import ROOT, numbered_title
from ui.compute import warm

pytestmark = pytest.mark.timeout(180)

DOCKERFILE = ROOT / "deploy" / "Dockerfile"
MANIFESTS = ROOT / "deploy" / "k8s" / "attention-lab.yaml"
README = ROOT / "README.md"
STUDENTS = 5
SECONDS = 10
P95_BOUND_S = 5.0


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    pairs = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            pairs.append((word.upper(), rest.strip()))
    return pairs


def exec_form(args: str) -> list[str]:
    """The JSON array of an exec-form CMD or HEALTHCHECK CMD."""
    return json.loads(args[args.index("["):])


def container_command() -> list[str]:
    return exec_form(next(args for word, args in dockerfile_instructions() if word == "CMD"))


def server_flags() -> tuple[str, ...]:
    """The container's streamlit flags minus address and port (the test server binds a loopback port)."""
    cmd = container_command()
    flags = cmd[cmd.index("streamlit_app.py") + 1:]
    pairs = list(zip(flags[::2], flags[1::2]))
    return tuple(x for name, value in pairs if name not in ("--server.address", "--server.port")
                 for x in (name, value))


@pytest.fixture(scope="module")
def server():
    srv = Server.start(extra=server_flags())
    try:
        yield srv
    finally:
        srv.stop()


# ---- the load smoke test --------------------------------------------------------------------------------


async def small_class(url: str) -> Result:
    result = Result(sessions=STUDENTS, post_script_gc=False, duration_s=SECONDS, pages=["qkv"])
    # The first visitor pays for the imports and the caches; the class arrives after.
    session, first = await Session.open(url, "qkv")
    await session.close()
    assert first.title == numbered_title("qkv") and not first.exceptions, first
    start = time.monotonic()
    await asyncio.gather(*[student(i, url, "qkv", start + 0.2 * i, start + SECONDS, random.Random(i), result)
                           for i in range(STUDENTS)])
    return result


def test_five_students_move_sliders_for_ten_seconds(server):
    result = asyncio.run(small_class(server.url))
    assert not result.failures, result.failures
    assert not result.exceptions, result.exceptions
    assert len(result.opens) == STUDENTS
    assert len(result.moves) >= STUDENTS * 2, f"only {len(result.moves)} slider moves were timed"
    assert percentile(result.moves, 95) < P95_BOUND_S, sorted(result.moves)
    assert server.health() == "ok"
    assert server.proc.poll() is None


def test_health_endpoint_answers_ok(server):
    assert server.health() == "ok"


def test_a_student_gets_every_page_without_an_exception(server):
    async def tour():
        session, render = await Session.open(server.url, "")
        try:
            renders = {"": render}
            for page in [p for p in session.pages if p]:
                renders[page] = await session.rerun(page=page)
            return renders
        finally:
            await session.close()

    renders = asyncio.run(tour())
    assert len(renders) >= 2
    for page, render in renders.items():
        assert render.status == "FINISHED_SUCCESSFULLY" and not render.exceptions, (page, render.exceptions)
        assert render.title, f"page {page!r} showed no title"


# ---- the deployment files -------------------------------------------------------------------------------


def test_dockerfile_installs_the_requirements_the_readme_names():
    readme = README.read_text()
    run_line = next(line for line in readme.splitlines() if "streamlit run" in line)
    requirements = re.search(r"pip install -r (\S+)", run_line).group(1)
    instructions = dockerfile_instructions()
    copies = [args for word, args in instructions if word == "COPY"]
    runs = [args for word, args in instructions if word == "RUN"]
    assert any(args.split()[0] == requirements for args in copies), copies
    assert any(re.search(rf"pip install (.* )?-r {re.escape(requirements)}\b", args) for args in runs), runs
    assert (ROOT / requirements).exists()


def test_dockerfile_runs_the_readme_entry_point_on_all_interfaces():
    readme_cmd = re.search(r"streamlit run (\S+)", README.read_text()).group(1)
    cmd = container_command()
    assert cmd[:3] == ["streamlit", "run", readme_cmd], cmd
    flags = dict(zip(cmd[3::2], cmd[4::2]))
    assert flags["--server.address"] == "0.0.0.0"
    assert flags["--server.port"] == "8501"
    assert flags["--server.headless"] == "true"
    base = next(args for word, args in dockerfile_instructions() if word == "FROM")
    assert re.fullmatch(r"python:3\.1[1-9](\.\d+)?-slim(-\w+)?", base), base


def test_dockerfile_copies_everything_the_app_reads():
    copied = {args.split()[0].rstrip("/") for word, args in dockerfile_instructions() if word == "COPY"}
    # classroom: a st.Page path
    needed = {"streamlit_app.py", ".streamlit", "core", "ui", "store", "lessons", "classroom"}
    assert needed <= copied, needed - copied
    # Every local package the entry point and the lessons import is among them.
    sources = [ROOT / "streamlit_app.py", *sorted((ROOT / "lessons").rglob("*.py")),
               *sorted((ROOT / "ui").rglob("*.py"))]
    imported = {m for path in sources for m in re.findall(r"^(?:from|import) (\w+)", path.read_text(), re.M)}
    local = {name for name in imported if (ROOT / name).is_dir() or (ROOT / f"{name}.py").exists()}
    assert local <= copied, local - copied


def test_the_build_context_keeps_what_the_dockerfile_copies():
    """deploy/Dockerfile.dockerignore excludes everything, then lets back in exactly what COPY needs."""
    lines = [line.strip() for line in (DOCKERFILE.parent / "Dockerfile.dockerignore").read_text().splitlines()]
    patterns = [line for line in lines if line and not line.startswith("#")]
    assert patterns[0] == "**"
    kept = {p[1:].rstrip("/") for p in patterns if p.startswith("!")}
    copied = {args.split()[0].rstrip("/") for word, args in dockerfile_instructions() if word == "COPY"}
    assert copied <= kept, copied - kept


def test_dockerfile_healthcheck_passes_against_a_running_server(server):
    check = next(args for word, args in dockerfile_instructions() if word == "HEALTHCHECK")
    cmd = exec_form(check[check.index("CMD"):])
    assert "/_stcore/health" in " ".join(cmd)
    cmd = [sys.executable if part == "python" else part.replace("127.0.0.1:8501", f"127.0.0.1:{server.port}")
           for part in cmd]
    assert subprocess.run(cmd, timeout=30).returncode == 0


def test_dockerfile_healthcheck_fails_without_a_server():
    check = next(args for word, args in dockerfile_instructions() if word == "HEALTHCHECK")
    cmd = exec_form(check[check.index("CMD"):])
    # Bound and never listening: the port refuses connections, and no server started meanwhile can take it.
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        cmd = [sys.executable if part == "python" else part.replace("127.0.0.1:8501", f"127.0.0.1:{port}")
               for part in cmd]
        assert subprocess.run(cmd, timeout=30, capture_output=True).returncode != 0


def manifest_documents() -> list[str]:
    return [doc for doc in re.split(r"^---\s*$", MANIFESTS.read_text(), flags=re.M) if "kind:" in doc]


def test_manifests_parse_as_yaml_and_hang_together():
    yaml = pytest.importorskip("yaml")  # in requirements-dev.txt; the regex checks below need no parser
    docs = {doc["kind"]: doc for doc in yaml.safe_load_all(MANIFESTS.read_text()) if doc}
    assert {"Deployment", "Service", "Ingress"} <= set(docs)
    deployment, service, ingress = docs["Deployment"], docs["Service"], docs["Ingress"]
    pod = deployment["spec"]["template"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    (container,) = pod["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert 8501 in ports.values()
    # up (startup, liveness): Streamlit's health; ready for students: the warm-up has ended (ui/compute/warm.py)
    paths = {"startupProbe": "/_stcore/health", "readinessProbe": warm.READY_PATH, "livenessProbe": "/_stcore/health"}
    for probe, path in paths.items():
        get = container[probe]["httpGet"]
        assert get["path"] == path, probe
        assert ports.get(get["port"], get["port"]) == 8501, probe
    assert container["resources"]["requests"]["cpu"] in ("1", 1, "1000m")
    # hardened: nothing to write on the image (Python's tempfile gets an emptyDir), no API token in the pod
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert pod["spec"]["automountServiceAccountToken"] is False
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    assert {m["mountPath"]: "emptyDir" in volumes[m["name"]] for m in container["volumeMounts"]} == {"/tmp": True}
    spread = pod["spec"]["topologySpreadConstraints"]
    assert {c["topologyKey"] for c in spread} == {"kubernetes.io/hostname", "topology.kubernetes.io/zone"}
    assert all(c["labelSelector"]["matchLabels"].items() <= pod["metadata"]["labels"].items() for c in spread)
    (service_port,) = service["spec"]["ports"]
    assert ports.get(service_port["targetPort"], service_port["targetPort"]) == 8501
    assert service["metadata"]["annotations"]["traefik.ingress.kubernetes.io/service.sticky.cookie"] == "true"
    backends = [path["backend"]["service"] for rule in ingress["spec"]["rules"] for path in rule["http"]["paths"]]
    assert backends and all(b["name"] == service["metadata"]["name"] for b in backends)
    assert all(b["port"].get("name") == service_port["name"] or b["port"].get("number") == service_port["port"]
               for b in backends)


def test_probes_point_at_the_health_endpoint_on_the_container_port():
    deployment = next(doc for doc in manifest_documents() if re.search(r"^kind: Deployment", doc, re.M))
    probes = re.findall(r"^\s+(\w+Probe):\n((?:\s{12,}.*\n)+)", deployment, re.M)
    assert {name for name, _ in probes} >= {"readinessProbe", "livenessProbe"}, probes
    for name, body in probes:
        path = re.escape(warm.READY_PATH) if name == "readinessProbe" else "/_stcore/health"
        assert re.search(rf"path: {path}\b", body), (name, body)
        assert re.search(r"port: (http|8501)\b", body), (name, body)
    assert re.search(r"name: http\n\s+containerPort: 8501\b", deployment)
    replicas = int(re.search(r"^\s+replicas: (\d+)", deployment, re.M).group(1))
    assert replicas >= 2


def test_the_load_balancer_keeps_a_browser_on_one_pod():
    service = next(doc for doc in manifest_documents() if re.search(r"^kind: Service", doc, re.M))
    assert re.search(r'traefik\.ingress\.kubernetes\.io/service\.sticky\.cookie: "true"', service)
    assert re.search(r"targetPort: http\b", service)
    ingress = next(doc for doc in manifest_documents() if re.search(r"^kind: Ingress", doc, re.M))
    assert re.search(r"ingressClassName: traefik\b", ingress)
    assert re.search(r"name: attention-lab\b", ingress)


# ---- one machine: deploy/serve.py and its HAProxy config --------------------------------------------


def test_serve_starts_streamlit_with_the_container_flags():
    from deploy.serve import STREAMLIT_FLAGS

    assert STREAMLIT_FLAGS == server_flags()


def test_serve_hands_out_addresses_another_machine_can_open():
    from deploy.serve import interface_addresses, reachable, student_urls

    urls = student_urls("0.0.0.0", 8501)
    hosts = [re.fullmatch(r"http://([\d.]+):8501", url).group(1) for url in urls]
    assert "0.0.0.0" not in hosts and not any(host.startswith("127.") for host in hosts), urls
    assert {a for a in interface_addresses() if reachable(a)} <= set(hosts), (urls, interface_addresses())
    for host in hosts:  # each is an address of this machine: a socket can be bound to it
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind((host, 0))
    assert student_urls("127.0.0.1", 8080) == ["http://127.0.0.1:8080"]  # an address given is the one handed out


def test_the_haproxy_config_has_the_shape_of_the_kubernetes_deployment(tmp_path):
    from deploy.serve import find_haproxy, haproxy_config

    config = haproxy_config("127.0.0.1:8501", [8602, 8603])
    assert re.search(r"^\s+option httpchk GET /_stcore/health$", config, re.M)  # the probes' endpoint
    assert re.search(r"^\s+cookie \S+ insert indirect nocache\b", config, re.M)  # sticky, like the Service
    assert re.search(r"^\s+timeout tunnel 1h$", config, re.M)  # websockets live for a lesson
    assert re.search(r"^\s+option redispatch$", config, re.M)  # a dead process's browsers go elsewhere
    servers = re.findall(r"^\s+server (s\d) 127\.0\.0\.1:(\d+) cookie (s\d)$", config, re.M)
    assert servers == [("s1", "8602", "s1"), ("s2", "8603", "s2")]
    haproxy = find_haproxy()
    if haproxy is None:
        pytest.skip("haproxy is not installed: the config was not checked by haproxy -c")
    (tmp_path / "haproxy.cfg").write_text(config)
    check = subprocess.run([haproxy, "-c", "-f", str(tmp_path / "haproxy.cfg")], capture_output=True, text=True,
                           timeout=30)
    assert check.returncode == 0, check.stdout + check.stderr
