# cozyhr.mk: the `make show / make diff / make apply` loop for a chart directory, with helm cozy and
# kubectl cozyhr. Include it from the chart's Makefile:
#
#   NAME = my-app                 # the HelmRelease (default: the chart directory's name)
#   NAMESPACE = tenant-root       # its namespace (default: the kubeconfig context's namespace)
#   include ../../scripts/cozyhr.mk
#
# Then, in the chart directory:
#   make show      render as Flux would for HelmRelease NAME       (helm cozy show)
#   make diff      what apply would change in the cluster           (helm cozy diff)
#   make apply     suspend the HelmRelease, upgrade, write status   (helm cozy apply)
#   make values    the composed values and where each key came from (helm cozy values)
#   make delete    uninstall, leave the HelmRelease suspended       (helm cozy delete)
#   make suspend / resume / status / reconcile / tree / drift        (kubectl cozyhr ...)
#
# Extra arguments: COZY_FLAGS for helm cozy (e.g. make diff COZY_FLAGS="-f dev-values.yaml"),
# COZYHR_FLAGS for kubectl cozyhr (e.g. make resume COZYHR_FLAGS=--wait=false). HELM and KUBECTL pick
# the binaries (e.g. HELM=helm4), CHART_DIR the chart (default: the directory make runs in).

NAME ?= $(notdir $(CURDIR))
NAMESPACE ?=
CHART_DIR ?= $(CURDIR)
HELM ?= helm
KUBECTL ?= kubectl
COZY_FLAGS ?=
COZYHR_FLAGS ?=

# Helm takes -n itself and hands it to the plugin; kubectl plugins get it after their name.
cozyhr_ns = $(if $(strip $(NAMESPACE)),-n $(strip $(NAMESPACE)))
cozyhr_helm = $(strip $(HELM) cozy $(1) $(NAME) $(cozyhr_ns) -C $(CHART_DIR) $(COZY_FLAGS))
cozyhr_kubectl = $(strip $(KUBECTL) cozyhr $(1) $(NAME) $(cozyhr_ns) $(COZYHR_FLAGS))

.PHONY: show diff apply values delete suspend resume status reconcile tree drift

show diff apply values delete:
	$(call cozyhr_helm,$@)

suspend resume status reconcile tree drift:
	$(call cozyhr_kubectl,$@)
