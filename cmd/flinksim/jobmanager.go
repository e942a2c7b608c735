package main

import (
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinksim/flinksim/cluster"
	"github.com/flinksim/flinksim/cluster/remote"
	"github.com/flinksim/flinksim/sim/config"
)

type jobManagerFlags struct {
	run         runFlags
	listen      string
	rpcAddress  string
	rpcPort     int
	bindHost    string
	joinTimeout time.Duration
	spares      int
	wdInterval  time.Duration
	wdTimeout   time.Duration
	tls         tlsFlags
	tokenFile   string
	cpuProfile  string
}

func init() {
	var f jobManagerFlags
	cmd := &cobra.Command{
		Use:   "jobmanager --listen HOST:PORT [run flags]",
		Short: "Run the job with its TaskManagers in taskmanager processes",
		Long: `Run the job as 'flinksim run' does, with the TaskManagers (their subtasks and
input channels) in other processes, on this host or others: this process holds the
scheduler, the JobManager, the ResourceManager and the Kafka broker, waits until
sim.taskmanagers processes started with 'flinksim taskmanager --join HOST:PORT' have
joined, then prints the same log as 'flinksim run' and writes the same --output.

A process that dies or is cut off is a TaskManager loss: it is logged as the action
'kill-taskmanager tm-N' at the virtual time it is noticed, so that 'flinksim replay'
of the log reproduces the run in one process. A replacement TaskManager starts in a
spare process (--spare-taskmanagers) or else in this one.

A process joins with mutual TLS (--tls-cert, --tls-key, --tls-ca; its certificate
names the role flinksim://role/taskmanager), or by proving the join token
(--join-token-file), or, with neither, from loopback only; it must run the same build
(the fingerprint of the log header's build field). What anything else sends is dropped
and counted on stderr, never in the log.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return jobManagerMain(cmd, f) },
	}
	fl := cmd.Flags()
	f.run.register(fl)
	fl.StringVar(&f.listen, "listen", "127.0.0.1:6123", "where the taskmanager processes join: jobmanager.rpc.address:jobmanager.rpc.port (loopback unless given)")
	fl.StringVar(&f.rpcAddress, "jobmanager.rpc.address", "", "the host part of --listen (Flink's option)")
	fl.IntVar(&f.rpcPort, "jobmanager.rpc.port", 6123, "the port part of --listen (Flink's option)")
	fl.StringVar(&f.bindHost, "jobmanager.bind-host", "", "listen on this interface (e.g. 0.0.0.0) and still be named by --listen (Flink's option)")
	fl.DurationVar(&f.joinTimeout, "join-timeout", 2*time.Minute, "wall time to wait for sim.taskmanagers processes to join")
	fl.IntVar(&f.spares, "spare-taskmanagers", 0, "more processes accepted beyond sim.taskmanagers, to host replacement TaskManagers")
	fl.DurationVar(&f.wdInterval, "watchdog-interval", 200*time.Millisecond, "wall time between two heartbeats to each process")
	fl.DurationVar(&f.wdTimeout, "watchdog-timeout", 5*time.Second, "a process silent this long is lost (and the processes give the jobmanager up after as long)")
	f.tls.register(fl)
	fl.StringVar(&f.tokenFile, "join-token-file", "", "a file holding the secret every taskmanager process must prove it knows to join (without it and without TLS only loopback peers may join)")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of this process to the file")
	fl.Lookup("cpuprofile").Hidden = true
	rootCmd.AddCommand(cmd)
}

func jobManagerMain(cmd *cobra.Command, f jobManagerFlags) error {
	if f.run.determinism {
		return badInput("--check-determinism runs twice in one process: use flinksim run")
	}
	listen, err := address(cmd, "listen", f.listen, "jobmanager.rpc.address", f.rpcAddress, "jobmanager.rpc.port", f.rpcPort)
	if err != nil {
		return err
	}
	if f.spares < 0 {
		return badInput("--spare-taskmanagers %d: must be 0 or more", f.spares)
	}
	for name, d := range map[string]time.Duration{"join-timeout": f.joinTimeout, "watchdog-interval": f.wdInterval, "watchdog-timeout": f.wdTimeout} {
		if err := positive(name, d); err != nil {
			return err
		}
	}
	if f.wdTimeout < 2*f.wdInterval {
		return badInput("--watchdog-timeout %s must be at least twice --watchdog-interval %s", f.wdTimeout, f.wdInterval)
	}
	tlsConf, err := f.tls.load(remote.RoleJobManager)
	if err != nil {
		return err
	}
	token, err := joinToken(f.tokenFile)
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	if !loopback(listen, f.bindHost) {
		switch {
		case tlsConf == nil && token == nil:
			fmt.Fprintf(stderr, "jobmanager: warning: listening on %s without TLS or a join token: only taskmanager processes on loopback may join (--tls-cert, --tls-key, --tls-ca, or --join-token-file)\n", listen)
		case tlsConf == nil:
			fmt.Fprintf(stderr, "jobmanager: warning: listening on %s without TLS: joins prove the token, but the run's traffic is not encrypted (--tls-cert, --tls-key, --tls-ca)\n", listen)
		}
	}
	oneP()
	defer profile(f.cpuProfile)()
	var jm *remote.JobManager
	run := func(cfg config.Config, opt cluster.Options) (*cluster.Result, error) {
		jm, err = remote.StartJobManager(remote.JobManagerConfig{Endpoint: remote.Endpoint{Advertise: listen, BindHost: f.bindHost},
			TLS: tlsConf, JoinToken: token, TaskManagers: cfg.TaskManagers, Spares: f.spares, Header: cluster.HeaderLine(cfg, opt),
			WatchdogInterval: f.wdInterval, WatchdogTimeout: f.wdTimeout, Stderr: stderr})
		if err != nil {
			return nil, exitError{exitRemote, err}
		}
		// opt.Interrupt is run's signal catcher: SIGINT or SIGTERM while
		// waiting gives up (exit 5), during the run cuts it as run does
		if err := jm.WaitForTaskManagers(f.joinTimeout, opt.Interrupt); err != nil {
			return nil, exitError{exitRemote, err}
		}
		return jm.Run(cfg, opt)
	}
	err = runJob(cmd, f.run, run)
	if jm != nil {
		if probs := jm.Problems(); len(probs) > 0 {
			return exitError{exitRemote, fmt.Errorf("the run finished, but the transport failed: %s", strings.Join(probs, "; "))}
		}
	}
	return err
}

// loopback reports whether addr (or bindHost when set) is a loopback host.
func loopback(addr, bindHost string) bool {
	h := bindHost
	if h == "" {
		h, _, _ = strings.Cut(addr, ":")
		if strings.HasPrefix(addr, "[") {
			h = strings.TrimPrefix(strings.Split(addr, "]")[0], "[")
		}
	}
	ip := net.ParseIP(h)
	return h == "localhost" || ip != nil && ip.IsLoopback()
}
