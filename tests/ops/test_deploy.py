"""The deployment files, checked by their own tools (haproxy -c, the Kubernetes JSON
schemas, hadolint, promtool) and for the hardening the runbook promises. Each check
takes well under a second; the tools are installed by ./scripts/check when missing."""

from __future__ import annotations

import fnmatch
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from .procs import HAPROXY_CFG, ROOT, HAProxy, require

DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
MANIFESTS = [K8S / "redis.yaml", K8S / "solrace.yaml"]


def run(*cmd: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """Run a validator; its output is in the assertion message when it fails."""
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=60)


def docs(path: Path) -> list[dict[str, Any]]:
    """The YAML documents of a manifest file."""
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def containers(kind: str, name: str) -> list[dict[str, Any]]:
    """The containers of the workload ``kind``/``name`` in deploy/k8s."""
    for path in MANIFESTS:
        for doc in docs(path):
            if doc["kind"] == kind and doc["metadata"]["name"] == name:
                return list(doc["spec"]["template"]["spec"]["containers"])
    raise AssertionError(f"no {kind} {name} in deploy/k8s")


def pod_spec(kind: str, name: str) -> dict[str, Any]:
    for path in MANIFESTS:
        for doc in docs(path):
            if doc["kind"] == kind and doc["metadata"]["name"] == name:
                return dict(doc["spec"]["template"]["spec"])
    raise AssertionError(f"no {kind} {name} in deploy/k8s")


# ------------------------------------------------------------------ HAProxy
def test_haproxy_accepts_the_config(tmp_path: Path) -> None:
    proxy = HAProxy(tmp_path, {
        "SOLRACE_LB_BIND": "127.0.0.1:18080", "SOLRACE_LB_STATS": "127.0.0.1:18404",
        "SOLRACE_DNS": "127.0.0.1:15353", "SOLRACE_NODE1": "node1.invalid:8765",
        "SOLRACE_NODE2": "node2.invalid:8765", "SOLRACE_NODE3": "node3.invalid:8765",
    })
    checked = proxy.check()
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_haproxy_config_has_the_operational_settings() -> None:
    text = HAPROXY_CFG.read_text()
    lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    assert "resolvers dns" in lines
    default_server = next(line for line in lines if line.startswith("default-server"))
    assert "resolvers dns" in default_server and "init-addr last,libc,none" in default_server
    assert 'stats auth "${SOLRACE_LB_STATS_USER}:${SOLRACE_LB_STATS_PASSWORD}"' in lines
    assert "option forwardfor" in lines and "unique-id-header X-Request-ID" in lines


def test_compose_gives_haproxy_every_variable_it_reads() -> None:
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    services = compose["services"]
    wanted = set(re.findall(r"\$\{(\w+)\}", HAPROXY_CFG.read_text()))
    given = set(services["haproxy"]["environment"])
    assert wanted <= given, wanted - given
    for key in ("SOLRACE_NODE1", "SOLRACE_NODE2", "SOLRACE_NODE3"):
        host = services["haproxy"]["environment"][key].split(":")[0]
        assert host in services, f"{key} names {host}, which is not a service"
    stats_ports = [p for p in services["haproxy"]["ports"] if p.endswith(":8404")]
    assert stats_ports == ["127.0.0.1:8404:8404"], "stats must stay on localhost"
    for name, service in services.items():
        image = service.get("image", "")
        assert ":" in image and not image.endswith(":latest"), f"{name}: unpinned {image}"


# ------------------------------------------------------------------ Kubernetes
def test_manifests_pass_the_kubernetes_schemas() -> None:
    validator = Path(sys.executable).with_name("kubernetes-validate")
    checked = run(str(validator), "--strict", "--quiet", *map(str, MANIFESTS))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_every_container_is_hardened() -> None:
    for kind, name in (("Deployment", "solrace"), ("StatefulSet", "solrace-redis")):
        pod = pod_spec(kind, name)
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        assert pod["automountServiceAccountToken"] is False, name
        for container in containers(kind, name):
            image = container["image"]
            assert re.search(r":\d+\.\d+|@sha256:", image), f"{name}: unpinned {image}"
            security = container["securityContext"]
            assert security["readOnlyRootFilesystem"] is True, name
            assert security["allowPrivilegeEscalation"] is False, name
            assert security["capabilities"]["drop"] == ["ALL"], name
            resources = container["resources"]
            assert {"cpu", "memory"} <= set(resources["requests"]), name
            assert {"cpu", "memory"} <= set(resources["limits"]), name


def test_node_probes_affinity_budget_and_network_policies() -> None:
    [node] = containers("Deployment", "solrace")
    assert node["readinessProbe"]["httpGet"]["path"] == "/healthz"
    # liveness must not depend on Redis (see the comment in solrace.yaml)
    assert node["livenessProbe"]["httpGet"]["path"] != "/healthz"
    pod = pod_spec("Deployment", "solrace")
    assert pod["affinity"]["podAntiAffinity"]
    kinds = {(d["kind"], d["metadata"]["name"]): d for p in MANIFESTS for d in docs(p)}
    assert ("PodDisruptionBudget", "solrace") in kinds
    redis_policy = kinds[("NetworkPolicy", "solrace-redis")]["spec"]
    [rule] = redis_policy["ingress"]
    assert rule["from"] == [{"podSelector": {"matchLabels": {"app": "solrace"}}}]
    node_policy = kinds[("NetworkPolicy", "solrace")]["spec"]
    assert set(node_policy["policyTypes"]) == {"Ingress", "Egress"}


def test_redis_has_a_password_from_the_secret_and_aof() -> None:
    [redis] = containers("StatefulSet", "solrace-redis")
    args = redis["args"]
    assert args[args.index("--requirepass") + 1] == "$(REDIS_PASSWORD)"
    assert args[args.index("--appendonly") + 1] == "yes"
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    [secret] = kustomization["secretGenerator"]
    refs = {env["valueFrom"]["secretKeyRef"]["name"]
            for c in containers("StatefulSet", "solrace-redis")
            + containers("Deployment", "solrace")
            for env in c["env"] if "valueFrom" in env}
    assert refs == {secret["name"]}
    assert sorted(kustomization["resources"]) == sorted(p.name for p in MANIFESTS)


# ------------------------------------------------------------------ image
def test_dockerfile_passes_hadolint() -> None:
    hadolint = Path(sys.executable).with_name("hadolint")
    checked = run(str(hadolint), str(DEPLOY / "Dockerfile"))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_dockerfile_is_multi_stage_non_root_locked_with_a_healthcheck() -> None:
    lines = [line.strip() for line in (DEPLOY / "Dockerfile").read_text().splitlines()]
    instructions = [line for line in lines if line and not line.startswith("#")]
    assert sum(1 for line in instructions if line.startswith("FROM ")) >= 2
    assert any(line.startswith("HEALTHCHECK ") for line in instructions)
    user = [line for line in instructions if line.startswith("USER ")]
    assert user and user[-1] not in ("USER root", "USER 0"), user
    assert any("--require-hashes" in line and "requirements/server.lock" in line
               for line in instructions)
    # every file the image copies from the context survives .dockerignore
    patterns = [p for p in (ROOT / ".dockerignore").read_text().splitlines()
                if p and not p.startswith("#")]
    for line in instructions:
        if line.startswith("COPY ") and "--from=" not in line:
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), source
                assert _kept(source, patterns), f"{source} is excluded by .dockerignore"


def _kept(path: str, patterns: list[str]) -> bool:
    """Docker's rule: the last matching pattern wins; ``!`` re-includes."""
    kept = True
    for pattern in patterns:
        negate = pattern.startswith("!")
        pat = pattern.lstrip("!").rstrip("/")
        if fnmatch.fnmatch(path, pat) or path.startswith(pat + "/"):
            kept = negate
    return kept


# ------------------------------------------------------------------ alerts, lock
def test_alert_rules_pass_promtool_and_their_unit_tests() -> None:
    promtool = require("promtool")
    rules = DEPLOY / "prometheus"
    checked = run(promtool, "check", "rules", "alerts.yml", cwd=rules)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = run(promtool, "test", "rules", "alerts.test.yml", cwd=rules)
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_the_lock_matches_pyproject() -> None:
    checked = run(sys.executable, "scripts/lockfile.py", "check")
    assert checked.returncode == 0, checked.stderr
