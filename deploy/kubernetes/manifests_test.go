// Package kubernetes_test checks the Kubernetes manifests under
// deploy/kubernetes as the cluster would take them: it builds every overlay
// with kustomize (with and without the monitoring component), decodes each
// object strictly into its Kubernetes type, and checks that probes and ports
// point at what the service serves, that every pod meets the "restricted"
// Pod Security level, that a stop fits the grace period, and that applying
// never overwrites the operator's Secret. It also checks the image build
// (deploy/Dockerfile and .dockerignore).
package kubernetes_test

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"facturad/gateway"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/kustomize/api/krusty"
	kusttypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite monitoring/prometheusrule.yaml from deploy/monitoring/alerts.yaml")

const (
	// repoRoot is the repository's root as seen from this package's folder,
	// where go test runs.
	repoRoot = "../.."
	// secretName is the Secret the operator creates; nothing applied may
	// hold it.
	secretName = "facturad"
	// appLabel is the label every facturad pod carries, and the job name
	// the alerts expect.
	appLabel, appName = "app.kubernetes.io/name", "facturad"
	// imageName is the image the overlays' images: entries set.
	imageName = "registry.example.com/facturad"
	// nonroot is the user and group of the distroless image.
	nonroot = 65532
)

// overlays are what an operator applies, each alone and with the
// monitoring component added.
var overlays = []struct {
	name, dir string
	ha        bool
}{
	{name: "embedded", dir: "overlays/embedded"},
	{name: "ha", dir: "overlays/ha", ha: true},
}

// built is one kustomize build, decoded.
type built struct {
	deployments []appsv1.Deployment
	configMaps  map[string]corev1.ConfigMap
	services    []corev1.Service
	pvcs        map[string]corev1.PersistentVolumeClaim
	pdbs        []policyv1.PodDisruptionBudget
	hpas        []autoscalingv2.HorizontalPodAutoscaler
	policies    []networkingv1.NetworkPolicy
	podMonitors []podMonitor
	rules       []prometheusRule
}

// The Prometheus Operator's kinds decode into the operator's own API types
// (its monitoring/v1 package, a test-only dependency): strictly, as the
// Kubernetes kinds do, so a field the CRD does not know, or one of the
// wrong type, fails here rather than at kubectl apply.
type (
	podMonitor     = monitoringv1.PodMonitor
	prometheusRule = monitoringv1.PrometheusRule
)

// kustomize builds dir (relative to deploy/kubernetes), with the given
// components added, from an in-memory copy of deploy/kubernetes: a
// manifest that reached outside that folder would not build.
func kustomize(t *testing.T, dir string, components ...string) built {
	t.Helper()
	mem := filesys.MakeFsInMemory()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return mem.WriteFile(path.Join("/k", filepath.ToSlash(p)), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	root := path.Join("/k", dir)
	if len(components) > 0 {
		root = "/k/test-build"
		k := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [../%s]\ncomponents: [%s]\n",
			dir, strings.Join(prefixAll("../", components), ", "))
		if err := mem.WriteFile(root+"/kustomization.yaml", []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(mem, root)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	b := built{configMaps: map[string]corev1.ConfigMap{}, pvcs: map[string]corev1.PersistentVolumeClaim{}}
	for _, r := range m.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		id := r.GetApiVersion() + " " + r.GetKind()
		strict := func(v any) {
			t.Helper()
			if err := yaml.UnmarshalStrict(y, v); err != nil {
				t.Errorf("%s %s does not decode strictly: %v\n%s", id, r.GetName(), err, y)
			}
		}
		switch id {
		case "apps/v1 Deployment":
			var d appsv1.Deployment
			strict(&d)
			b.deployments = append(b.deployments, d)
		case "v1 ConfigMap":
			var c corev1.ConfigMap
			strict(&c)
			b.configMaps[c.Name] = c
		case "v1 Service":
			var s corev1.Service
			strict(&s)
			b.services = append(b.services, s)
		case "v1 PersistentVolumeClaim":
			var p corev1.PersistentVolumeClaim
			strict(&p)
			b.pvcs[p.Name] = p
		case "policy/v1 PodDisruptionBudget":
			var p policyv1.PodDisruptionBudget
			strict(&p)
			b.pdbs = append(b.pdbs, p)
		case "autoscaling/v2 HorizontalPodAutoscaler":
			var h autoscalingv2.HorizontalPodAutoscaler
			strict(&h)
			b.hpas = append(b.hpas, h)
		case "networking.k8s.io/v1 NetworkPolicy":
			var p networkingv1.NetworkPolicy
			strict(&p)
			b.policies = append(b.policies, p)
		case "monitoring.coreos.com/v1 PodMonitor":
			var p podMonitor
			strict(&p)
			b.podMonitors = append(b.podMonitors, p)
		case "monitoring.coreos.com/v1 PrometheusRule":
			var p prometheusRule
			strict(&p)
			b.rules = append(b.rules, p)
		default:
			// A Secret above all: applying it would overwrite the real one.
			t.Errorf("%s builds a %s (%s), which no check here knows", dir, id, r.GetName())
		}
	}
	return b
}

func prefixAll(prefix string, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = prefix + s
	}
	return out
}

func TestOverlays(t *testing.T) {
	listen, adminListen := listenDefaults(t)
	for _, o := range overlays {
		for _, withMonitoring := range []bool{false, true} {
			name := o.name
			var components []string
			if withMonitoring {
				name += "+monitoring"
				components = []string{"monitoring"}
			}
			t.Run(name, func(t *testing.T) {
				b := kustomize(t, o.dir, components...)
				if len(b.deployments) != 1 {
					t.Fatalf("%d Deployments, want 1", len(b.deployments))
				}
				d := b.deployments[0]
				checkPod(t, b, d, listen, adminListen)
				checkStrategy(t, b, d, o.ha)
				checkNetworkPolicies(t, b, d, o.ha)
				if withMonitoring {
					checkMonitoring(t, b, d)
				} else if len(b.podMonitors)+len(b.rules) > 0 {
					t.Error("the overlay alone needs the Prometheus Operator's kinds")
				}
			})
		}
	}
}

// checkPod checks the pod template every overlay shares.
func checkPod(t *testing.T, b built, d appsv1.Deployment, listen, adminListen string) {
	t.Helper()
	pod := d.Spec.Template
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
		t.Errorf("Deployment selector %v does not select its pods %v (%v)", d.Spec.Selector, pod.Labels, err)
	}
	if pod.Labels[appLabel] != appName {
		t.Errorf("pods labelled %v, want %s: %s", pod.Labels, appLabel, appName)
	}

	// The "restricted" Pod Security level, as the admission controller
	// judges it, and the specific settings asked of every pod.
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lv := psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()}
	if r := policy.AggregateCheckResults(eval.EvaluatePod(lv, &pod.ObjectMeta, &pod.Spec)); !r.Allowed {
		t.Errorf("pod is not at the restricted level: %v %v", r.ForbiddenReasons, r.ForbiddenDetails)
	}
	psc := pod.Spec.SecurityContext
	if psc == nil {
		t.Fatal("pod has no securityContext")
	}
	if !isTrue(psc.RunAsNonRoot) || !is(psc.RunAsUser, nonroot) || !is(psc.RunAsGroup, nonroot) || !is(psc.FSGroup, nonroot) {
		t.Errorf("pod securityContext runs as %s:%s (fsGroup %s, runAsNonRoot %s), want %d:%d, fsGroup %d, non-root",
			show(psc.RunAsUser), show(psc.RunAsGroup), show(psc.FSGroup), show(psc.RunAsNonRoot), nonroot, nonroot, nonroot)
	}
	if psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod seccompProfile %v, want RuntimeDefault", psc.SeccompProfile)
	}
	if isTrue(pod.Spec.AutomountServiceAccountToken) || pod.Spec.AutomountServiceAccountToken == nil {
		t.Error("pods mount a service account token they never use")
	}

	mounts := map[string]bool{}
	containers := append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...)
	for _, c := range containers {
		sc := c.SecurityContext
		if sc == nil || !isFalse(sc.AllowPrivilegeEscalation) || !isTrue(sc.ReadOnlyRootFilesystem) ||
			sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
			t.Errorf("container %s: securityContext %+v, want allowPrivilegeEscalation false, readOnlyRootFilesystem true, capabilities drop [ALL]", c.Name, sc)
		}
		checkImage(t, c)
		for _, m := range c.VolumeMounts {
			if c.Name == "facturad" {
				mounts[m.MountPath] = true
			}
		}
		checkEnvFrom(t, b, c)
	}
	checkMemory(t, *container(pod.Spec.Containers, "facturad"))
	if !mounts["/tmp"] {
		t.Error("nothing writable at /tmp on a read-only root filesystem")
	}

	main := container(pod.Spec.Containers, "facturad")
	if main == nil {
		t.Fatalf("no container named facturad in %v", pod.Spec.Containers)
	}
	// Ports: named as the probes and the Service use them, numbered as the
	// service listens.
	cfg := effectiveConfig(t, b, *main)
	// A cluster is shared: no overlay lets the companies' webhooks reach
	// its internal addresses, whichever tax-authority environment it runs.
	if v, ok := cfg["FACTURAD_WEBHOOK_ALLOW_PRIVATE"]; ok {
		t.Errorf("the overlay sets FACTURAD_WEBHOOK_ALLOW_PRIVATE=%s: webhooks could reach the cluster's own services", v)
	}
	want := map[string]string{"api": listenOr(cfg["FACTURAD_LISTEN"], listen), "admin": listenOr(cfg["FACTURAD_ADMIN_LISTEN"], adminListen)}
	for name, addr := range want {
		p := port(*main, name)
		if p == nil {
			t.Errorf("container declares no port named %s", name)
			continue
		}
		if got := ":" + strconv.Itoa(int(p.ContainerPort)); !strings.HasSuffix(addr, got) {
			t.Errorf("port %s is %d, but the service listens on %q", name, p.ContainerPort, addr)
		}
	}
	probes := []struct {
		name  string
		probe *corev1.Probe
		path  string
		must  bool
	}{
		{"readiness", main.ReadinessProbe, "/readyz", true},
		{"liveness", main.LivenessProbe, "/healthz", true},
		{"startup", main.StartupProbe, "/healthz", false},
	}
	for _, p := range probes {
		if p.probe == nil {
			if p.must {
				t.Errorf("no %s probe", p.name)
			}
			continue
		}
		g := p.probe.HTTPGet
		if g == nil {
			t.Errorf("%s probe is not an HTTP GET", p.name)
			continue
		}
		if g.Path != p.path {
			t.Errorf("%s probe asks %s, want %s", p.name, g.Path, p.path)
		}
		if g.Port.Type != intstr.String || g.Port.StrVal != "admin" {
			t.Errorf("%s probe port %s, want the named port admin", p.name, g.Port.String())
		}
	}
	ready := main.ReadinessProbe
	if ready != nil && (ready.PeriodSeconds != 2 || ready.FailureThreshold != 2 || ready.TimeoutSeconds != 3) {
		t.Errorf("readiness every %d s, failureThreshold %d, timeout %d s; want 2 s, 2 and 3 s",
			ready.PeriodSeconds, ready.FailureThreshold, ready.TimeoutSeconds)
	}
	// The probe must outwait the service's own bound on /readyz (serve
	// leaves the gateway's default): a slower probe would count a check
	// that is still within its time as a failure.
	if ready != nil {
		secs := ready.TimeoutSeconds
		if secs == 0 {
			secs = 1 // the kubelet's default
		}
		if probe := time.Duration(secs) * time.Second; probe <= gateway.DefaultReadyTimeout {
			t.Errorf("readiness timeoutSeconds %v is not longer than /readyz may take (%v)", probe, gateway.DefaultReadyTimeout)
		}
	}

	// A stop: /readyz fails at SIGTERM, the API serves on for the drain
	// delay (by which time the failing probe has taken the pod out of the
	// Service), and the whole stop ends before the kubelet's SIGKILL:
	// grace > shutdown timeout > drain delay > period × failureThreshold.
	shutdown := duration(t, cfg, "FACTURAD_SHUTDOWN_TIMEOUT")
	drain := duration(t, cfg, "FACTURAD_DRAIN_DELAY")
	grace := time.Duration(ptrOr(pod.Spec.TerminationGracePeriodSeconds, 30)) * time.Second
	if grace != 35*time.Second || grace <= shutdown {
		t.Errorf("terminationGracePeriodSeconds %v, want 35s, more than the shutdown timeout %v", grace, shutdown)
	}
	if ready != nil {
		if unready := time.Duration(ready.PeriodSeconds*ready.FailureThreshold) * time.Second; drain <= unready {
			t.Errorf("drain delay %v is not longer than readiness takes to fail (%v)", drain, unready)
		}
	}
	if drain >= shutdown {
		t.Errorf("drain delay %v leaves nothing of the shutdown timeout %v to finish in-flight work", drain, shutdown)
	}

	// The Service sends API traffic to the API port of these pods.
	if len(b.services) != 1 {
		t.Fatalf("%d Services, want 1", len(b.services))
	}
	svc := b.services[0]
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) || len(svc.Spec.Selector) == 0 {
		t.Errorf("Service selector %v does not select the pods %v", svc.Spec.Selector, pod.Labels)
	}
	for _, p := range svc.Spec.Ports {
		if p.TargetPort.Type != intstr.String || p.TargetPort.StrVal != "api" {
			t.Errorf("Service port %s targets %s, want the named port api", p.Name, p.TargetPort.String())
		}
	}
}

// checkStrategy checks what differs between the overlays: how a release
// replaces pods, where the data lives, who migrates.
func checkStrategy(t *testing.T, b built, d appsv1.Deployment, ha bool) {
	t.Helper()
	pod := d.Spec.Template.Spec
	main := container(pod.Containers, "facturad")
	cfg := effectiveConfig(t, b, *main)
	replicas := ptrOr(d.Spec.Replicas, 1)
	if !ha {
		// One SQLite file has one writer.
		if replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("embedded: %d replicas, strategy %q; want 1 and Recreate", replicas, d.Spec.Strategy.Type)
		}
		if len(pod.InitContainers) > 0 {
			t.Errorf("embedded: init containers %v; the embedded store migrates itself and `facturad migrate` refuses it", pod.InitContainers)
		}
		dataDir := cfg["FACTURAD_DATA_DIR"]
		var claim string
		for _, m := range main.VolumeMounts {
			if m.MountPath == dataDir && !m.ReadOnly {
				for _, v := range pod.Volumes {
					if v.Name == m.Name && v.PersistentVolumeClaim != nil {
						claim = v.PersistentVolumeClaim.ClaimName
					}
				}
			}
		}
		if _, ok := b.pvcs[claim]; dataDir == "" || !ok {
			t.Errorf("embedded: data dir %q is not a writable mount of a PersistentVolumeClaim built with it (claim %q)", dataDir, claim)
		}
		return
	}

	// The HorizontalPodAutoscaler owns the count: a count in the
	// Deployment would be set back at every apply.
	if d.Spec.Replicas != nil {
		t.Errorf("ha: the Deployment sets %d replicas, which the HorizontalPodAutoscaler owns", *d.Spec.Replicas)
	}
	checkHPA(t, b, d)
	ru := d.Spec.Strategy.RollingUpdate
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 {
		t.Errorf("ha: strategy %+v, want a rolling update with maxUnavailable 0", d.Spec.Strategy)
	}
	// Migrations run before the new release's process, in the same image.
	if len(pod.InitContainers) != 1 || !slices.Equal(pod.InitContainers[0].Args, []string{"migrate"}) || pod.InitContainers[0].Image != main.Image {
		t.Errorf("ha: init containers %+v, want one running `migrate` on %s", pod.InitContainers, main.Image)
	}
	if len(b.pvcs) > 0 || cfg["FACTURAD_DATA_DIR"] != "" {
		t.Error("ha: replicas keep no local data")
	}
	// Spread across nodes (required) and zones (preferred).
	spread := map[string]corev1.UnsatisfiableConstraintAction{}
	for _, c := range pod.TopologySpreadConstraints {
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("ha: spread over %s counts pods %v, not these (%v)", c.TopologyKey, c.LabelSelector, err)
		}
		spread[c.TopologyKey] = c.WhenUnsatisfiable
	}
	if spread["kubernetes.io/hostname"] != corev1.DoNotSchedule || spread["topology.kubernetes.io/zone"] != corev1.ScheduleAnyway {
		t.Errorf("ha: spread %v, want hostname DoNotSchedule and zone ScheduleAnyway", spread)
	}
	if len(b.pdbs) != 1 {
		t.Fatalf("ha: %d PodDisruptionBudgets, want 1", len(b.pdbs))
	}
	pdb := b.pdbs[0]
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("ha: PodDisruptionBudget selects %v, not the pods (%v)", pdb.Spec.Selector, err)
	}
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("ha: PodDisruptionBudget maxUnavailable %v, want 1", pdb.Spec.MaxUnavailable)
	}
	// A store outage makes every replica unready: a drain must not wait on
	// pods that serve nothing.
	if p := pdb.Spec.UnhealthyPodEvictionPolicy; p == nil || *p != policyv1.AlwaysAllow {
		t.Errorf("ha: PodDisruptionBudget unhealthyPodEvictionPolicy %s, want AlwaysAllow", show(p))
	}
}

// checkMonitoring checks that the PodMonitor scrapes these pods' admin port
// under job="facturad", and that the PrometheusRule carries the alerts.
func checkMonitoring(t *testing.T, b built, d appsv1.Deployment) {
	t.Helper()
	if len(b.podMonitors) != 1 {
		t.Fatalf("%d PodMonitors, want 1", len(b.podMonitors))
	}
	pm := b.podMonitors[0]
	pod := d.Spec.Template
	sel, err := metav1.LabelSelectorAsSelector(&pm.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
		t.Errorf("PodMonitor selects %v, not the pods %v (%v)", pm.Spec.Selector, pod.Labels, err)
	}
	if job := pod.Labels[pm.Spec.JobLabel]; pm.Spec.JobLabel == "" || job != appName {
		t.Errorf("PodMonitor jobLabel %q gives job %q, want %q (the alerts use up{job=%q})", pm.Spec.JobLabel, job, appName, appName)
	}
	main := container(pod.Spec.Containers, "facturad")
	if len(pm.Spec.PodMetricsEndpoints) != 1 {
		t.Fatalf("PodMonitor has %d endpoints, want 1", len(pm.Spec.PodMetricsEndpoints))
	}
	ep := pm.Spec.PodMetricsEndpoints[0]
	if ep.Port == nil || *ep.Port != "admin" || port(*main, *ep.Port) == nil || ep.Path != "/metrics" {
		t.Errorf("PodMonitor scrapes port %v path %q, want the container's port admin, /metrics", ep.Port, ep.Path)
	}

	if len(b.rules) != 1 {
		t.Fatalf("%d PrometheusRules, want 1", len(b.rules))
	}
	alerts, err := os.ReadFile(filepath.Join(repoRoot, "deploy/monitoring/alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// A Prometheus rules file has the shape of a PrometheusRule's spec.
	var want monitoringv1.PrometheusRuleSpec
	if err := yaml.UnmarshalStrict(alerts, &want); err != nil {
		t.Fatalf("deploy/monitoring/alerts.yaml: %v", err)
	}
	if len(want.Groups) == 0 {
		t.Fatal("deploy/monitoring/alerts.yaml has no groups")
	}
	if !reflect.DeepEqual(b.rules[0].Spec, want) {
		t.Errorf("the PrometheusRule's groups differ from deploy/monitoring/alerts.yaml; run %s", updateCommand)
	}
}

const updateCommand = "go test ./deploy/kubernetes -run TestPrometheusRuleFile -update"

// TestPrometheusRuleFile keeps monitoring/prometheusrule.yaml the
// PrometheusRule of deploy/monitoring/alerts.yaml, comments included: the
// rules are written once, in alerts.yaml, and copied here by -update.
func TestPrometheusRuleFile(t *testing.T) {
	alerts, err := os.ReadFile(filepath.Join(repoRoot, "deploy/monitoring/alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := prometheusRuleFile(alerts)
	const file = "monitoring/prometheusrule.yaml"
	if *update {
		if err := os.WriteFile(file, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not deploy/monitoring/alerts.yaml's rules; run %s", file, updateCommand)
	}
}

// prometheusRuleFile makes the PrometheusRule of a Prometheus rules file:
// its content, less the leading comments, indented under spec. YAML's
// block structure is relative, so indenting every line keeps its meaning.
func prometheusRuleFile(rules []byte) []byte {
	var out bytes.Buffer
	out.WriteString(`# Generated from deploy/monitoring/alerts.yaml by
#   ` + updateCommand + `
# Edit alerts.yaml, not this file.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: facturad
  labels:
    app.kubernetes.io/name: facturad
spec:
`)
	lines := strings.Split(strings.TrimRight(string(rules), "\n"), "\n")
	for len(lines) > 0 && (strings.HasPrefix(lines[0], "#") || strings.TrimSpace(lines[0]) == "") {
		lines = lines[1:]
	}
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			out.WriteString("  " + l)
		}
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// TestSecretIsNotApplied checks that the example Secret is in no
// kustomization and that no kustomization generates a Secret, so that
// re-applying leaves the operator's Secret alone; and that the example
// names the Secret the pods read, with settings the service knows.
func TestSecretIsNotApplied(t *testing.T) {
	var found int
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "kustomization.yaml" {
			return err
		}
		found++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var k kusttypes.Kustomization
		if err := yaml.UnmarshalStrict(b, &k); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		if len(k.SecretGenerator) > 0 {
			t.Errorf("%s generates a Secret; applying it would overwrite the operator's", p)
		}
		var generic any
		if err := yaml.Unmarshal(b, &generic); err != nil {
			return err
		}
		for _, s := range stringsIn(generic) {
			if strings.Contains(s, "secret.example") {
				t.Errorf("%s refers to %s", p, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 4 {
		t.Errorf("found %d kustomization.yaml files, want base, two overlays and monitoring", found)
	}

	b, err := os.ReadFile("secret.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var s corev1.Secret
	if err := yaml.UnmarshalStrict(b, &s); err != nil {
		t.Fatalf("secret.example.yaml: %v", err)
	}
	if s.Name != secretName {
		t.Errorf("the example Secret is %q, the pods read %q", s.Name, secretName)
	}
	known := settingNames(t)
	for k := range s.StringData {
		if !known[k] {
			t.Errorf("secret.example.yaml sets %s, which is no setting of cmd/facturad/config.go", k)
		}
	}
	for _, k := range []string{"FACTURAD_DATABASE_URL", "FACTURAD_REDIS_URL", "FACTURAD_MASTER_KEY"} {
		if _, ok := s.StringData[k]; !ok {
			t.Errorf("secret.example.yaml lacks %s", k)
		}
	}
}

func stringsIn(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, stringsIn(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, e := range v {
			out = append(out, stringsIn(e)...)
		}
		return out
	}
	return nil
}

// checkImage checks that a container's image is the one the overlays'
// images: entries set, with a tag other than latest or a digest.
func checkImage(t *testing.T, c corev1.Container) {
	t.Helper()
	name, digest, _ := strings.Cut(c.Image, "@")
	tag := ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	if name != imageName {
		t.Errorf("container %s runs %q, not %s as set by the overlay's images:", c.Name, c.Image, imageName)
	}
	if digest == "" && (tag == "" || tag == "latest") {
		t.Errorf("container %s runs %q: no tag or latest", c.Name, c.Image)
	}
}

// checkEnvFrom checks that a container reads the built ConfigMap and the
// operator's Secret, the latter required so that a pod without it does not
// start on defaults. The service reads the whole Secret; the migrate init
// container only the keys of the settings `facturad migrate` reads, one
// secretKeyRef each.
func checkEnvFrom(t *testing.T, b built, c corev1.Container) {
	t.Helper()
	var cm, secret bool
	for _, e := range c.EnvFrom {
		switch {
		case e.ConfigMapRef != nil:
			_, cm = b.configMaps[e.ConfigMapRef.Name]
		case e.SecretRef != nil:
			secret = e.SecretRef.Name == secretName && !isTrue(e.SecretRef.Optional)
			if c.Name == "migrate" {
				t.Errorf("container migrate: envFrom the whole Secret %s, want only the keys migrate reads", e.SecretRef.Name)
			}
		}
	}
	if c.Name == "migrate" {
		reads := commandSettings(t, "migrate")
		keys := map[string]bool{}
		for _, e := range c.Env {
			ref := e.ValueFrom
			if ref == nil || ref.SecretKeyRef == nil {
				continue
			}
			k := ref.SecretKeyRef
			if k.Name != secretName || isTrue(k.Optional) || e.Name != k.Key {
				t.Errorf("container migrate: %s from %+v, want the required key of the same name in Secret %s", e.Name, k, secretName)
			}
			if !reads[k.Key] {
				t.Errorf("container migrate: gets %s from the Secret, a setting migrate does not read (it reads %v)", k.Key, reads)
			}
			keys[k.Key] = true
		}
		secret = keys["FACTURAD_DATABASE_URL"]
	}
	if !cm || !secret {
		t.Errorf("container %s: envFrom %+v env %+v, want the built ConfigMap and the required Secret %s (migrate: its database URL)",
			c.Name, c.EnvFrom, c.Env, secretName)
	}
}

// commandSettings reads the settings a command reads, as FACTURAD_<NAME>,
// from commandSettings in cmd/facturad/config.go.
func commandSettings(t *testing.T, cmd string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	ast.Inspect(configSource(t), func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "commandSettings" || len(vs.Values) != 1 {
			return true
		}
		lit, ok := vs.Values[0].(*ast.CompositeLit)
		if !ok {
			return false
		}
		for _, e := range lit.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			if key, ok := kv.Key.(*ast.BasicLit); !ok || key.Value != strconv.Quote(cmd) {
				continue
			}
			list, ok := kv.Value.(*ast.CompositeLit)
			if !ok {
				continue
			}
			for _, v := range list.Elts {
				if s, ok := v.(*ast.BasicLit); ok && s.Kind == token.STRING {
					name, _ := strconv.Unquote(s.Value)
					names["FACTURAD_"+strings.ToUpper(name)] = true
				}
			}
		}
		return false
	})
	if len(names) == 0 {
		t.Fatalf("no settings of %s found in commandSettings (cmd/facturad/config.go)", cmd)
	}
	return names
}

// effectiveConfig is the environment a container gets from its ConfigMaps.
func effectiveConfig(t *testing.T, b built, c corev1.Container) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, e := range c.EnvFrom {
		if e.ConfigMapRef != nil {
			for k, v := range b.configMaps[e.ConfigMapRef.Name].Data {
				env[k] = v
			}
		}
	}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	return env
}

func duration(t *testing.T, env map[string]string, name string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(env[name])
	if err != nil {
		t.Errorf("%s: %q, want it set explicitly to a duration (%v)", name, env[name], err)
	}
	return d
}

func listenOr(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

func container(cs []corev1.Container, name string) *corev1.Container {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

func port(c corev1.Container, name string) *corev1.ContainerPort {
	for i := range c.Ports {
		if c.Ports[i].Name == name {
			return &c.Ports[i]
		}
	}
	return nil
}

func isTrue(b *bool) bool  { return b != nil && *b }
func isFalse(b *bool) bool { return b != nil && !*b }
func is(p *int64, v int64) bool {
	return p != nil && *p == v
}
func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
func show[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

// configSource parses cmd/facturad/config.go, where the settings and
// their defaults are.
func configSource(t *testing.T) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(repoRoot, "cmd/facturad/config.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// listenDefaults reads the defaults of Listen and AdminListen from
// DefaultConfig in cmd/facturad/config.go.
func listenDefaults(t *testing.T) (listen, admin string) {
	t.Helper()
	fields := map[string]string{}
	for _, d := range configSource(t).Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "DefaultConfig" {
			continue
		}
		ast.Inspect(fn, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			key, ok1 := kv.Key.(*ast.Ident)
			lit, ok2 := kv.Value.(*ast.BasicLit)
			if ok1 && ok2 && lit.Kind == token.STRING {
				fields[key.Name], _ = strconv.Unquote(lit.Value)
			}
			return true
		})
	}
	listen, admin = fields["Listen"], fields["AdminListen"]
	if listen == "" || admin == "" {
		t.Fatalf("no Listen and AdminListen defaults found in DefaultConfig: %v", fields)
	}
	return listen, admin
}

// settingNames lists FACTURAD_<NAME> for every setting of
// cmd/facturad/config.go.
func settingNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	ast.Inspect(configSource(t), func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		key, ok1 := kv.Key.(*ast.Ident)
		lit, ok2 := kv.Value.(*ast.BasicLit)
		if ok1 && ok2 && key.Name == "name" && lit.Kind == token.STRING {
			s, _ := strconv.Unquote(lit.Value)
			names["FACTURAD_"+strings.ToUpper(s)] = true
		}
		return true
	})
	if len(names) < 10 {
		t.Fatalf("found only %d settings in cmd/facturad/config.go", len(names))
	}
	return names
}
