"""The deployment files in deploy/: the Compose file and the Kubernetes example parsed and checked against each
other, the Dockerfile and the app (ports, health path, the read-only model cache), and HAProxy's own check of
deploy/haproxy.cfg in both of its modes. Neither Docker nor Kubernetes runs here: tests/app/test_replicas.py runs
the balancer's configuration with real replicas."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml  # PyYAML, pinned in requirements-test.txt

from deploy.replicas import CONFIG, MAX_REPLICAS, find_haproxy

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
HEALTH = "/_stcore/health"


def _dockerfile_port() -> int:
    return int(re.search(r"^EXPOSE (\d+)", (ROOT / "Dockerfile").read_text(), re.MULTILINE).group(1))


def _interpolate(value, env: dict[str, str] | None = None):
    """Compose's ${NAME:-default} and ${NAME}, with the defaults (or ``env``)."""
    if not isinstance(value, str):
        return value
    env = env or {}
    return re.sub(r"\$\{(\w+)(?::-([^}]*))?\}", lambda m: env.get(m.group(1), m.group(2) or ""), value)


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


@pytest.fixture(scope="module")
def kube() -> dict[str, dict]:
    docs = [d for d in yaml.safe_load_all((DEPLOY / "kubernetes.yaml").read_text()) if d]
    kinds = [d["kind"] for d in docs]
    assert len(kinds) == len(set(kinds)), kinds
    return {d["kind"]: d for d in docs}


def test_compose_runs_k_replicas_of_the_image_behind_haproxy(compose):
    explorer, balancer = compose["services"]["explorer"], compose["services"]["balancer"]
    assert set(compose["services"]) == {"explorer", "balancer"}
    context = (DEPLOY / explorer["build"]["context"]).resolve()
    assert context == ROOT and (context / explorer["build"]["dockerfile"]).is_file()  # the project's Dockerfile
    assert int(_interpolate(explorer["deploy"]["replicas"])) >= 2
    assert "ports" not in explorer and str(_dockerfile_port()) in explorer["expose"]  # reached via the balancer
    # the balancer waits for the image's health check, which asks Streamlit's health endpoint
    assert balancer["depends_on"]["explorer"]["condition"] == "service_healthy"
    assert HEALTH in (ROOT / "Dockerfile").read_text().split("HEALTHCHECK", 1)[1]
    # it finds every replica by the service's name, on the port the image serves
    env = {k: _interpolate(v) for k, v in balancer["environment"].items()}
    assert env["ELMO_REPLICAS_DNS"] == f"explorer:{_dockerfile_port()}"
    assert 2 <= int(env["ELMO_REPLICAS_MAX"])
    mount = next(v for v in balancer["volumes"] if v["target"] == "/usr/local/etc/haproxy/haproxy.cfg")
    assert (DEPLOY / mount["source"]).resolve() == CONFIG and mount["read_only"] is True
    published = [_interpolate(p) for p in balancer["ports"]]
    assert f"8501:{env['ELMO_LB_BIND'].rpartition(':')[2]}" in published


def test_compose_mounts_one_model_cache_read_only_and_never_downloads(compose):
    explorer = compose["services"]["explorer"]
    env = {k: _interpolate(v) for k, v in explorer["environment"].items()}
    (cache,) = [v for v in explorer["volumes"] if v["target"] == env["ELMO_CORE_CACHE"]]
    assert cache["type"] == "bind" and cache["read_only"] is True
    assert env["ELMO_EXPLORER_ALLOW_DOWNLOADS"] == "0"


def test_kubernetes_deployment_probes_health_and_reads_the_cache_read_only(kube):
    assert set(kube) == {"PersistentVolumeClaim", "Deployment", "Service", "Ingress"}
    deployment = kube["Deployment"]
    pod = deployment["spec"]["template"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    (container,) = pod["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"http": _dockerfile_port()}
    for probe in ("readinessProbe", "startupProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": HEALTH, "port": "http"}, probe
    env = {e["name"]: e["value"] for e in container["env"]}
    (mount,) = [m for m in container["volumeMounts"] if m["mountPath"] == env["ELMO_CORE_CACHE"]]
    assert mount["readOnly"] is True and env["ELMO_EXPLORER_ALLOW_DOWNLOADS"] == "0"
    (volume,) = [v for v in pod["spec"]["volumes"] if v["name"] == mount["name"]]
    claim = volume["persistentVolumeClaim"]
    assert claim["readOnly"] is True and claim["claimName"] == kube["PersistentVolumeClaim"]["metadata"]["name"]
    assert kube["PersistentVolumeClaim"]["spec"]["accessModes"] == ["ReadOnlyMany"]
    assert pod["spec"]["securityContext"]["runAsUser"] == 10001  # the Dockerfile's user
    assert "USER 10001:10001" in (ROOT / "Dockerfile").read_text()


def test_kubernetes_service_keeps_a_client_on_its_replica(kube):
    service, ingress = kube["Service"], kube["Ingress"]
    pod_labels = kube["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert service["spec"]["sessionAffinity"] == "ClientIP"
    assert service["spec"]["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"] >= 3600
    (port,) = service["spec"]["ports"]
    assert port["targetPort"] == "http"
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": service["metadata"]["name"], "port": {"name": port["name"]}}
    notes = ingress["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert int(notes["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600  # idle websockets stay open


def _haproxy_check(env: dict[str, str]) -> subprocess.CompletedProcess:
    haproxy = find_haproxy()
    if haproxy is None:
        if os.environ.get("ELMO_REQUIRE_BROWSER") == "1":
            pytest.fail("ELMO_REQUIRE_BROWSER=1 (CI) but haproxy is not installed")
        pytest.skip("haproxy not found: install Debian's haproxy (apt-get install haproxy)")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ELMO_REPLICA", "ELMO_LB_", "ELMO_COOKIE"))}
    return subprocess.run(
        [haproxy, "-c", "-f", str(CONFIG)], env={**clean, **env}, capture_output=True, text=True, timeout=30
    )


def test_haproxy_accepts_the_configuration_with_listed_replicas():
    env = {
        "ELMO_LB_BIND": "127.0.0.1:8600",
        "ELMO_LB_STATS": "127.0.0.1:8404",
        **{f"ELMO_REPLICA_{i}": f"127.0.0.1:{8500 + i}" for i in range(1, MAX_REPLICAS + 1)},
    }
    result = _haproxy_check(env)
    assert result.returncode == 0, result.stdout + result.stderr
    # without a replica it refuses to start, rather than balancing onto nothing
    result = _haproxy_check({"ELMO_LB_BIND": "127.0.0.1:8600"})
    assert result.returncode != 0


def test_haproxy_accepts_the_configuration_compose_gives_it(compose):
    env = {k: _interpolate(v) for k, v in compose["services"]["balancer"]["environment"].items()}
    result = _haproxy_check(env)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_configuration_keeps_what_replicas_need():
    text = CONFIG.read_text()
    for needed in (
        "cookie ELMO_REPLICA insert indirect nocache httponly",
        "option redispatch",
        f"option httpchk GET {HEALTH}",
        "http-check expect string ok",
        "timeout tunnel",
        "http-response set-header X-Elmo-Replica %[srv_name]",
    ):
        assert needed in text, needed
