"""cronjob: kubebuilder's CronJob tutorial (controller, webhooks, two API versions) ported."""
