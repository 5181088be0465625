{{- define "mthpctl-nri.labels" -}}
app.kubernetes.io/name: mthpctl-nri
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "mthpctl-nri.selector" -}}
app.kubernetes.io/name: mthpctl-nri
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
