package kubernetes_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// measuredPeak is the largest resident memory a replica reached in the
// production drills (docs/operations.md, Memory); the request must hold it
// with headroom.
var measuredPeak = resource.MustParse("333Mi")

// headroom is how much above measuredPeak the memory request must be.
const headroom = 1.25

// checkMemory checks the service container's memory: a request that holds
// the measured peak with headroom, and a limit whose share Go takes as its
// soft limit (memoryLimitShare in cmd/facturad/memlimit.go) stays above
// the request, so that the collector does not work hard below the memory
// the scheduler set aside.
func checkMemory(t *testing.T, c corev1.Container) {
	t.Helper()
	req, lim := c.Resources.Requests.Memory(), c.Resources.Limits.Memory()
	if req.IsZero() || lim.IsZero() {
		t.Fatalf("container %s: memory request %v, limit %v; want both", c.Name, req, lim)
	}
	if float64(req.Value()) < headroom*float64(measuredPeak.Value()) {
		t.Errorf("memory request %v is not %.2f× the measured peak %v", req, headroom, &measuredPeak)
	}
	share := memoryLimitShare(t)
	if soft := share * float64(lim.Value()); soft <= float64(req.Value()) {
		t.Errorf("memory limit %v: Go's soft limit (%.2f of it, %.0f MiB) is not above the request %v", lim, share, soft/(1<<20), req)
	}
}

// memoryLimitShare reads the share of the memory limit the service takes
// as Go's soft limit from cmd/facturad/memlimit.go.
func memoryLimitShare(t *testing.T) float64 {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(repoRoot, "cmd/facturad/memlimit.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	share := -1.0
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if ok && len(vs.Names) == 1 && vs.Names[0].Name == "memoryLimitShare" && len(vs.Values) == 1 {
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok {
				share, _ = strconv.ParseFloat(lit.Value, 64)
			}
		}
		return true
	})
	if share <= 0 || share > 1 {
		t.Fatalf("memoryLimitShare not found in cmd/facturad/memlimit.go (%v)", share)
	}
	return share
}

// checkHPA checks the ha overlay's HorizontalPodAutoscaler: it scales this
// Deployment on CPU (which the pods request), never below the three
// replicas the PodDisruptionBudget needs, and removes one replica at a
// time, slowly enough that each drains before the next goes.
func checkHPA(t *testing.T, b built, d appsv1.Deployment) {
	t.Helper()
	if len(b.hpas) != 1 {
		t.Fatalf("ha: %d HorizontalPodAutoscalers, want 1", len(b.hpas))
	}
	h := b.hpas[0].Spec
	if ref := h.ScaleTargetRef; ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != d.Name {
		t.Errorf("ha: the HPA scales %+v, not Deployment %s", ref, d.Name)
	}
	if minR := ptrOr(h.MinReplicas, 1); minR < 3 || h.MaxReplicas <= minR {
		t.Errorf("ha: the HPA scales between %d and %d replicas; want at least 3 and room above", minR, h.MaxReplicas)
	}
	main := container(d.Spec.Template.Spec.Containers, "facturad")
	if len(h.Metrics) != 1 {
		t.Fatalf("ha: HPA metrics %+v, want one: CPU", h.Metrics)
	}
	m := h.Metrics[0]
	if m.Type != autoscalingv2.ResourceMetricSourceType || m.Resource == nil || m.Resource.Name != corev1.ResourceCPU ||
		m.Resource.Target.Type != autoscalingv2.UtilizationMetricType || m.Resource.Target.AverageUtilization == nil {
		t.Fatalf("ha: HPA metric %+v, want the pods' average CPU utilization", m)
	}
	if u := *m.Resource.Target.AverageUtilization; u < 50 || u > 85 {
		t.Errorf("ha: HPA target %d%% of the CPU request, want 50–85%% (room for a burst while new pods start)", u)
	}
	if main.Resources.Requests.Cpu().IsZero() {
		t.Error("ha: the HPA scales on CPU utilization, but the container requests no CPU")
	}
	beh := h.Behavior
	if beh == nil || beh.ScaleDown == nil || beh.ScaleUp == nil {
		t.Fatalf("ha: HPA behavior %+v, want scale-up and scale-down set", beh)
	}
	down := beh.ScaleDown
	if w := ptrOr(down.StabilizationWindowSeconds, 0); w < 300 {
		t.Errorf("ha: scale-down stabilization %d s, want at least 300 s", w)
	}
	grace := time.Duration(ptrOr(d.Spec.Template.Spec.TerminationGracePeriodSeconds, 30)) * time.Second
	if len(down.Policies) == 0 {
		t.Error("ha: no scale-down policy: the HPA may remove every replica above the minimum at once")
	}
	for _, p := range down.Policies {
		if p.Type != autoscalingv2.PodsScalingPolicy || p.Value != 1 || time.Duration(p.PeriodSeconds)*time.Second <= grace {
			t.Errorf("ha: scale-down policy %+v, want one pod per period longer than the grace period %v", p, grace)
		}
	}
	if len(beh.ScaleUp.Policies) == 0 {
		t.Error("ha: no scale-up policy")
	}
}

// checkNetworkPolicies checks the policies that select the pods: ingress
// only to the named api and admin ports and only from named peers, egress
// only to DNS, HTTPS and SMTP on public addresses, and (ha) PostgreSQL and
// Redis.
func checkNetworkPolicies(t *testing.T, b built, d appsv1.Deployment, ha bool) {
	t.Helper()
	podLabels := labels.Set(d.Spec.Template.Labels)
	main := container(d.Spec.Template.Spec.Containers, "facturad")
	var ingressPolicy, egressPolicy bool
	ingressPorts := map[string]bool{}
	egressPorts := map[string]bool{} // "TCP/443"
	for _, np := range b.policies {
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil || sel.Empty() || !sel.Matches(podLabels) {
			t.Errorf("NetworkPolicy %s selects %v, not the pods (%v)", np.Name, np.Spec.PodSelector, err)
			continue
		}
		for _, pt := range np.Spec.PolicyTypes {
			switch pt {
			case networkingv1.PolicyTypeIngress:
				ingressPolicy = true
			case networkingv1.PolicyTypeEgress:
				egressPolicy = true
			}
		}
		for _, r := range np.Spec.Ingress {
			if len(r.From) == 0 || len(r.Ports) == 0 {
				t.Errorf("NetworkPolicy %s: ingress rule %+v lets anything in, or to every port", np.Name, r)
			}
			for _, p := range r.Ports {
				if p.Port == nil || p.Port.Type != intstr.String || port(*main, p.Port.StrVal) == nil ||
					(p.Port.StrVal != "api" && p.Port.StrVal != "admin") {
					t.Errorf("NetworkPolicy %s: ingress to %v, want the container's named port api or admin", np.Name, p.Port)
					continue
				}
				ingressPorts[p.Port.StrVal] = true
			}
		}
		for _, r := range np.Spec.Egress {
			if len(r.To) == 0 || len(r.Ports) == 0 {
				t.Errorf("NetworkPolicy %s: egress rule %+v lets the pods reach anything, or every port", np.Name, r)
			}
			var public, public4, public6 bool
			for _, peer := range r.To {
				if peer.IPBlock != nil {
					checkPublicOnly(t, np.Name, *peer.IPBlock)
					public = true
					switch peer.IPBlock.CIDR {
					case "0.0.0.0/0":
						public4 = true
					case "::/0":
						public6 = true
					}
				}
			}
			// A rule open to every public address is open on both
			// families: on a dual-stack or IPv6 cluster the tax
			// authority, webhooks and mail relay may answer on IPv6.
			if public4 != public6 {
				t.Errorf("NetworkPolicy %s: egress rule to %v opens every public address of one family only (IPv4 %v, IPv6 %v)", np.Name, r.Ports, public4, public6)
			}
			for _, p := range r.Ports {
				if p.Port == nil || p.Port.Type != intstr.Int || p.EndPort != nil {
					t.Errorf("NetworkPolicy %s: egress to port %v, want one numbered port a rule", np.Name, p.Port)
					continue
				}
				proto := corev1.ProtocolTCP
				if p.Protocol != nil {
					proto = *p.Protocol
				}
				key := string(proto) + "/" + p.Port.String()
				egressPorts[key] = true
				// Only HTTPS and SMTP go out to public addresses.
				if public && !slices.Contains([]string{"TCP/443", "TCP/587", "TCP/465"}, key) {
					t.Errorf("NetworkPolicy %s: %s to public addresses", np.Name, key)
				}
			}
		}
	}
	if !ingressPolicy || !egressPolicy {
		t.Errorf("no NetworkPolicy restricts the pods' ingress (%v) and egress (%v)", ingressPolicy, egressPolicy)
	}
	if !ingressPorts["api"] || !ingressPorts["admin"] {
		t.Errorf("ingress allowed to %v, want api (the callers) and admin (Prometheus)", ingressPorts)
	}
	want := []string{"UDP/53", "TCP/53", "TCP/443", "TCP/587"}
	if ha {
		want = append(want, "TCP/5432", "TCP/6379")
	}
	for _, k := range want {
		if !egressPorts[k] {
			t.Errorf("no egress to %s (egress: %v)", k, egressPorts)
		}
	}
	if !ha && (egressPorts["TCP/5432"] || egressPorts["TCP/6379"]) {
		t.Errorf("embedded: egress to PostgreSQL or Redis, which it does not use: %v", egressPorts)
	}
}

// checkPublicOnly checks that an address block open to the internet
// leaves out the private, shared, link-local (the cloud metadata address)
// and loopback ranges: those are the cluster's own.
func checkPublicOnly(t *testing.T, name string, b networkingv1.IPBlock) {
	t.Helper()
	cidr, err := netip.ParsePrefix(b.CIDR)
	if err != nil {
		t.Errorf("NetworkPolicy %s: ipBlock %q: %v", name, b.CIDR, err)
		return
	}
	if cidr.Bits() != 0 {
		return // a block the operator narrowed to
	}
	var except []netip.Prefix
	for _, e := range b.Except {
		p, err := netip.ParsePrefix(e)
		if err != nil {
			t.Errorf("NetworkPolicy %s: except %q: %v", name, e, err)
			continue
		}
		except = append(except, p)
	}
	own := []string{"10.1.2.3", "172.20.0.1", "192.168.1.1", "100.64.0.1", "169.254.169.254", "127.0.0.1"}
	if cidr.Addr().Is6() {
		// Unique local (a cluster's pods and services, the cloud metadata
		// service at fd00:ec2::254), link-local and loopback.
		own = []string{"fd00:ec2::254", "fd12:3456::1", "fe80::1", "::1"}
	}
	for _, addr := range own {
		a := netip.MustParseAddr(addr)
		if !slices.ContainsFunc(except, func(p netip.Prefix) bool { return p.Contains(a) }) {
			t.Errorf("NetworkPolicy %s: %s opens %s, an address of the cluster's own networks", name, b.CIDR, addr)
		}
	}
}
