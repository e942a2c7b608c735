package main

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/flinksim/flinksim/cluster/remote"
)

type taskManagerFlags struct {
	join       string
	rpcAddress string
	rpcPort    int
	listen     string
	host       string
	port       int
	bindHost   string
	resourceID string
	regTimeout time.Duration
	tls        tlsFlags
	cpuProfile string
}

func init() {
	var f taskManagerFlags
	cmd := &cobra.Command{
		Use:   "taskmanager --join HOST:PORT [--listen HOST:PORT]",
		Short: "Host TaskManagers for a flinksim jobmanager process",
		Long: `Join the flinksim jobmanager at --join, take the run's settings from it, and host
the TaskManagers it starts here (tm-1, tm-2, ... in join order) with their subtasks
and input channels until the run is over. Start one per TaskManager (sim.taskmanagers),
on any host the jobmanager can reach, and more as spares for replacement TaskManagers.

Without --listen or --taskmanager.host the process is reached at the local address of
its connection to the jobmanager (as Flink's TaskManager finds its address), on a free
port.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return taskManagerMain(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.join, "join", "127.0.0.1:6123", "the jobmanager's address: jobmanager.rpc.address:jobmanager.rpc.port")
	fl.StringVar(&f.rpcAddress, "jobmanager.rpc.address", "", "the host part of --join (Flink's option)")
	fl.IntVar(&f.rpcPort, "jobmanager.rpc.port", 6123, "the port part of --join (Flink's option)")
	fl.StringVar(&f.listen, "listen", "", "where the jobmanager reaches this process: taskmanager.host:taskmanager.rpc.port (port 0: a free one)")
	fl.StringVar(&f.host, "taskmanager.host", "", "the host part of --listen (Flink's option); default: the local address towards the jobmanager")
	fl.IntVar(&f.port, "taskmanager.rpc.port", 0, "the port part of --listen (Flink's option; 0: a free port)")
	fl.StringVar(&f.bindHost, "taskmanager.bind-host", "", "listen on this interface (e.g. 0.0.0.0) and still be named by --listen (Flink's option)")
	fl.StringVar(&f.resourceID, "taskmanager.resource-id", "", "this process's name, unique in the run (Flink's option; default: its address)")
	fl.DurationVar(&f.regTimeout, "taskmanager.registration.timeout", 30*time.Second, "wall time to wait for the jobmanager's answer (Flink's option)")
	f.tls.register(fl)
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of this process to the file")
	fl.Lookup("cpuprofile").Hidden = true
	rootCmd.AddCommand(cmd)
}

func taskManagerMain(cmd *cobra.Command, f taskManagerFlags) error {
	join, err := address(cmd, "join", f.join, "jobmanager.rpc.address", f.rpcAddress, "jobmanager.rpc.port", f.rpcPort)
	if err != nil {
		return err
	}
	what := "--join " + join
	if cmd.Flags().Changed("jobmanager.rpc.port") {
		what = fmt.Sprintf("--jobmanager.rpc.port %d", f.rpcPort)
	}
	if err := dialable(what, join); err != nil {
		return err
	}
	host, port := f.host, f.port
	if f.listen != "" {
		h, p, err := remote.SplitAddress("--listen", f.listen)
		if err != nil {
			return badInput("%v", err)
		}
		if !cmd.Flags().Changed("taskmanager.host") {
			host = h
		}
		if !cmd.Flags().Changed("taskmanager.rpc.port") {
			port = p
		}
	}
	if port < 0 || port > 65535 {
		return badInput("--taskmanager.rpc.port %d: must be from 0 to 65535", port)
	}
	if host != "" {
		if _, _, err := remote.SplitAddress("--taskmanager.host", net.JoinHostPort(host, strconv.Itoa(port))); err != nil {
			return badInput("%v", err)
		}
	}
	if err := positive("taskmanager.registration.timeout", f.regTimeout); err != nil {
		return err
	}
	tlsConf, err := f.tls.load("taskmanager")
	if err != nil {
		return err
	}
	oneP()
	defer profile(f.cpuProfile)()
	stop := catchSignals()
	defer stop.release()
	return remoteFailure(remote.RunTaskManager(remote.TaskManagerConfig{Join: join, Host: host, Port: port, BindHost: f.bindHost,
		ResourceID: f.resourceID, TLS: tlsConf, RegistrationTimeout: f.regTimeout, Interrupt: stop.c, Stderr: cmd.ErrOrStderr()}))
}
