module govec

go 1.26.0

require (
	github.com/evanphx/json-patch/v5 v5.9.11
	github.com/wI2L/jsondiff v0.7.1
	k8s.io/apimachinery v0.36.2
	k8s.io/utils v0.0.0-20260507154919-ff6756f316d2
)

require (
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/tidwall/gjson v1.18.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
	k8s.io/klog/v2 v2.140.0 // indirect
)
