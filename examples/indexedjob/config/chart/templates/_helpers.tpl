{{- define "operator.fullname" -}}{{ .Release.Name }}-indexedjob-operator{{- end -}}
{{- define "operator.labels" -}}
app.kubernetes.io/name: indexedjob-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
