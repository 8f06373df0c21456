package kube_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/provider"
)

// TestAgainstARealAPIServer runs the provider against a real kube-apiserver
// and etcd on loopback ports: the API server validates the pods it builds
// (which the fake does not), and pods really stay terminating through their
// grace. There is no scheduler or kubelet: the test writes the statuses
// they would. Opt in by naming the binaries (scripts/build-kube-test-servers.sh
// builds both):
//
//	BALLAST_KUBE_APISERVER=.../kube-apiserver BALLAST_ETCD=.../etcd go test -run TestAgainstARealAPIServer ./orchestrator/control/provider/kube/
func TestAgainstARealAPIServer(t *testing.T) {
	client := realCluster(t)
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := testenv.NewClock(time.Now())
	p := newProvider(t, client, c)

	// The API server accepts the pods of both templates.
	spot, err := p.Launch(ctx, "spot-gpu", 1)
	if err != nil {
		t.Fatalf("the API server refused the spot pod: %v", err)
	}
	od, err := p.Launch(ctx, "od", 1)
	if err != nil {
		t.Fatalf("the API server refused the on-demand pod: %v", err)
	}
	pod, err := client.CoreV1().Pods(testNS).Get(ctx, spot[0].ID, metav1.GetOptions{})
	if err != nil || pod.Spec.TerminationGracePeriodSeconds == nil || *pod.Spec.TerminationGracePeriodSeconds != 360 {
		t.Fatalf("stored spot pod %v: %v", pod, err)
	}

	// The on-demand pod is bound and runs; its node is then tainted.
	bind(t, client, od[0].ID, "node-a")
	realStatus(t, client, od[0].ID, running("node-a", c.Now()))
	eventually(t, "the on-demand pod running", func() bool { in, _ := listed(t, p, od[0].ID); return in.State == provider.Running })
	tainted := c.Now().Truncate(time.Second)
	node.Spec.Taints = []corev1.Taint{{Key: "karpenter.sh/disrupted", Effect: corev1.TaintEffectNoSchedule, TimeAdded: &metav1.Time{Time: tainted}}}
	if _, err := client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a reclaim time from the taint", func() bool {
		in, _ := listed(t, p, od[0].ID)
		return in.ReclaimAt.Equal(tainted.Add(2 * time.Minute))
	})

	// Release: a bound pod stays terminating for its grace (no kubelet
	// here confirms the stop).
	if err := p.Release(ctx, od[0].ID); err != nil {
		t.Fatal(err)
	}
	pod, err = client.CoreV1().Pods(testNS).Get(ctx, od[0].ID, metav1.GetOptions{})
	if err != nil || pod.DeletionTimestamp == nil || pod.DeletionGracePeriodSeconds == nil || *pod.DeletionGracePeriodSeconds != 90 {
		t.Fatalf("released pod %+v: %v, want terminating with a 90 s grace", pod.ObjectMeta, err)
	}
	eventually(t, "the released pod releasing", func() bool { in, _ := listed(t, p, od[0].ID); return in.State == provider.Releasing })

	// The spot pod cannot be placed: a stock-out past unschedulable_after.
	realStatus(t, client, spot[0].ID, unschedulable(c.Now()))
	c.Add(3 * time.Minute)
	eventually(t, "the stock-out", func() bool {
		in, _ := listed(t, p, spot[0].ID)
		return in.State == provider.StockedOut
	})
	if _, err := client.CoreV1().Pods(testNS).Get(ctx, spot[0].ID, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the stocked-out pod is still there: %v", err)
	}
}

// TestControllerAgainstARealAPIServer is the controller's fallback from
// unschedulable spot pods, and its restart, against a real API server.
func TestControllerAgainstARealAPIServer(t *testing.T) {
	fallbackFromUnschedulable(t, realCluster(t), testenv.NewClock(time.Now()))
}

// realCluster starts etcd and kube-apiserver for the test, or skips it
// when their binaries are not named, and makes the namespace and the
// workers' service account.
func realCluster(t *testing.T) kubernetes.Interface {
	t.Helper()
	apiserver, etcd := os.Getenv("BALLAST_KUBE_APISERVER"), os.Getenv("BALLAST_ETCD")
	if apiserver == "" || etcd == "" {
		t.Skip("set BALLAST_KUBE_APISERVER and BALLAST_ETCD to a kube-apiserver and an etcd binary (scripts/build-kube-test-servers.sh builds them) to run the provider against a real API server")
	}
	client := startAPIServer(t, apiserver, etcd)
	ctx := context.Background()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().ServiceAccounts(testNS).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "ballast-worker"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return client
}

// realConfigs are the REST configs of the real API servers the tests run,
// by the test's client: newProvider gives the provider the real API.
var realConfigs = map[kubernetes.Interface]*rest.Config{}

// bind assigns a pod to a node, as the scheduler does.
func bind(t *testing.T, client kubernetes.Interface, pod, node string) {
	t.Helper()
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	if err := client.CoreV1().Pods(testNS).Bind(context.Background(), b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// realStatus is setStatus for an API server, which keeps the spec a
// status update carries out: the node comes from bind.
func realStatus(t *testing.T, client kubernetes.Interface, name string, change func(*corev1.Pod)) {
	t.Helper()
	setStatus(t, client, name, func(pod *corev1.Pod) {
		nodeName := pod.Spec.NodeName
		change(pod)
		pod.Spec.NodeName = nodeName
	})
}

// startAPIServer runs etcd and kube-apiserver on free loopback ports until
// the test ends and returns an admin client.
func startAPIServer(t *testing.T, apiserverBin, etcdBin string) kubernetes.Interface {
	t.Helper()
	dir := t.TempDir()
	etcdClient, etcdPeer, apiPort := freePort(t), freePort(t), freePort(t)
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdClient)
	run(t, dir, "etcd", etcdBin, "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPeer),
		"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPeer),
		"--initial-cluster", fmt.Sprintf("default=http://127.0.0.1:%d", etcdPeer))

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "sa.key")
	writeFile(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	token := testenv.RandomHex(16)
	tokens := filepath.Join(dir, "tokens.csv")
	writeFile(t, tokens, []byte(token+",admin,admin,system:masters\n"))
	run(t, dir, "kube-apiserver", apiserverBin,
		"--etcd-servers", etcdURL, "--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(apiPort),
		"--cert-dir", filepath.Join(dir, "certs"), "--token-auth-file", tokens, "--authorization-mode", "RBAC",
		"--service-account-key-file", keyFile, "--service-account-signing-key-file", keyFile,
		"--service-account-issuer", "https://ballast.test", "--service-cluster-ip-range", "10.96.0.0/24",
		"--disable-admission-plugins", "ServiceAccount")

	cfg := &rest.Config{Host: fmt.Sprintf("https://127.0.0.1:%d", apiPort), BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The provider reaches this server through its own API (kube.NewAPI).
	realConfigs[client] = cfg
	t.Cleanup(func() { delete(realConfigs, client) })
	testenv.Eventually(t, 90*time.Second, "kube-apiserver ready", func() bool {
		_, err := client.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{})
		return err == nil
	})
	return client
}

// run starts a server for the test's lifetime, its output in dir.
func run(t *testing.T, dir, name, bin string, args ...string) {
	t.Helper()
	out, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = out.Close()
		if t.Failed() {
			if b, err := os.ReadFile(out.Name()); err == nil {
				t.Logf("%s log (end):\n%s", name, tail(string(b), 3000))
			}
		}
	})
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:][strings.Index(s[len(s)-n:], "\n")+1:]
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
