"""Simulation controls of the local cluster: kwok ``Stage`` resources.

kwok (Kubernetes WithOut Kubelet) describes how simulated objects change over time with
``Stage`` resources (``kwok.x-k8s.io/v1alpha1``): a selector, a delay, and what happens next —
a status rendered from a Go template, an event, finalizers, a deletion. The local cluster
installs the Stage CRD (:mod:`.stage_crd`); when Stages for pods exist, the simulated kubelet
moves its pods through them on the cluster clock instead of running them itself, so kwok's
stage files (``kustomize/stage/pod/general``, ``fast``, ``chaos``) apply unchanged.

- :mod:`.stages`: a Stage compiled (jq selectors and delays, weights, ``next``), and the checks
  the API server runs when one is written.
- :mod:`.go_template`: the part of Go's ``text/template`` those templates use.

Pod annotations for the common cases without a Stage live with the kubelet
(:mod:`setpoint.cluster.controllers.kubelet.simulation_annotations`).
"""
