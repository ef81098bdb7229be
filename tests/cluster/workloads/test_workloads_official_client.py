"""The official ``kubernetes`` client against the workload controllers, with its default calls.

The scheduler and the simulated kubelet run the pods: nothing here plays the kubelet.

What sample-controller's Foo and cnat's At do: read a Deployment's ``availableReplicas``, watch a
Job until it completes.
"""

from __future__ import annotations

from kubernetes import client, watch

from tests.cluster.controllers.waiting import eventually_sync


def test_deployment_available_replicas(api_client: client.ApiClient, namespace: str) -> None:
    apps = client.AppsV1Api(api_client)
    labels = {"app": "foo"}
    apps.create_namespaced_deployment(
        namespace,
        client.V1Deployment(
            metadata=client.V1ObjectMeta(name="foo"),
            spec=client.V1DeploymentSpec(
                replicas=2,
                selector=client.V1LabelSelector(match_labels=labels),
                template=client.V1PodTemplateSpec(
                    metadata=client.V1ObjectMeta(labels=labels),
                    spec=client.V1PodSpec(
                        containers=[client.V1Container(name="nginx", image="nginx:1.27")]
                    ),
                ),
            ),
        ),
    )

    def available() -> int:
        status = apps.read_namespaced_deployment_status("foo", namespace).status
        return (status.available_replicas or 0) == 2

    eventually_sync(available, "2 available replicas")
    deployment = apps.read_namespaced_deployment("foo", namespace)
    assert deployment.status.ready_replicas == 2
    assert deployment.status.observed_generation == deployment.metadata.generation
    reasons = {c.type: c.reason for c in deployment.status.conditions}
    assert reasons == {
        "Available": "MinimumReplicasAvailable",
        "Progressing": "NewReplicaSetAvailable",
    }


def test_watch_a_job_until_complete(api_client: client.ApiClient, namespace: str) -> None:
    batch = client.BatchV1Api(api_client)
    batch.create_namespaced_job(
        namespace,
        client.V1Job(
            metadata=client.V1ObjectMeta(name="at"),
            spec=client.V1JobSpec(
                template=client.V1PodTemplateSpec(
                    spec=client.V1PodSpec(
                        restart_policy="Never",
                        containers=[
                            client.V1Container(name="c", image="busybox", command=["echo", "YAY"])
                        ],
                    )
                )
            ),
        ),
    )
    conditions: list[str] = []
    for event in watch.Watch().stream(
        batch.list_namespaced_job, namespace, field_selector="metadata.name=at", timeout_seconds=20
    ):
        job = event["object"]
        conditions = [c.type for c in job.status.conditions or []]
        if "Complete" in conditions:
            break
    assert conditions == ["SuccessCriteriaMet", "Complete"]
    assert job.status.succeeded == 1
    assert job.status.completion_time is not None
