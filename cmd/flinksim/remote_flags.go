package main

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/cluster/remote"
)

// exitRemote: a remote process failed, refused or was lost (the jobmanager
// and taskmanager commands).
const exitRemote = remote.ExitRemote

// tlsFlags are --tls-cert, --tls-key and --tls-ca, shared by the jobmanager
// and taskmanager commands.
type tlsFlags struct{ cert, key, ca string }

func (t *tlsFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&t.cert, "tls-cert", "", "PEM certificate of this process (with --tls-key and --tls-ca: mutual TLS between the processes)")
	fl.StringVar(&t.key, "tls-key", "", "PEM private key of --tls-cert")
	fl.StringVar(&t.ca, "tls-ca", "", "PEM certificate of the CA that signed every process's certificate")
}

// load reads the TLS flags: all three, or none (nil: plain TCP). role is
// the process's (remote.RoleJobManager or remote.RoleTaskManager), which
// its certificate must name.
func (t tlsFlags) load(role string) (*tls.Config, error) {
	if t.cert == "" && t.key == "" && t.ca == "" {
		return nil, nil
	}
	c, err := remote.LoadTLS(t.cert, t.key, t.ca, role)
	if err != nil {
		return nil, badInput("%v", err)
	}
	return c, nil
}

// joinToken reads --join-token-file ("": none): the secret shared by the
// jobmanager and its taskmanager processes, surrounding white space
// trimmed. It must hold at least 16 bytes.
func joinToken(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, badInput("--join-token-file: %v", err)
	}
	b = bytes.TrimSpace(b)
	if len(b) < 16 {
		return nil, badInput("--join-token-file %s: the token has %d bytes, want at least 16 (e.g. head -c 32 /dev/urandom | base64 > %s)", path, len(b), path)
	}
	return b, nil
}

// address is a host:port flag with Flink's two options beside it: when
// hostFlag or portFlag is given it replaces that part.
func address(cmd *cobra.Command, what, addr, hostFlag, host, portFlag string, port int) (string, error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", badInput("--%s %q: want HOST:PORT", what, addr)
	}
	if cmd.Flags().Changed(hostFlag) {
		h = host
	}
	if cmd.Flags().Changed(portFlag) {
		p = strconv.Itoa(port)
	}
	out := net.JoinHostPort(h, p)
	if _, _, err := remote.SplitAddress("--"+what, out); err != nil {
		return "", badInput("%v", err)
	}
	return out, nil
}

// dialable refuses addr, an address to connect to, when its port is 0; what
// names the flag and value as the user gave them. Port 0 asks
// the operating system for a free port when listening, and names no port
// to connect to, so the jobmanager cannot be there (it listens on
// jobmanager.rpc.port, 6123 by default). Without this, --join HOST:0 would
// be retried until the registration timeout as if the jobmanager were not
// up yet.
func dialable(what, addr string) error {
	if h, p, err := net.SplitHostPort(addr); err == nil && p == "0" {
		return badInput("%s: port 0 names no port to connect to (it means \"any free port\" only when listening); give the port the jobmanager listens on (jobmanager.rpc.port, 6123 by default), e.g. --join %s",
			what, net.JoinHostPort(h, "6123"))
	}
	return nil
}

// positive refuses a zero or negative duration flag.
func positive(name string, d time.Duration) error {
	if d <= 0 {
		return badInput("--%s %s: must be positive", name, d)
	}
	return nil
}

// oneP runs the process on one P unless GOMAXPROCS is set: a step goes
// from goroutine to goroutine (the scheduler, a stream writer, a reader, a
// node), one at a time, and on one P every hand-off is a switch on the same
// thread instead of the wake-up of another and its spinning (measured on
// loopback: about 20% less CPU and wall time per step; README.md, "Speed").
func oneP() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// adapt sets cluster.Options.AdaptProcs and AdaptGC for a command that
// runs one simulation at a time: the scheduler picks one P for narrow steps
// and every P for wide ones, unless the user set GOMAXPROCS (a jobmanager
// process is on one P already: there it changes nothing), and a GC percent
// of 200 while the live heap is small, unless the user set GOGC.
func adapt(opt *cluster.Options) {
	opt.AdaptProcs = os.Getenv("GOMAXPROCS") == ""
	opt.AdaptGC = os.Getenv("GOGC") == ""
}

// profile starts a CPU profile into path ("": none) and returns its stop;
// a profile that cannot be written is said on stderr and the run goes on.
func profile(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			_ = f.Close() // nothing written
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "warning: --cpuprofile: %v\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "warning: --cpuprofile: %v\n", err)
		}
	}
}

// remoteFailure gives a transport error its exit code: 2 for bad flags or
// addresses, 5 otherwise.
func remoteFailure(err error) error {
	if err == nil {
		return nil
	}
	var re *remote.Error
	if errors.As(err, &re) && re.Code == remote.ExitUsage {
		return usageError{err}
	}
	if errors.As(err, new(exitError)) || errors.As(err, new(usageError)) {
		return err
	}
	return exitError{exitRemote, err}
}
