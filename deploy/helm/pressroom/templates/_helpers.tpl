{{/* Names and labels, as `helm create` makes them. */}}
{{- define "pressroom.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "pressroom.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "pressroom.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "pressroom.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "pressroom.selectorLabels" -}}
app.kubernetes.io/name: {{ include "pressroom.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The image of a component: its own tag if set (api.imageTag, worker.imageTag: to roll the workers
out before the API), else image.tag, else the chart's appVersion. Call with (list $ tag).
*/}}
{{- define "pressroom.image" -}}
{{- $root := index . 0 }}
{{- $tag := index . 1 | default $root.Values.image.tag | default $root.Chart.AppVersion -}}
{{ $root.Values.image.repository }}:{{ $tag }}
{{- end }}

{{/* The Secret holding the secret settings: the chart's own or the one named. */}}
{{- define "pressroom.secretName" -}}
{{- if .Values.secret.create }}
{{- include "pressroom.fullname" . }}
{{- else }}
{{- required "secret.existingSecret: name the Secret holding DATABASE_URL, PRESSROOM_S3_ACCESS_KEY, PRESSROOM_S3_SECRET_KEY, PRESSROOM_CLIENT_SECRET_KEY and PRESSROOM_WEBHOOK_SECRET_KEY, or set secret.create=true" .Values.secret.existingSecret }}
{{- end }}
{{- end }}

{{/* PRESSROOM_PUBLIC_URL: the value given, else the api Service's in-cluster URL. */}}
{{- define "pressroom.publicURL" -}}
{{- if .Values.publicURL }}
{{- .Values.publicURL }}
{{- else }}
{{- $host := printf "%s-api.%s.svc.cluster.local" (include "pressroom.fullname" .) .Release.Namespace }}
{{- if eq (int .Values.api.service.port) 80 }}
{{- printf "http://%s" $host }}
{{- else }}
{{- printf "http://%s:%v" $host .Values.api.service.port }}
{{- end }}
{{- end }}
{{- end }}

{{/*
An environment variable read from the Secret, under its own name.
Call with (list $ "VARIABLE").
*/}}
{{- define "pressroom.secretEnv" -}}
{{- $root := index . 0 }}
{{- $name := index . 1 -}}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "pressroom.secretName" $root }}
      key: {{ $name }}
{{- end }}

{{/* The pod-level settings every Deployment and the Job share. */}}
{{- define "pressroom.podCommon" -}}
{{- with .Values.imagePullSecrets -}}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{ end -}}
automountServiceAccountToken: false
enableServiceLinks: false
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end }}

{{/* Checksums of the configuration, so a change rolls the pods. */}}
{{- define "pressroom.configChecksums" -}}
checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
{{- if .Values.secret.create }}
checksum/secret: {{ include (print $.Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}
{{- end }}
