{{- define "operator.fullname" -}}{{ .Release.Name }}-sample-controller{{- end -}}
{{- define "operator.labels" -}}
app.kubernetes.io/name: sample-controller
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
