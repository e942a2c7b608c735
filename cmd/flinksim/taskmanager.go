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
	tokenFile  string
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

The process listens nowhere: it opens one connection to the jobmanager, which
talks to it on that connection only. Without --listen or --taskmanager.host the
connection leaves from the interface that reaches the jobmanager (as Flink's
TaskManager finds its address), on a free port. It joins with mutual TLS (its
certificate names the role flinksim://role/taskmanager), or with the jobmanager's
join token (--join-token-file), or, with neither, over loopback only.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return taskManagerMain(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.join, "join", "127.0.0.1:6123", "the jobmanager's address: jobmanager.rpc.address:jobmanager.rpc.port")
	fl.StringVar(&f.rpcAddress, "jobmanager.rpc.address", "", "the host part of --join (Flink's option)")
	fl.IntVar(&f.rpcPort, "jobmanager.rpc.port", 6123, "the port part of --join (Flink's option)")
	fl.StringVar(&f.listen, "listen", "", "where the jobmanager sees this process: taskmanager.host:taskmanager.rpc.port, the local address of its connection (port 0: a free one)")
	fl.StringVar(&f.host, "taskmanager.host", "", "the host part of --listen (Flink's option); default: the local address towards the jobmanager")
	fl.IntVar(&f.port, "taskmanager.rpc.port", 0, "the port part of --listen (Flink's option; 0: a free port)")
	fl.StringVar(&f.bindHost, "taskmanager.bind-host", "", "the interface to connect from when --taskmanager.host is not given (Flink's option)")
	fl.StringVar(&f.resourceID, "taskmanager.resource-id", "", "this process's name, unique in the run (Flink's option; default: its address)")
	fl.DurationVar(&f.regTimeout, "taskmanager.registration.timeout", 30*time.Second, "wall time to wait for the jobmanager's answer (Flink's option)")
	f.tls.register(fl)
	fl.StringVar(&f.tokenFile, "join-token-file", "", "a file holding the jobmanager's join token (its --join-token-file)")
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
	tlsConf, err := f.tls.load(remote.RoleTaskManager)
	if err != nil {
		return err
	}
	token, err := joinToken(f.tokenFile)
	if err != nil {
		return err
	}
	oneP()
	defer profile(f.cpuProfile)()
	stop := catchSignals()
	defer stop.release()
	return remoteFailure(remote.RunTaskManager(remote.TaskManagerConfig{Join: join, Host: host, Port: port, BindHost: f.bindHost,
		ResourceID: f.resourceID, TLS: tlsConf, JoinToken: token, RegistrationTimeout: f.regTimeout, Interrupt: stop.c, Stderr: cmd.ErrOrStderr()}))
}
