"""The Kubernetes manifests against the API's own schemas, strictly: what `kubectl apply` would take.

kubernetes-validate (requirements-dev.txt) carries the OpenAPI schemas of every Kubernetes release it knows,
so this runs offline. Strict: a field the API does not know (a typo, a field in the wrong place, one a release
dropped) fails, where the API server would drop it without a word. Checked against each release from the
oldest this deployment expects a cluster to run (topologySpreadConstraints' matchLabelKeys and
nodeTaintsPolicy are on by default from 1.27 and 1.26) to the newest the package knows.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = ROOT / "deploy" / "k8s" / "attention-lab.yaml"
OLDEST = (1, 30)

if os.environ.get("CI"):  # CI installs requirements-dev.txt: a missing validator there is a failure
    import kubernetes_validate as kv
    import yaml
else:
    kv = pytest.importorskip("kubernetes_validate", reason="pip install -r requirements-dev.txt")
    yaml = pytest.importorskip("yaml")


def releases() -> list[str]:
    latest = tuple(int(n) for n in kv.latest_version().split(".")[:2])
    return [f"1.{minor}" for minor in range(OLDEST[1], latest[1] + 1)]


def documents() -> list[dict]:
    return [doc for doc in yaml.safe_load_all(MANIFESTS.read_text()) if doc]


def test_there_is_something_to_validate():
    assert {doc["kind"] for doc in documents()} == {"Deployment", "Service", "Ingress", "PodDisruptionBudget"}
    assert len(releases()) >= 3, kv.latest_version()


@pytest.mark.parametrize("release", releases())
def test_every_manifest_is_valid_for_the_release(release):
    for doc in documents():
        try:
            kv.validate(doc, release, strict=True)
        except kv.ValidationError as error:
            pytest.fail(f"{doc['kind']} {doc['metadata']['name']} is not valid for Kubernetes {release}: "
                        f"{error.message} at {'/'.join(map(str, error.path))}")


def test_strict_validation_fails_on_a_field_the_api_does_not_know():
    """The check can fail: a misspelt field, which the API server would silently drop, is refused here."""
    deployment = copy.deepcopy(next(doc for doc in documents() if doc["kind"] == "Deployment"))
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container["readinessProbe"]["httpGet"]["paht"] = container["readinessProbe"]["httpGet"].pop("path")
    with pytest.raises(kv.ValidationError):
        kv.validate(deployment, kv.latest_version(), strict=True)


def test_the_database_is_required_not_a_per_pod_file():
    """Replicas on a SQLite file each would split a class across pods (phones told "No class has this code") and
    keep answers and shared runs in a pod's scratch volume: the Secret with the shared database's URL is required,
    so a cluster without it starts no pod rather than a class mode that silently half works."""
    from ui.compute import database

    deployment = next(doc for doc in documents() if doc["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    url = next(e for e in container["env"] if e["name"] == database.ENVIRONMENT)
    secret = url["valueFrom"]["secretKeyRef"]
    assert (secret["name"], secret["key"]) == ("attention-lab-db", "url")
    assert secret.get("optional", False) is False, "a missing Secret would leave each pod its own SQLite file"
