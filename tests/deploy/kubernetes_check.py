"""The checks of tests/deploy/kubernetes.sh on the rendered objects (see there).

usage: kubernetes_check.py BASE.yaml SINGLE.yaml SECRET_EXAMPLE.yaml ANTEROOM WORK_DIR REDIS_PORT
"""
import os
import re
import signal
import subprocess
import sys

import yaml

base_file, single_file, secret_file, binary, work, redis_port = sys.argv[1:7]
failed = []


def check(cond, what):
    print(("PASS: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        failed.append(what)


def objects(path):
    with open(path) as f:
        return {(o["kind"], o["metadata"]["name"]): o for o in yaml.safe_load_all(f) if o}


base, single = objects(base_file), objects(single_file)
with open(secret_file) as f:
    secret = yaml.safe_load(f)


def container(objs):
    return objs[("Deployment", "anteroom")]["spec"]["template"]["spec"]["containers"][0]


def drain_seconds(objs):
    return int(objs[("ConfigMap", "anteroom")]["data"]["ANTEROOM_DRAIN_SECONDS"])


# The Deployment of the base.
dep = base[("Deployment", "anteroom")]
pod = dep["spec"]["template"]["spec"]
c = container(base)
check(dep["spec"]["replicas"] >= 2, "the base runs several nodes (%d)" % dep["spec"]["replicas"])
check(dep["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0, "rolls with none unavailable")
check(pod.get("enableServiceLinks") is False, "no service-link variables (ANTEROOM_PORT, ...) in the pods")
check(pod.get("automountServiceAccountToken") is False, "no service-account token in the pods")
check(c["readinessProbe"]["httpGet"]["path"] == "/readyz", "readiness probe on /readyz")
check(c["livenessProbe"]["httpGet"]["path"] == "/healthz", "liveness probe on /healthz")
ports = {p["name"]: p["containerPort"] for p in c["ports"]}
check(c["readinessProbe"]["httpGet"]["port"] in ports and ports.get("http") == 8080,
      "the probes ask the container's port 8080")
pause = c["lifecycle"]["preStop"]["exec"]["command"]
check(pause[0] == "/bin/sleep", "a preStop pause before the drain")
check(pod["terminationGracePeriodSeconds"] > int(pause[1]) + drain_seconds(base),
      "the grace period (%d s) outlasts the pause and the drain (%s + %d s)" %
      (pod["terminationGracePeriodSeconds"], pause[1], drain_seconds(base)))
sc, psc = c["securityContext"], pod["securityContext"]
check(psc["runAsNonRoot"] and psc["runAsUser"] == 10001, "runs as non-root uid 10001 (the image's)")
check(sc["readOnlyRootFilesystem"] and not sc["allowPrivilegeEscalation"], "read-only root, no escalation")
check(sc["capabilities"]["drop"] == ["ALL"], "all capabilities dropped")
mounts = {m["mountPath"] for m in c["volumeMounts"]}
check({"/var/lib/anteroom", "/tmp"} <= mounts, "writable volumes where it writes")
check("cpu" in c["resources"]["requests"] and "memory" in c["resources"]["limits"],
      "resources requested and memory limited")
env = {e["name"]: e for e in c["env"]}
refs = {e["valueFrom"]["secretKeyRef"]["key"] for e in c["env"]
        if "secretKeyRef" in e.get("valueFrom", {})}
check(refs <= set(secret["stringData"]), "the Secret example has every key the pods read (%s)" % sorted(refs))
check(env["ANTEROOM_NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name",
      "each node named by its pod")
check(c["envFrom"][0]["configMapRef"]["name"] == "anteroom" and ("ConfigMap", "anteroom") in base,
      "the ConfigMap it reads is rendered")
check(re.match(r"redis(s)?://", base[("ConfigMap", "anteroom")]["data"]["ANTEROOM_CLUSTER"]) is not None,
      "the base is a cluster on Redis")

# Service, PodDisruptionBudget, NetworkPolicy, Ingress.
svc = base[("Service", "anteroom")]
admin = base[("ConfigMap", "anteroom")]["data"].get("ANTEROOM_ADMIN_LISTEN", "")
check(admin.endswith(":9090") and ports.get("admin") == 9090 and
      all(p["targetPort"] != "admin" and p["port"] != 9090 for p in svc["spec"]["ports"]),
      "the operator routes on port 9090, which the Service leaves out")
policy = base[("NetworkPolicy", "anteroom")]
rules = {r["ports"][0]["port"]: r["from"][0]["namespaceSelector"]["matchLabels"] for r in policy["spec"]["ingress"]}
check(rules.get(8080) == {"kubernetes.io/metadata.name": "ingress-nginx"} and set(rules) == {8080, 9090},
      "only ingress-nginx reaches the visitors' port, only monitoring the operator port")
labels = dep["spec"]["template"]["metadata"]["labels"]
check(all(labels.get(k) == v for k, v in svc["spec"]["selector"].items()), "the Service selects the pods")
check(svc["spec"]["ports"][0]["targetPort"] == "http", "the Service sends to the http port")
pdb = base[("PodDisruptionBudget", "anteroom")]
check(all(labels.get(k) == v for k, v in pdb["spec"]["selector"]["matchLabels"].items()) and
      pdb["spec"]["maxUnavailable"] == 1, "the budget takes one pod at a time")
site = base[("Ingress", "shop")]
notes = site["metadata"]["annotations"]
url = "http://%s.%s.svc.cluster.local:%d/v1/gate" % (svc["metadata"]["name"], svc["metadata"]["namespace"],
                                                   svc["spec"]["ports"][0]["port"])
check(notes["nginx.ingress.kubernetes.io/auth-url"] == url, "the site's Ingress asks the gate at " + url)
check("/wait" in notes["nginx.ingress.kubernetes.io/auth-signin"], "not admitted: sent to /wait")
own = base[("Ingress", "shop-anteroom")]
check(own["metadata"]["namespace"] == svc["metadata"]["namespace"] and
      all(p["backend"]["service"]["name"] == "anteroom" for r in own["spec"]["rules"]
          for p in r["http"]["paths"]), "anteroom's own paths go to its Service, in its namespace")

# The single node.
sdep = single[("Deployment", "anteroom")]
check(sdep["spec"]["replicas"] == 1 and sdep["spec"]["strategy"]["type"] == "Recreate",
      "single: one pod, replaced")
vols = {v["name"]: v for v in sdep["spec"]["template"]["spec"]["volumes"]}
check("persistentVolumeClaim" in vols["data"] and "emptyDir" not in vols["data"] and
      ("PersistentVolumeClaim", vols["data"]["persistentVolumeClaim"]["claimName"]) in single,
      "single: the data directory on its volume")
check("ANTEROOM_CLUSTER" not in single[("ConfigMap", "anteroom")]["data"], "single: no Redis")
check(("PodDisruptionBudget", "anteroom") not in single, "single: no disruption budget")
check("ANTEROOM_REDIS_PASSWORD" not in {e["name"] for e in container(single)["env"]},
      "single: no Redis password (refused without --cluster)")

# Every variable is a flag's, and each setup starts the real server.
help_text = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
flags = set(re.findall(r"--([a-z0-9-]+)", help_text))


def start(objs, name, overrides):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("ANTEROOM_")}
    environment.update(objs[("ConfigMap", "anteroom")]["data"])
    for e in container(objs)["env"]:
        ref = e.get("valueFrom", {}).get("secretKeyRef")
        if ref:
            environment[e["name"]] = "%s-%s-0123456789abcdef0123456789" % (name, ref["key"])
        elif "fieldRef" in e.get("valueFrom", {}):
            environment[e["name"]] = name + "-pod"
    environment.update(overrides)
    unknown = [k for k in environment if k.startswith("ANTEROOM_") and
               k[len("ANTEROOM_"):].lower().replace("_", "-") not in flags]
    check(not unknown, "%s: every variable is a flag's %s" % (name, unknown or ""))
    p = subprocess.Popen([binary], env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    first = p.stdout.readline()
    p.send_signal(signal.SIGINT)
    rest = p.communicate(timeout=20)[0]
    check(first.startswith("anteroom listening on") and p.returncode == 0,
          "%s: anteroom starts with this environment (%s)" % (name, (first + rest).strip()[:160]))


data_dir = os.path.join(work, "data")
os.makedirs(data_dir, exist_ok=True)
# A Redis without AUTH here: the optional redis-password key left out.
start(base, "base", {"ANTEROOM_LISTEN": "127.0.0.1:0", "ANTEROOM_ADMIN_LISTEN": "127.0.0.1:0",
                     "ANTEROOM_CLUSTER": "redis://127.0.0.1:" + redis_port,
                     "ANTEROOM_REDIS_PASSWORD": "", "ANTEROOM_DATA_DIR": data_dir})
start(single, "single", {"ANTEROOM_LISTEN": "127.0.0.1:0", "ANTEROOM_ADMIN_LISTEN": "127.0.0.1:0",
                         "ANTEROOM_DATA_DIR": data_dir})
sys.exit(1 if failed else 0)
