package remote

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// maxMessageBytes is the largest frame a process reads. One step's
// deliveries to one process cross as one message; a checkpoint's state or a
// long fetch can be large.
const maxMessageBytes = 256 << 20

// maxBatchBytes is the largest StepBatch sent: what the peer would refuse
// to read (the batch and its frame) fails the step with a clear error
// instead of dropping the stream.
const maxBatchBytes = maxMessageBytes - 1<<20

// probeTimeout bounds a dial and its TLS handshake.
const probeTimeout = 5 * time.Second

// Endpoint is where a process listens and how others reach it.
type Endpoint struct {
	// Advertise is the host:port the other processes dial: the address in
	// this process's PIDs (jobmanager.rpc.address:jobmanager.rpc.port,
	// taskmanager.host:taskmanager.rpc.port).
	Advertise string
	// BindHost, when set, is the interface to listen on instead of
	// Advertise's host (jobmanager.bind-host, taskmanager.bind-host), e.g.
	// 0.0.0.0; the port is Advertise's.
	BindHost string
}

func (e Endpoint) bind() string {
	if e.BindHost == "" {
		return e.Advertise
	}
	_, port, _ := net.SplitHostPort(e.Advertise)
	return net.JoinHostPort(e.BindHost, port)
}

// SplitAddress checks a host:port and returns both parts; what names the
// flag in errors.
func SplitAddress(what, addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("%s %q: want HOST:PORT (%v)", what, addr, err)
	}
	if host == "" {
		return "", 0, fmt.Errorf("%s %q: want HOST:PORT with a host (use the bind-host option to listen on every interface)", what, addr)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%s %q: the port must be a number from 0 to 65535", what, addr)
	}
	return host, port, nil
}

// dial connects to addr once, with a timeout, from local when it is set
// (taskmanager.host / taskmanager.rpc.port, or the bind host), with TLS
// when tlsConf is set. A refused certificate is a clear error here.
func dial(addr string, local *net.TCPAddr, tlsConf *tls.Config) (net.Conn, error) {
	d := net.Dialer{Timeout: probeTimeout}
	if local != nil {
		d.LocalAddr = local
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, dialError(err)
	}
	if tlsConf == nil {
		return c, nil
	}
	conf := tlsConf.Clone()
	if conf.ServerName == "" {
		conf.ServerName, _, _ = net.SplitHostPort(addr)
	}
	tc := tls.Client(c, conf)
	if err := tc.SetDeadline(time.Now().Add(probeTimeout)); err != nil {
		_ = c.Close() // failed, and said so
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	if err := tc.Handshake(); err != nil {
		_ = c.Close() // failed, and said so
		return nil, fmt.Errorf("TLS handshake failed: %w", err)
	}
	if err := tc.SetDeadline(time.Time{}); err != nil {
		_ = tc.Close() // failed, and said so
		return nil, fmt.Errorf("TLS: %w", err)
	}
	return tc, nil
}

// errRefused is a refused connection: nothing listens at the address.
var errRefused = errors.New("connection refused: nothing listens there")

func dialError(err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return errRefused
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("no answer within %s (a wrong address, or the network is cut)", probeTimeout)
	}
	return err
}

// Roles a process plays, named in its certificate as a URI SAN
// flinksim://role/ROLE (RoleURI).
const (
	RoleJobManager  = "jobmanager"
	RoleTaskManager = "taskmanager"
)

// RoleURI is the URI SAN that gives a certificate its role.
func RoleURI(role string) string { return "flinksim://role/" + role }

// LoadTLS reads the PEM files of --tls-cert, --tls-key and --tls-ca into
// the configuration of a process of role (RoleJobManager listens,
// RoleTaskManager dials): every process shows its certificate and accepts
// only a peer whose certificate the CA signed and names the other role
// (mutual TLS; a CA-signed certificate of a taskmanager does not make a
// jobmanager, nor one without a role a taskmanager). This process's own
// certificate must name its role. A taskmanager checks that the
// jobmanager's certificate names the host it dials (DNS or IP SAN). A
// refused peer's error names its address (the jobmanager's drop says it on
// stderr, at most maxDropsShown times per host).
func LoadTLS(certFile, keyFile, caFile string, role string) (*tls.Config, error) {
	if certFile == "" || keyFile == "" || caFile == "" {
		return nil, fmt.Errorf("TLS needs all of --tls-cert, --tls-key and --tls-ca")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s: %w", certFile, err)
	}
	if r := roles(leaf); !slices.Contains(r, role) {
		return nil, fmt.Errorf("--tls-cert %s: the certificate does not name the role of a %s (a URI SAN %s; it names %s)", certFile, role, RoleURI(role), rolesText(r))
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--tls-ca %s: no PEM certificate in it", caFile)
	}
	base := &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}
	if role == RoleTaskManager {
		c := base.Clone()
		c.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 || !slices.Contains(roles(cs.PeerCertificates[0]), RoleJobManager) {
				r := []string(nil)
				if len(cs.PeerCertificates) > 0 {
					r = roles(cs.PeerCertificates[0])
				}
				return fmt.Errorf("the peer's certificate does not name the role of a jobmanager (%s; it names %s)", RoleURI(RoleJobManager), rolesText(r))
			}
			return nil
		}
		return c, nil
	}
	conf := base.Clone()
	// The server side checks the client's certificate itself, so that a
	// refusal can name the peer (a failed built-in check is silent).
	conf.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		peer := "?"
		if hello.Conn != nil {
			peer = hello.Conn.RemoteAddr().String()
		}
		c := base.Clone()
		c.ClientAuth = tls.RequestClientCert
		c.VerifyConnection = func(cs tls.ConnectionState) error {
			// said on stderr by the jobmanager's drop, capped per host
			if err := verifyClient(cs, pool); err != nil {
				return fmt.Errorf("refused the certificate of %s: %w", peer, err)
			}
			return nil
		}
		return c, nil
	}
	return conf, nil
}

// roles are the roles a certificate names (its flinksim://role/ URIs).
func roles(c *x509.Certificate) []string {
	var r []string
	for _, u := range c.URIs {
		if u.Scheme == "flinksim" && u.Host == "role" {
			r = append(r, strings.TrimPrefix(u.Path, "/"))
		}
	}
	return r
}

func rolesText(r []string) string {
	if len(r) == 0 {
		return "no role"
	}
	return "role " + strings.Join(r, ", ")
}

func verifyClient(cs tls.ConnectionState, pool *x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return fmt.Errorf("it showed no certificate (give it --tls-cert and --tls-key)")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	if err != nil {
		return fmt.Errorf("its certificate is not signed by the CA of --tls-ca: %w", err)
	}
	if r := roles(cs.PeerCertificates[0]); !slices.Contains(r, RoleTaskManager) {
		return fmt.Errorf("its certificate does not name the role of a taskmanager (a URI SAN %s; it names %s)", RoleURI(RoleTaskManager), rolesText(r))
	}
	return nil
}

// transportLog is the slog handler both processes install: Hollywood
// reports through slog. Errors are shown on stderr, prefixed.
type transportLog struct {
	mu    *sync.Mutex
	w     io.Writer
	who   string
	attrs []slog.Attr
}

// installLog makes h the default slog handler (Hollywood logs through
// slog.Default).
func installLog(w io.Writer, who string) {
	slog.SetDefault(slog.New(&transportLog{mu: &sync.Mutex{}, w: w, who: who}))
}

func (h *transportLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }

func (h *transportLog) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	add := func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(h.w, "%s: (hollywood) %s\n", h.who, b.String())
	return nil
}

func (h *transportLog) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr{}, h.attrs...), as...)
	return &c
}

func (h *transportLog) WithGroup(string) slog.Handler { return h }
