package config

import (
	"slices"
	"strings"
)

// flinkKeys lists the configuration keys Flink 1.20 documents (its
// "Configuration" page, docs/content/docs/deployment/config.md, whose tables
// are generated from the ConfigOptions classes named below: flink-core's
// org.apache.flink.configuration.* and flink-runtime's, flink-state-backends'
// RocksDBOptions / RocksDBConfigurableOptions, flink-streaming-java's
// ExecutionCheckpointingOptions, flink-clients' ClientOptions), apart from
// the ones the simulator models, which are rows of the registry. A key here
// is accepted in a config file or --set and reported once as "not
// simulated"; a key neither here nor in the registry is an error with the
// nearest key suggested. Keys deprecated before 1.20 but still read by it
// (FallbackKeys and DeprecatedKeys of those options) are listed too, since a
// config.yaml of an older Flink carries them. Grouped by options class;
// FlinkKeys returns them sorted.
var flinkKeys = []string{
	// AkkaOptions / RpcOptions (pekko.*, akka.* is read as a deprecated key)
	"akka.ask.timeout", "akka.client-socket-worker-pool.pool-size-factor", "akka.framesize", "akka.lookup.timeout",
	"akka.tcp.timeout", "akka.throughput",
	// AlgorithmOptions, BatchExecutionOptions, BlobServerOptions
	"blob.client.connect.timeout", "blob.client.socket.timeout", "blob.fetch.backlog", "blob.fetch.num-concurrent",
	"blob.fetch.retries", "blob.offload.minsize", "blob.server.port", "blob.service.cleanup.interval",
	"blob.service.ssl.enabled", "blob.storage.directory",
	// CleanupOptions, ClusterOptions, ClientOptions, CoreOptions
	"classloader.check-leaked-classloader", "classloader.fail-on-metaspace-oom-error", "classloader.parent-first-patterns.additional",
	"classloader.parent-first-patterns.default", "classloader.resolve-order",
	"client.heartbeat.interval", "client.heartbeat.timeout", "client.retry-period", "client.timeout",
	"cluster.evenly-spread-out-slots", "cluster.fine-grained-resource-management.enabled", "cluster.intercept-user-system-exit",
	"cluster.io-pool.size", "cluster.processes.halt-on-fatal-error", "cluster.registration.error-delay",
	"cluster.registration.initial-timeout", "cluster.registration.max-timeout", "cluster.registration.refused-registration-delay",
	"cluster.services.shutdown-timeout", "cluster.thread-dump.stacktrace-max-depth", "cluster.uncaught-exception-handling",
	"compiler.delimited-informat.max-line-samples", "compiler.delimited-informat.max-sample-len", "compiler.delimited-informat.min-line-samples",
	"env.hadoop.conf.dir", "env.hbase.conf.dir", "env.java.default-opts.all", "env.java.default-opts.jobmanager", "env.java.default-opts.taskmanager",
	"env.java.home", "env.java.opts.all", "env.java.opts.client", "env.java.opts.historyserver", "env.java.opts.jobmanager",
	"env.java.opts.sql-gateway", "env.java.opts.taskmanager", "env.log.dir", "env.log.level", "env.log.max", "env.pid.dir",
	"env.ssh.opts", "env.stdout-err.redirect-to-file", "env.yarn.conf.dir",
	// CheckpointingOptions, ExecutionCheckpointingOptions, StateBackendOptions, StateChangelogOptions, StateRecoveryOptions
	"execution.checkpointing.cleaner.parallel-mode",
	"execution.checkpointing.create-subdir", "execution.checkpointing.data-inline-threshold", "execution.checkpointing.dir",
	"execution.checkpointing.externalized-checkpoint-retention", "execution.checkpointing.file-merging.across-checkpoint-boundary",
	"execution.checkpointing.file-merging.enabled", "execution.checkpointing.file-merging.max-file-size",
	"execution.checkpointing.file-merging.max-space-amplification", "execution.checkpointing.file-merging.pool-blocking",
	"execution.checkpointing.incremental", "execution.checkpointing.local-backup.dirs", "execution.checkpointing.local-backup.enabled",
	"execution.checkpointing.mode", "execution.checkpointing.num-retained",
	"execution.checkpointing.recover-without-channel-state.checkpoint-id", "execution.checkpointing.savepoint-dir",
	"execution.checkpointing.snapshot-compression", "execution.checkpointing.storage", "execution.checkpointing.unaligned",
	"execution.checkpointing.unaligned.forced", "execution.checkpointing.unaligned.interruptible-timers.enabled",
	"execution.checkpointing.unaligned.max-subtasks-per-channel-state-file", "execution.checkpointing.write-buffer-size",
	"execution.checkpointing.interval-during-backlog", "execution.checkpointing.alignment-timeout",

	// DeploymentOptions, ExecutionOptions
	"execution.allow-client-job-configurations", "execution.attached", "execution.batch-shuffle-mode",
	"execution.batch.adaptive.auto-parallelism.enabled", "execution.batch.job-recovery.enabled", "execution.batch.speculative.enabled",
	"execution.buffer-timeout.enabled", "execution.job-listeners", "execution.runtime-mode",
	"execution.savepoint-restore-mode", "execution.savepoint.ignore-unclaimed-state", "execution.savepoint.path",
	"execution.shutdown-on-application-finish", "execution.shutdown-on-attached-exit", "execution.sort-keyed-partition.memory",
	"execution.sort-partition.memory", "execution.sorted-inputs.enabled", "execution.sorted-inputs.memory",
	"execution.state-recovery.claim-mode", "execution.state-recovery.from-local", "execution.state-recovery.ignore-unclaimed-state",
	"execution.state-recovery.path", "execution.submit-failed-job-on-application-error", "execution.target",
	"execution.batch-state-backend.enabled",
	// ExternalResourceOptions, FailureEnricherOptions, FileSystem (CoreOptions)
	"external-resources", "jobmanager.failure-enrichers",
	"fs.allowed-fallback-filesystems", "fs.default-scheme", "fs.output.always-create-directory", "fs.overwrite-files",
	// HeartbeatManagerOptions
	"heartbeat.rpc-failure-threshold",
	// HighAvailabilityOptions
	"high-availability", "high-availability.cluster-id", "high-availability.job.delay", "high-availability.jobmanager.port",
	"high-availability.kubernetes.leader-election.lease-duration", "high-availability.kubernetes.leader-election.renew-deadline",
	"high-availability.kubernetes.leader-election.retry-period", "high-availability.storageDir", "high-availability.type",
	"high-availability.zookeeper.client.acl", "high-availability.zookeeper.client.connection-timeout",
	"high-availability.zookeeper.client.ensemble-tracker", "high-availability.zookeeper.client.max-retry-attempts",
	"high-availability.zookeeper.client.retry-wait", "high-availability.zookeeper.client.session-timeout",
	"high-availability.zookeeper.client.tolerate-suspended-connections", "high-availability.zookeeper.path.jobgraphs",
	"high-availability.zookeeper.path.root", "high-availability.zookeeper.path.running-registry",
	"high-availability.zookeeper.quorum",
	// HistoryServerOptions
	"historyserver.archive.clean-expired-jobs", "historyserver.archive.fs.dir", "historyserver.archive.fs.refresh-interval",
	"historyserver.archive.retained-jobs", "historyserver.log.jobmanager.url-pattern", "historyserver.log.taskmanager.url-pattern",
	"historyserver.web.address", "historyserver.web.port", "historyserver.web.refresh-interval", "historyserver.web.ssl.enabled",
	"historyserver.web.tmpdir",
	// CoreOptions (io.*), JMXServerOptions
	"io.tmp.dirs", "jmx.server.port",
	// JobManagerOptions, JobEventStoreOptions, JobResultStoreOptions, BatchExecutionOptions (jobmanager.adaptive-batch-scheduler.*)
	"jobmanager.adaptive-batch-scheduler.avg-data-volume-per-task", "jobmanager.adaptive-batch-scheduler.default-source-parallelism",
	"jobmanager.adaptive-batch-scheduler.max-parallelism", "jobmanager.adaptive-batch-scheduler.min-parallelism",
	"jobmanager.adaptive-scheduler.max-delay-for-scale-trigger", "jobmanager.adaptive-scheduler.min-parallelism-increase",
	"jobmanager.adaptive-scheduler.resource-stabilization-timeout", "jobmanager.adaptive-scheduler.resource-wait-timeout",
	"jobmanager.adaptive-scheduler.scaling-interval.max", "jobmanager.adaptive-scheduler.scaling-interval.min",
	"jobmanager.archive.fs.dir", "jobmanager.bind-host", "jobmanager.execution.attempts-history-size",
	"jobmanager.execution.failover-strategy", "jobmanager.future-pool.size", "jobmanager.io-pool.size",
	"jobmanager.memory.enable-jvm-direct-memory-limit", "jobmanager.memory.flink.size", "jobmanager.memory.heap.size",
	"jobmanager.memory.jvm-metaspace.size", "jobmanager.memory.jvm-overhead.fraction", "jobmanager.memory.jvm-overhead.max",
	"jobmanager.memory.jvm-overhead.min", "jobmanager.memory.off-heap.size", "jobmanager.memory.process.size",
	"jobmanager.partition.hybrid.partition-data-consume-constraint", "jobmanager.partition.release-during-job-execution",
	"jobmanager.resource-id", "jobmanager.retrieve-taskmanager-hostname", "jobmanager.rpc.address", "jobmanager.rpc.bind-port",
	"jobmanager.rpc.port", "jobmanager.scheduler", "jobmanager.scheduler.mode",
	"jobmanager.heap.size", "jobmanager.archive.fs.dir",
	"job-event.store.write-buffer.flush-interval", "job-event.store.write-buffer.size",
	"job-result-store.delete-on-commit", "job-result-store.storage-path",
	// KubernetesConfigOptions (kubernetes.*)
	"kubernetes.cluster-id", "kubernetes.config.file", "kubernetes.container.image", "kubernetes.container.image.pull-policy",
	"kubernetes.context", "kubernetes.flink.conf.dir", "kubernetes.flink.log.dir", "kubernetes.jobmanager.cpu",
	"kubernetes.jobmanager.replicas", "kubernetes.jobmanager.service-account", "kubernetes.namespace",
	"kubernetes.rest-service.exposed.type", "kubernetes.service-account", "kubernetes.taskmanager.cpu",
	"kubernetes.taskmanager.service-account",
	// MetricOptions (metrics.*), TraceOptions, EventOptions
	"metrics.fetcher.update-interval", "metrics.internal.query-service.port", "metrics.internal.query-service.thread-priority",
	"metrics.job.status.enable", "metrics.latency.granularity", "metrics.latency.history-size", "metrics.latency.interval",
	"metrics.reporters", "metrics.scope.delimiter", "metrics.scope.jm", "metrics.scope.jm-job", "metrics.scope.jm-operator",
	"metrics.scope.operator", "metrics.scope.task", "metrics.scope.tm", "metrics.scope.tm-job", "metrics.system-resource",
	"metrics.system-resource-probing-interval", "metrics.job.status.enable", "traces.reporters", "events.reporters",
	// NettyShuffleEnvironmentOptions (taskmanager.network.*)
	"taskmanager.data.bind-port", "taskmanager.data.port", "taskmanager.data.ssl.enabled",
	"taskmanager.network.batch-shuffle.compression.enabled", "taskmanager.network.blocking-shuffle.type",
	"taskmanager.network.compression.codec", "taskmanager.network.detailed-metrics", "taskmanager.network.hybrid-shuffle.enable-new-mode",
	"taskmanager.network.memory.read-buffer.required-per-gate.max",
	"taskmanager.network.netty.client.connectTimeoutSec", "taskmanager.network.netty.client.numThreads",
	"taskmanager.network.netty.client.tcp.keepCount", "taskmanager.network.netty.client.tcp.keepIdleSec",
	"taskmanager.network.netty.client.tcp.keepIntervalSec", "taskmanager.network.netty.num-arenas",
	"taskmanager.network.netty.sendReceiveBufferSize", "taskmanager.network.netty.server.backlog",
	"taskmanager.network.netty.server.numThreads", "taskmanager.network.netty.transport",
	"taskmanager.network.partition-request-timeout", "taskmanager.network.request-backoff.initial",
	"taskmanager.network.request-backoff.max", "taskmanager.network.retries", "taskmanager.network.sort-shuffle.min-buffers",
	"taskmanager.network.sort-shuffle.min-parallelism", "taskmanager.network.tcp-connection.enable-reuse-across-jobs",
	"taskmanager.network.numberOfBuffers",
	// OptimizerOptions, PipelineOptions, ParallelismOptions (CoreOptions)
	"pipeline.auto-generate-uids", "pipeline.auto-type-registration", "pipeline.cached-files", "pipeline.classpaths",
	"pipeline.closure-cleaner-level", "pipeline.force-avro", "pipeline.force-kryo", "pipeline.force-kryo-avro",
	"pipeline.generic-types", "pipeline.global-job-parameters", "pipeline.jar", "pipeline.jars", "pipeline.jobvertex-parallelism-overrides",
	"pipeline.name", "pipeline.object-reuse", "pipeline.operator-chaining.chain-operators-with-different-max-parallelism",
	"pipeline.serialization-config", "pipeline.vertex-description-mode", "pipeline.vertex-name-include-index-prefix",
	"pipeline.watermark-alignment.allow-unaligned-source-splits",
	// QueryableStateOptions
	"queryable-state.client.network-threads", "queryable-state.enable", "queryable-state.proxy.network-threads",
	"queryable-state.proxy.ports", "queryable-state.proxy.query-threads", "queryable-state.server.network-threads",
	"queryable-state.server.ports", "queryable-state.server.query-threads",
	// ResourceManagerOptions
	"resourcemanager.job.timeout", "resourcemanager.previous-worker.recovery.timeout", "resourcemanager.rpc.port",
	"resourcemanager.standalone.start-up-time", "resourcemanager.start-worker.max-failure-rate",
	"resourcemanager.start-worker.retry-interval", "resourcemanager.taskmanager-registration.timeout",
	"resourcemanager.taskmanager-timeout",
	// RestartStrategyOptions
	"restart-strategy", "restart-strategy.exponential-delay.attempts-before-reset-backoff",
	"restart-strategy.exponential-delay.backoff-multiplier", "restart-strategy.exponential-delay.max-backoff",
	"restart-strategy.exponential-delay.reset-backoff-threshold", "restart-strategy.failure-rate.delay",
	"restart-strategy.failure-rate.failure-rate-interval", "restart-strategy.failure-rate.max-failures-per-interval",
	// RestOptions, WebOptions
	"rest.address", "rest.async.store-duration", "rest.await-leader-timeout", "rest.bind-address", "rest.bind-port",
	"rest.cache.checkpoint-statistics.size", "rest.cache.checkpoint-statistics.timeout", "rest.client.max-content-length",
	"rest.connection-timeout", "rest.flamegraph.cleanup-interval", "rest.flamegraph.delay-between-samples",
	"rest.flamegraph.enabled", "rest.flamegraph.num-samples", "rest.flamegraph.refresh-interval",
	"rest.flamegraph.stack-depth", "rest.idleness-timeout", "rest.port", "rest.profiling.dir", "rest.profiling.duration-max",
	"rest.profiling.enabled", "rest.profiling.history-size", "rest.retry.delay", "rest.retry.max-attempts",
	"rest.server.max-content-length", "rest.server.numThreads", "rest.server.thread-priority",
	"web.access-control-allow-origin", "web.cancel.enable", "web.checkpoints.history", "web.exception-history-size",
	"web.history", "web.log.path", "web.refresh-interval", "web.rescale.enable", "web.submit.enable", "web.timeout",
	"web.tmpdir", "web.upload.dir",
	// RocksDBOptions, RocksDBConfigurableOptions, StateBackendOptions, StateChangelogOptions
	"state.backend", "state.backend.changelog.enabled", "state.backend.changelog.max-failures-allowed",
	"state.backend.changelog.periodic-materialize.interval", "state.backend.changelog.storage",
	"state.backend.latency-track.history-size", "state.backend.latency-track.keyed-state-enabled",
	"state.backend.latency-track.sample-interval", "state.backend.latency-track.state-name-as-variable",
	"state.backend.local-recovery", "state.backend.rocksdb.block.blocksize", "state.backend.rocksdb.block.cache-size",
	"state.backend.rocksdb.checkpoint.transfer.thread.num", "state.backend.rocksdb.compaction.level.max-size-level-base",
	"state.backend.rocksdb.compaction.style", "state.backend.rocksdb.files.open", "state.backend.rocksdb.localdir",
	"state.backend.rocksdb.memory.fixed-per-slot", "state.backend.rocksdb.memory.fixed-per-tm",
	"state.backend.rocksdb.memory.high-prio-pool-ratio", "state.backend.rocksdb.memory.managed",
	"state.backend.rocksdb.memory.partitioned-index-filters", "state.backend.rocksdb.memory.write-buffer-ratio",
	"state.backend.rocksdb.metrics.actual-delayed-write-rate", "state.backend.rocksdb.metrics.block-cache-usage",
	"state.backend.rocksdb.metrics.column-family-as-variable", "state.backend.rocksdb.metrics.estimate-num-keys",
	"state.backend.rocksdb.predefined-options", "state.backend.rocksdb.thread.num", "state.backend.rocksdb.timer-service.factory",
	"state.backend.rocksdb.use-bloom-filter", "state.backend.rocksdb.writebuffer.count", "state.backend.rocksdb.writebuffer.size",
	"state.checkpoint-storage", "state.checkpoints.create-subdir", "state.checkpoints.dir", "state.checkpoints.num-retained",
	"state.savepoints.dir", "state.storage.fs.write-buffer-size",
	"state.task-local.dirs",
	// SecurityOptions
	"security.context.factory.classes", "security.delegation.tokens.enabled", "security.kerberos.access.hadoopFileSystems",
	"security.kerberos.login.contexts", "security.kerberos.login.keytab", "security.kerberos.login.principal",
	"security.kerberos.login.use-ticket-cache", "security.kerberos.relogin.period", "security.module.factory.classes",
	"security.ssl.algorithms", "security.ssl.internal.enabled", "security.ssl.internal.key-password",
	"security.ssl.internal.keystore", "security.ssl.internal.keystore-password", "security.ssl.internal.truststore",
	"security.ssl.internal.truststore-password", "security.ssl.protocol", "security.ssl.provider", "security.ssl.rest.enabled",
	"security.ssl.rest.authentication-enabled", "security.ssl.rest.key-password", "security.ssl.rest.keystore",
	"security.ssl.rest.keystore-password", "security.ssl.rest.truststore", "security.ssl.rest.truststore-password",
	"security.ssl.verify-hostname", "zookeeper.sasl.disable", "zookeeper.sasl.login-context-name", "zookeeper.sasl.service-name",
	// SlowTaskDetectorOptions, SchedulerExecutionMode, SlotManager (ResourceManagerOptions)
	"slot.idle.timeout", "slotmanager.max-total-resource.cpu", "slotmanager.max-total-resource.memory",
	"slotmanager.number-of-slots.max", "slotmanager.redundant-taskmanager-num", "slow-task-detector.check-interval",
	"slow-task-detector.execution-time.baseline-lower-bound", "slow-task-detector.execution-time.baseline-multiplier",
	"slow-task-detector.execution-time.baseline-ratio",
	// TaskManagerOptions, TaskManagerOptions memory (the sizes the simulator derives are rows of the registry)
	"taskmanager.bind-host", "taskmanager.debug.memory.log", "taskmanager.debug.memory.log-interval",
	"taskmanager.host", "taskmanager.jvm-exit-on-oom", "taskmanager.load-balance.mode", "taskmanager.log.path",
	"taskmanager.memory.managed.consumer-weights",
	"taskmanager.memory.framework.off-heap.batch-shuffle.size",
	"taskmanager.registration.timeout", "taskmanager.resource-id", "taskmanager.rpc.bind-port", "taskmanager.rpc.port",
	"taskmanager.runtime.large-record-handler", "taskmanager.runtime.max-fan",
	"taskmanager.runtime.sort-spilling-threshold", "taskmanager.slot.timeout", "taskmanager.heap.size",
	"taskmanager.network.sort-shuffle.min-buffers",
	"task.cancellation.interval", "task.cancellation.timeout", "task.cancellation.timers.timeout",
	// pekko.* (RpcOptions in 1.20)
	"pekko.ask.callstack", "pekko.client-socket-worker-pool.pool-size-factor",
	"pekko.client-socket-worker-pool.pool-size-max", "pekko.client-socket-worker-pool.pool-size-min",
	"pekko.fork-join-executor.parallelism-factor", "pekko.fork-join-executor.parallelism-max",
	"pekko.fork-join-executor.parallelism-min", "pekko.framesize", "pekko.jvm-exit-on-fatal-error", "pekko.log.lifecycle.events",
	"pekko.lookup.timeout", "pekko.remote-fork-join-executor.parallelism-factor", "pekko.retry-gate-closed-for",
	"pekko.server-socket-worker-pool.pool-size-factor", "pekko.ssl.enabled", "pekko.startup-timeout", "pekko.tcp.timeout",
	"pekko.throughput",
	// YarnConfigOptions
	"yarn.application.name", "yarn.application.queue", "yarn.application-attempts", "yarn.appmaster.vcores",
	"yarn.containers.vcores", "yarn.file-replication", "yarn.provided.lib.dirs", "yarn.ship-files", "yarn.tags",
}

// flinkKeyPrefixes are Flink 1.20 options whose key is a prefix followed
// by a name the user chooses (map-typed or per-plugin options:
// metrics.reporter.<name>.*, containerized.*.env.<VAR>, ...).
var flinkKeyPrefixes = []string{
	"containerized.master.env.", "containerized.taskmanager.env.", "events.reporter.", "external-resource.",
	"kubernetes.", "metrics.reporter.", "traces.reporter.", "pipeline.global-job-parameters.", "yarn.",
	"security.kerberos.", "high-availability.", "historyserver.", "state.backend.rocksdb.",
	// the Table API's and SQL Gateway's options (TableConfigOptions,
	// ExecutionConfigOptions, OptimizerConfigOptions, SqlGatewayServiceConfigOptions)
	// and PyFlink's (PythonOptions), which a config.yaml may carry
	"table.", "sql-gateway.", "python.",
}

var flinkKeySet = func() map[string]bool {
	m := make(map[string]bool, len(flinkKeys))
	for _, k := range flinkKeys {
		m[k] = true
	}
	return m
}()

// IsFlinkKey reports whether Flink 1.20 documents key (or a key pattern
// that matches it) as a configuration option. It is true for the keys the
// simulator models as well.
func IsFlinkKey(key string) bool {
	if _, ok := index[key]; ok {
		return true
	}
	if flinkKeySet[key] {
		return true
	}
	for _, p := range flinkKeyPrefixes {
		if strings.HasPrefix(key, p) && len(key) > len(p) {
			return true
		}
	}
	return false
}

// FlinkKeys returns the Flink keys the simulator accepts but does not
// model, sorted.
func FlinkKeys() []string {
	out := slices.Clone(flinkKeys)
	slices.Sort(out)
	return slices.Compact(out)
}

// NotSimulatedError is returned by Set for a key Flink 1.20 documents but
// the simulator does not model: the value is not read and c is unchanged.
// Callers list such keys to the user instead of failing.
type NotSimulatedError struct {
	Key string
}

func (e *NotSimulatedError) Error() string {
	return "Flink key " + e.Key + " is not simulated: accepted and ignored"
}
