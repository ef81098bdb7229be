"""The kubelet of the local cluster's nodes, simulated by default.

It registers the Node objects (Ready, with capacity and allocatable) and renews their Leases in
``kube-node-lease``, then runs the pods bound to those nodes: it allocates a pod IP, reports
the containers created and started (Events ``Pulled``, ``Created``, ``Started`` as the kubelet
writes them), and keeps ``status`` as kubelet 1.32 does (phase, the five conditions,
``containerStatuses``). Readiness follows ``readinessProbe.initialDelaySeconds`` on the cluster
clock; a container with a command that ends by itself (restartPolicy Never or OnFailure)
exits 0 after a short, configurable time. A deleted pod keeps its ``deletionTimestamp`` until
the kubelet has stopped its containers (``Killing``), written them terminated (Ready False),
and removes it, as upstream.

With ``--run-pods`` the containers' commands run as processes (:mod:`.process_pod`), each pod
in a sandbox (:mod:`.sandbox`) with its volumes (:mod:`.pod_volumes`); their output is kept in
rotated CRI log files (:mod:`.log_files`) and served from the end (:mod:`.container_logs`);
``kubectl attach`` reaches a running process's stdin and output (:mod:`.container_attach`).
Ephemeral containers (``kubectl debug``) run as another process of the pod, in their target's
sandbox, or are simulated (:mod:`.simulated_ephemeral`).
"""
