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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/anthdm/hollywood/actor"
	hremote "github.com/anthdm/hollywood/remote"
)

// maxMessageBytes is the largest batch a process reads (drpc's reader
// limit, 4 MB by default in Hollywood v1.0.5). One step's deliveries to one
// process cross as one message; a checkpoint's state or a long fetch can be
// large.
const maxMessageBytes = 256 << 20

// maxBatchBytes is the largest StepBatch sent: what drpc would refuse to
// read (the batch and its envelope) fails the step with a clear error
// instead of dropping the stream.
const maxBatchBytes = maxMessageBytes - 1<<20

// probeTimeout bounds a probe dial and its TLS handshake.
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

// advertised is Hollywood's remote listening on one address and naming
// itself by another (a bind host such as 0.0.0.0 is not an address peers can
// dial).
type advertised struct {
	*hremote.Remote
	addr string
}

func (a advertised) Address() string { return a.addr }

// newEngine starts a Hollywood engine with the remote transport on ep. A
// port 0 in ep is replaced by a free one first.
func newEngine(ep Endpoint, tlsConf *tls.Config) (*actor.Engine, Endpoint, error) {
	host, port, err := SplitAddress("listen address", ep.Advertise)
	if err != nil {
		return nil, ep, err
	}
	if port == 0 {
		bh := host
		if ep.BindHost != "" {
			bh = ep.BindHost
		}
		l, err := net.Listen("tcp", net.JoinHostPort(bh, "0"))
		if err != nil {
			return nil, ep, fmt.Errorf("cannot listen on %s: %w", bh, err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		if err := l.Close(); err != nil {
			return nil, ep, fmt.Errorf("cannot free port %d on %s: %w", port, bh, err)
		}
		ep.Advertise = net.JoinHostPort(host, strconv.Itoa(port))
	}
	conf := hremote.NewConfig().WithBufferSize(maxMessageBytes)
	if tlsConf != nil {
		conf = conf.WithTLS(tlsConf)
	}
	r := hremote.New(ep.bind(), conf)
	var rem actor.Remoter = r
	if ep.BindHost != "" {
		rem = advertised{Remote: r, addr: ep.Advertise}
	}
	e, err := actor.NewEngine(actor.NewEngineConfig().WithRemote(rem))
	if err != nil {
		return nil, ep, fmt.Errorf("cannot listen on %s: %w", ep.bind(), errors.Unwrap(err))
	}
	return e, ep, nil
}

// senderEngine is an engine that only sends, to one peer: Hollywood v1.0.5
// dials inside the engine's shared stream router, synchronously and with
// retries, so a peer that is dead or cut off would stall every remote send
// of the engine. Each peer gets its own engine, and a stall stays with the
// peer that caused it. Its listener (on host, a free port) is never used.
func senderEngine(host string, tlsConf *tls.Config) (*actor.Engine, error) {
	e, _, err := newEngine(Endpoint{Advertise: net.JoinHostPort(host, "0")}, tlsConf)
	return e, err
}

// probe dials addr once, with a timeout, as Hollywood will (TLS when
// tlsConf is set), so that a wrong address, a refused connection or a
// refused certificate is a clear error before any Hollywood send can stall.
// It returns the local address of the connection (the interface that
// reaches addr).
func probe(addr string, tlsConf *tls.Config) (net.Addr, error) {
	d := net.Dialer{Timeout: probeTimeout}
	if tlsConf == nil {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			return nil, dialError(err)
		}
		defer func() { _ = c.Close() }() // a probe: it has done its work
		return c.LocalAddr(), nil
	}
	c, err := tls.DialWithDialer(&d, "tcp", addr, tlsConf)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Op == "dial" {
			return nil, dialError(err)
		}
		return nil, fmt.Errorf("TLS handshake failed: %w", err)
	}
	defer func() { _ = c.Close() }() // a probe: it has done its work
	// TLS 1.3: the server checks our certificate after the client's half of
	// the handshake; a refusal arrives as an alert on the first read. A
	// timeout means it was accepted (the server waits for us to speak).
	if err := c.SetReadDeadline(time.Now().Add(300 * time.Millisecond)); err != nil {
		return nil, fmt.Errorf("TLS probe: %w", err)
	}
	var b [1]byte
	if _, err := c.Read(b[:]); err != nil {
		var ne net.Error
		if !(errors.As(err, &ne) && ne.Timeout()) {
			return nil, fmt.Errorf("TLS: the peer refused this process's certificate: %w", err)
		}
	}
	return c.LocalAddr(), nil
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

// LoadTLS reads the PEM files of --tls-cert, --tls-key and --tls-ca into
// one configuration for Hollywood's remote (WithTLS), used both to listen
// and to dial: every process shows its certificate and accepts only peers
// whose certificate the CA signed (mutual TLS). Certificates must name the
// host each process is reached at (DNS or IP SAN). A refused peer is
// reported on stderr with its address.
func LoadTLS(certFile, keyFile, caFile string, stderr io.Writer, who string) (*tls.Config, error) {
	if certFile == "" || keyFile == "" || caFile == "" {
		return nil, fmt.Errorf("TLS needs all of --tls-cert, --tls-key and --tls-ca")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
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
			err := verifyClient(cs, pool)
			if err != nil {
				fmt.Fprintf(stderr, "%s: refused a TLS connection from %s: %v\n", who, peer, err)
			}
			return err
		}
		return c, nil
	}
	return conf, nil
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
	return nil
}

// transportLog is the slog handler both processes install: Hollywood's
// remote package reports through slog. Errors are shown on stderr,
// prefixed; a message that did not decode (a peer with other message types:
// the stream is dropped with what follows) is also passed to undecodable.
type transportLog struct {
	mu          *sync.Mutex
	w           io.Writer
	who         string
	undecodable func(error string)
	attrs       []slog.Attr
}

// installLog makes h the default slog handler (Hollywood logs through
// slog.Default).
func installLog(w io.Writer, who string, undecodable func(string)) {
	slog.SetDefault(slog.New(&transportLog{mu: &sync.Mutex{}, w: w, who: who, undecodable: undecodable}))
}

func (h *transportLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }

func (h *transportLog) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	errText := ""
	add := func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		if a.Key == "err" {
			errText = a.Value.String()
		}
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	if r.Message == "streamReader deserialize" && h.undecodable != nil {
		h.undecodable(errText)
	}
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
