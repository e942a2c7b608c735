package remote_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flinksim/flinksim/cluster/remote"
)

// testCA is a certificate authority for the tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	dir  string
	name string
}

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &testCA{cert: cert, key: key, dir: t.TempDir(), name: name}
	writePEM(t, ca.path("ca.pem"), "CERTIFICATE", der)
	return ca
}

func (ca *testCA) path(f string) string { return filepath.Join(ca.dir, f) }

// issue writes NAME.pem and NAME.key, a certificate for ips signed by ca
// naming role (a URI SAN flinksim://role/ROLE; "": none), for servers and
// clients alike; it returns the --tls-* flags.
func (ca *testCA) issue(t *testing.T, name, role string, ips ...string) []string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	for _, ip := range ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	if role != "" {
		u, _ := url.Parse(remote.RoleURI(role))
		tmpl.URIs = []*url.URL{u}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, ca.path(name+".pem"), "CERTIFICATE", der)
	writePEM(t, ca.path(name+".key"), "EC PRIVATE KEY", kder)
	return []string{"--tls-cert", ca.path(name + ".pem"), "--tls-key", ca.path(name + ".key"), "--tls-ca", ca.path("ca.pem")}
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// With TLS on, the default job over three processes writes flinksim run's
// log and output.
func TestTLSDefaultJobThreeProcesses(t *testing.T) {
	ca := newCA(t, "flinksim test CA")
	jm := ca.issue(t, "jobmanager", remote.RoleJobManager, "127.0.0.1")
	tm := ca.issue(t, "taskmanager", remote.RoleTaskManager, "127.0.0.1")
	_, c := sameAsOneProcess(t, spec{tms: 2, args: jm, tmArgs: tm})
	if strings.Contains(c.jm.stderr.String(), "without TLS") {
		t.Errorf("TLS was not on:\n%s", c.jm.stderr)
	}
}

// A taskmanager that does not know the CA, or whose certificate the CA did
// not sign, or that speaks no TLS, is refused; the jobmanager says so when
// it is the one refusing, and keeps waiting.
func TestTLSRefusesTaskManagerWithoutCA(t *testing.T) {
	ca := newCA(t, "flinksim test CA")
	other := newCA(t, "another CA")
	c := startCluster(t, repo, spec{args: append(ca.issue(t, "jobmanager", remote.RoleJobManager, "127.0.0.1"), "--duration", "10s")})
	tm := func(name string, args ...string) (string, int) {
		p := start(t, name, repo, "", append([]string{bin, "taskmanager", "--join", c.addr, "--taskmanager.registration.timeout", "5s"}, args...)...)
		code := p.wait(t, 30*time.Second)
		t.Logf("%s: exit %d: %s", name, code, lastLine(p.stderr.String()))
		return p.stderr.String(), code
	}
	// its own CA only: it cannot trust the jobmanager
	stderr, code := tm("taskmanager with another CA", other.issue(t, "rogue", remote.RoleTaskManager, "127.0.0.1")...)
	if code != 5 || !strings.Contains(stderr, "TLS handshake failed") || !strings.Contains(stderr, "unknown authority") {
		t.Errorf("a taskmanager with another CA: exit %d:\n%s", code, stderr)
	}
	// it trusts the jobmanager, but its certificate is not the CA's
	rogue := other.issue(t, "rogue2", remote.RoleTaskManager, "127.0.0.1")
	rogue[5] = ca.path("ca.pem")
	stderr, code = tm("taskmanager with a certificate of another CA", rogue...)
	if code != 5 || !strings.Contains(stderr, "refused this process's certificate") {
		t.Errorf("a taskmanager with a certificate of another CA: exit %d:\n%s", code, stderr)
	}
	c.jm.waitFor(t, "TLS handshake failed", 10*time.Second)
	if !strings.Contains(c.jm.stderr.String(), "refused the certificate of 127.0.0.1:") || !strings.Contains(c.jm.stderr.String(), "not signed by the CA") {
		t.Errorf("the jobmanager does not say whom it refused and why:\n%s", c.jm.stderr)
	}
	// a flood of refused handshakes is said at most 10 times per host in
	// all (the drop's cap), then counted
	cert, err := tls.LoadX509KeyPair(rogue[1], rogue[3])
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 15; i++ {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", c.addr,
			&tls.Config{Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true}) // the test is the server's refusal
		if err == nil {
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err = conn.Read(make([]byte, 1)) // TLS 1.3: the refusal comes after the client's Finished
			conn.Close()
		}
		if err == nil {
			t.Fatalf("handshake %d with a certificate of another CA was not refused", i)
		}
	}
	c.jm.waitFor(t, "further drops from 127.0.0.1 are counted, not shown", 10*time.Second)
	if n := strings.Count(c.jm.stderr.String(), "TLS handshake failed"); n > 10 {
		t.Errorf("%d refused handshakes said on stderr, want at most 10:\n%s", n, c.jm.stderr)
	}
	// no TLS at all
	stderr, code = tm("taskmanager without TLS")
	if code != 5 || !strings.Contains(stderr, "give this process --tls-cert") {
		t.Errorf("a taskmanager without TLS: exit %d:\n%s", code, stderr)
	}
	if strings.Contains(c.jm.stderr.String(), "joined:") {
		t.Errorf("a refused taskmanager joined:\n%s", c.jm.stderr)
	}
	t.Logf("jobmanager:\n%s", c.jm.stderr)
	c.jm.signal(syscall.SIGINT)
	if code := c.jm.wait(t, 30*time.Second); code != 5 {
		t.Errorf("the interrupted jobmanager exited %d:\n%s", code, c.jm.stderr)
	}
}

// A certificate the CA signed but with the wrong role (or none) does not
// make a taskmanager, nor a jobmanager: the jobmanager refuses a client
// showing a jobmanager's certificate or one without a role, naming the role
// it wants; a taskmanager refuses a "jobmanager" whose certificate names
// the taskmanager role; and each command refuses to start with a
// certificate that does not name its own role.
func TestTLSWrongRole(t *testing.T) {
	ca := newCA(t, "flinksim test CA")
	jmFlags := ca.issue(t, "jobmanager", remote.RoleJobManager, "127.0.0.1")
	c := startCluster(t, repo, spec{args: append(jmFlags, "--duration", "10s")})
	// clients written here, with the CA's certificates of the wrong role
	for _, role := range []string{remote.RoleJobManager, ""} {
		name := "client-" + role
		ca.issue(t, name, role, "127.0.0.1")
		cert, err := tls.LoadX509KeyPair(ca.path(name+".pem"), ca.path(name+".key"))
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AddCert(ca.cert)
		conn, err := tls.Dial("tcp", c.addr, &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, ServerName: "127.0.0.1"})
		if err == nil {
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err = readFrame(conn)
			conn.Close()
		}
		if err == nil {
			t.Errorf("a client with a certificate of role %q got a Challenge", role)
		}
	}
	c.jm.waitFor(t, "does not name the role of a taskmanager (a URI SAN flinksim://role/taskmanager; it names role jobmanager)", 10*time.Second)
	c.jm.waitFor(t, "it names no role)", 10*time.Second)
	if strings.Contains(c.jm.stderr.String(), "joined:") {
		t.Errorf("a client of the wrong role joined:\n%s", c.jm.stderr)
	}
	c.jm.signal(syscall.SIGINT)
	c.jm.wait(t, 30*time.Second)

	// a "jobmanager" showing a taskmanager's certificate
	tmFlags := ca.issue(t, "taskmanager", remote.RoleTaskManager, "127.0.0.1")
	cert, err := tls.LoadX509KeyPair(ca.path("taskmanager.pem"), ca.path("taskmanager.key"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() { conn.Read(make([]byte, 1)); conn.Close() }()
		}
	}()
	expect(t, 30*time.Second, 5, []string{"does not name the role of a jobmanager", "it names role taskmanager"},
		append([]string{"taskmanager", "--join", l.Addr().String()}, tmFlags...)...)

	// each command refuses a certificate of the other role at once
	expect(t, 10*time.Second, 2, []string{"does not name the role of a taskmanager"},
		append([]string{"taskmanager", "--join", "127.0.0.1:6123"}, jmFlags...)...)
	expect(t, 10*time.Second, 2, []string{"does not name the role of a jobmanager"},
		append([]string{"jobmanager", "--listen", "127.0.0.1:0"}, tmFlags...)...)
}
