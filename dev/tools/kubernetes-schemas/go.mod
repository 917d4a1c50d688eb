// Pins the Kubernetes release whose OpenAPI description (api/openapi-spec/swagger.json in the
// k8s.io/kubernetes module) `make vet` turns into the JSON schemas kubeconform validates the
// Helm chart against (dev/kubeschema.go). Nothing here is compiled: the module is only
// downloaded, through the Go module proxy, and checked against go.sum.
module pressroom.dev/tools/kubernetes-schemas

go 1.26

require k8s.io/kubernetes v1.34.4
