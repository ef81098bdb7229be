{{- define "operator.fullname" -}}{{ .Release.Name }}-cronjob-operator{{- end -}}
{{- define "operator.labels" -}}
app.kubernetes.io/name: cronjob-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
