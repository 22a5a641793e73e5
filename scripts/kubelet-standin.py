#!/usr/bin/env python3
"""A kubelet stand-in for the local control plane, which runs no kubelet: Pods never run there. It watches
Pods in all namespaces and, for a Pod that asks for it by annotation, writes the status a kubelet would
write for a Pod whose containers ran and exited, through the Pod's status subresource. The API server,
helm-controller and Helm stay real; only the outcome of the containers is chosen by the Pod itself.

    cozyhr.test/phase: Succeeded | Failed    the outcome: every container terminated, exit code 0 and
                                             reason Completed (Succeeded) or exit code 1 and reason Error
                                             (Failed); init containers terminated with exit code 0
    cozyhr.test/after: 2s                    optional (ms, s or m; a plain number is seconds): the Pod is
                                             Running (containers running and ready) until that long after
                                             its creation, then ends as above

A Pod without `cozyhr.test/phase` is never touched (Pending forever, as without the stand-in); nor is a Pod
already Succeeded or Failed, or being deleted. A value the stand-in does not understand is said once in its
log and the Pod is left alone. Pods are not bound to a Node (no spec.nodeName, no hostIP or podIP, no
PodScheduled condition): the API server accepts their status as it is (docs/test-ground.md).

    scripts/kubelet-standin.py --server URL --ca FILE --cert FILE --key FILE [--ready FILE]
                               (started and stopped by scripts/cluster.sh; standard library only)

Each status write carries the Pod's uid (which the API server refuses to change), so a Pod deleted and
created again under the same name (Helm's before-hook-creation) is never given its predecessor's outcome.
The stand-in survives the API server going away (scripts/cluster.sh apiserver stop|start): it lists and
watches again.
"""

import argparse
import datetime
import hashlib
import http.client
import json
import re
import ssl
import sys
import threading
import time
import urllib.parse

PHASE = "cozyhr.test/phase"
AFTER = "cozyhr.test/after"
OUTCOMES = {"Succeeded": (0, "Completed"), "Failed": (1, "Error")}
# The field manager of its status writes (the API server names it after the user agent's first word).
AGENT = "cozyhr-kubelet-standin"


def say(msg):
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    sys.stderr.write("%s %s\n" % (stamp, msg))
    sys.stderr.flush()


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp()


def parse_after(text):
    """Seconds from `2s`, `500ms`, `1m`, `1.5` (seconds); None when it is none of those."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m)?\s*", text)
    if not m:
        return None
    return float(m.group(1)) * {"ms": 0.001, "s": 1.0, "m": 60.0, None: 1.0}[m.group(2)]


class Api:
    """The API server, reached over TLS with the admin client certificate of the run directory."""

    def __init__(self, server, ca, cert, key):
        url = urllib.parse.urlsplit(server)
        self.host, self.port = url.hostname, url.port or 443
        self.ctx = ssl.create_default_context(cafile=ca)
        self.ctx.load_cert_chain(cert, key)

    def connect(self, timeout):
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)

    def request(self, method, path, body=None, content_type=None):
        conn = self.connect(30)
        try:
            headers = {"Accept": "application/json", "User-Agent": AGENT}
            if body is not None:
                headers["Content-Type"] = content_type
                body = json.dumps(body).encode()
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, (json.loads(data) if data else {})
        finally:
            conn.close()

    def watch(self, path):
        """The events of a watch, one JSON object each, until the server ends the stream."""
        conn = self.connect(120)
        try:
            conn.request("GET", path, headers={"Accept": "application/json", "User-Agent": AGENT})
            resp = conn.getresponse()
            if resp.status == 410:
                yield {"type": "ERROR", "object": {"message": "HTTP 410 Gone"}}
                return
            if resp.status != 200:
                raise RuntimeError("watch %s: HTTP %d %s" % (path, resp.status, resp.read()[:300]))
            while True:
                line = resp.readline()
                if not line:
                    return
                if line.strip():
                    yield json.loads(line)
        finally:
            conn.close()


def container_id(pod, name):
    digest = hashlib.sha256(("%s/%s" % (pod["metadata"]["uid"], name)).encode()).hexdigest()
    return "cozyhr-standin://" + digest


def running_status(pod, started):
    spec = pod.get("spec", {})
    return {
        "phase": "Running",
        "startTime": started,
        "conditions": [
            {"type": "PodReadyToStartContainers", "status": "True", "lastTransitionTime": started},
            {"type": "Initialized", "status": "True", "lastTransitionTime": started},
            {"type": "Ready", "status": "True", "lastTransitionTime": started},
            {"type": "ContainersReady", "status": "True", "lastTransitionTime": started},
        ],
        "initContainerStatuses": init_statuses(pod, started),
        "containerStatuses": [
            {
                "name": c["name"],
                "image": c.get("image", ""),
                "imageID": "",
                "containerID": container_id(pod, c["name"]),
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": started}},
                "lastState": {},
            }
            for c in spec.get("containers", [])
        ],
    }


def init_statuses(pod, started):
    return [
        {
            "name": c["name"],
            "image": c.get("image", ""),
            "imageID": "",
            "containerID": container_id(pod, c["name"]),
            "ready": True,
            "started": False,
            "restartCount": 0,
            "state": {
                "terminated": {
                    "exitCode": 0,
                    "reason": "Completed",
                    "startedAt": started,
                    "finishedAt": started,
                    "containerID": container_id(pod, c["name"]),
                }
            },
            "lastState": {},
        }
        for c in pod.get("spec", {}).get("initContainers", [])
    ]


def terminal_status(pod, phase, started, finished):
    code, reason = OUTCOMES[phase]
    containers = pod.get("spec", {}).get("containers", [])
    names = [c["name"] for c in containers]
    if phase == "Succeeded":
        ready = {"status": "False", "reason": "PodCompleted"}
        initialized = {"status": "True", "reason": "PodCompleted"}
    else:
        message = "containers with unready status: [%s]" % " ".join(names)
        ready = {"status": "False", "reason": "ContainersNotReady", "message": message}
        initialized = {"status": "True"}
    return {
        "phase": phase,
        "startTime": started,
        "conditions": [
            {"type": "PodReadyToStartContainers", "status": "False", "lastTransitionTime": finished},
            dict(initialized, type="Initialized", lastTransitionTime=started),
            dict(ready, type="Ready", lastTransitionTime=finished),
            dict(ready, type="ContainersReady", lastTransitionTime=finished),
        ],
        "initContainerStatuses": init_statuses(pod, started),
        "containerStatuses": [
            {
                "name": c["name"],
                "image": c.get("image", ""),
                "imageID": "",
                "containerID": container_id(pod, c["name"]),
                "ready": False,
                "started": False,
                "restartCount": 0,
                "state": {
                    "terminated": {
                        "exitCode": code,
                        "reason": reason,
                        "startedAt": started,
                        "finishedAt": finished,
                        "containerID": container_id(pod, c["name"]),
                    }
                },
                "lastState": {},
            }
            for c in containers
        ],
    }


class Standin:
    def __init__(self, api):
        self.api = api
        self.lock = threading.Lock()
        self.pending = {}  # uid -> threading.Timer, for Pods Running until their `after`
        self.warned = set()  # uids whose annotations were said to be wrong
        self.done = set()  # uids given their outcome (a late event of the Running Pod changes nothing)

    def write_status(self, pod, status):
        """True when written, False when refused (or the Pod is gone), None when the server never answered."""
        meta = pod["metadata"]
        path = "/api/v1/namespaces/%s/pods/%s/status" % (
            urllib.parse.quote(meta["namespace"]),
            urllib.parse.quote(meta["name"]),
        )
        # The uid guards the write: for a Pod of the same name created since, the API server refuses it
        # (422, metadata.uid is immutable) instead of giving the new Pod the old one's outcome.
        patch = {"metadata": {"uid": meta["uid"]}, "status": status}
        who = "%s/%s (uid %s)" % (meta["namespace"], meta["name"], meta["uid"])
        for attempt in range(60):
            try:
                code, body = self.api.request("PATCH", path, patch, "application/merge-patch+json")
                break
            except (OSError, http.client.HTTPException, ValueError) as e:
                if attempt == 0:
                    say("%s: the API server does not answer (%s); trying again every second" % (who, e))
                time.sleep(1)
        else:
            say("%s: %s status not written: the API server did not answer for a minute" % (who, status["phase"]))
            return None
        if code == 200:
            say("%s: %s" % (who, status["phase"]))
            return True
        if code == 404 or (code in (409, 422) and "metadata.uid" in str(body.get("message", ""))):
            say("%s: gone or replaced before its %s status was written (HTTP %d)" % (who, status["phase"], code))
        else:
            why = body.get("message", body)
            say("%s: the API server refused its %s status: HTTP %d %s" % (who, status["phase"], code, why))
        return False

    def warn(self, pod, msg):
        uid = pod["metadata"]["uid"]
        if uid not in self.warned:
            self.warned.add(uid)
            say("%s/%s: %s; left alone" % (pod["metadata"]["namespace"], pod["metadata"]["name"], msg))

    def seen(self, pod):
        meta = pod.get("metadata", {})
        annotations = meta.get("annotations") or {}
        if PHASE not in annotations:
            return
        phase = annotations[PHASE]
        status = pod.get("status") or {}
        if status.get("phase") in OUTCOMES or meta.get("deletionTimestamp"):
            return
        if phase not in OUTCOMES:
            self.warn(pod, "%s is %r, not Succeeded or Failed" % (PHASE, phase))
            return
        after = parse_after(annotations.get(AFTER, "0"))
        if after is None:
            self.warn(pod, "%s is %r, not a duration such as 2s or 500ms" % (AFTER, annotations[AFTER]))
            return
        uid = meta["uid"]
        with self.lock:
            if uid in self.pending or uid in self.done:
                return
        wait = parse_time(meta["creationTimestamp"]) + after - time.time()
        started = status.get("startTime") or now()
        if wait <= 0:
            self.end(pod, phase, started)
            return
        if status.get("phase") != "Running" and not self.write_status(pod, running_status(pod, started)):
            return
        timer = threading.Timer(wait, self.end, args=(pod, phase, started))
        timer.daemon = True
        with self.lock:
            self.pending[uid] = timer
        timer.start()

    def end(self, pod, phase, started):
        uid = pod["metadata"]["uid"]
        with self.lock:
            self.pending.pop(uid, None)
            if uid in self.done:
                return
            self.done.add(uid)
        if self.write_status(pod, terminal_status(pod, phase, started, now())) is None:
            with self.lock:
                self.done.discard(uid)  # the next list of Pods tries again

    def gone(self, pod):
        uid = pod.get("metadata", {}).get("uid")
        with self.lock:
            timer = self.pending.pop(uid, None)
            self.done.discard(uid)
            self.warned.discard(uid)
        if timer:
            timer.cancel()

    def run(self, ready_file):
        ready = False
        outage = False
        while True:
            try:
                code, body = self.api.request("GET", "/api/v1/pods")
                if code != 200:
                    raise RuntimeError("listing Pods: HTTP %d %s" % (code, body.get("message", body)))
                if outage:
                    say("the API server answers again")
                    outage = False
                for pod in body.get("items", []):
                    self.seen(pod)
                if not ready:
                    ready = True
                    say("watching Pods in all namespaces (annotation %s)" % PHASE)
                    if ready_file:
                        open(ready_file, "w").close()
                self.follow(body["metadata"]["resourceVersion"])
            except (OSError, http.client.HTTPException, RuntimeError, ValueError, KeyError) as e:
                if not outage:
                    say("the API server does not answer (%s); trying again every second" % e)
                    outage = True
                time.sleep(1)

    def follow(self, rv):
        """Watches from resourceVersion `rv` until the watch is too old (then returns, to list again)."""
        while True:
            query = urllib.parse.urlencode(
                {"watch": "1", "resourceVersion": rv, "allowWatchBookmarks": "true", "timeoutSeconds": "60"}
            )
            for event in self.api.watch("/api/v1/pods?" + query):
                kind, obj = event.get("type"), event.get("object") or {}
                if kind == "ERROR":
                    # 410 Gone (the resourceVersion is too old) and the like: list again.
                    say("the watch ended: %s; listing again" % obj.get("message", obj))
                    return
                rv = obj.get("metadata", {}).get("resourceVersion") or rv
                if kind in ("ADDED", "MODIFIED"):
                    self.seen(obj)
                elif kind == "DELETED":
                    self.gone(obj)


def main():
    p = argparse.ArgumentParser(description="A kubelet stand-in: Pods end as their cozyhr.test/phase says.")
    p.add_argument("--server", required=True, help="the API server, https://127.0.0.1:PORT")
    p.add_argument("--ca", required=True, help="the API server's certificate authority")
    p.add_argument("--cert", required=True, help="a client certificate that may watch Pods and write their status")
    p.add_argument("--key", required=True, help="its key")
    p.add_argument("--ready", help="a file to create once the first list of Pods is done")
    a = p.parse_args()
    try:
        api = Api(a.server, a.ca, a.cert, a.key)
    except (OSError, ssl.SSLError) as e:
        sys.exit("kubelet-standin.py: cannot read the certificates: %s" % e)
    try:
        Standin(api).run(a.ready)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
