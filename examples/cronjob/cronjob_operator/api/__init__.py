"""The custom resource of cronjob in its two versions: v1 (hub, storage) and v2."""
