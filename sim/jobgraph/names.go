package jobgraph

// Fixed actor names. TaskManagers are tm-1, tm-2, ... (TaskManagerName);
// subtasks and input channels are named by SubtaskName and ChannelName.
const (
	JobManagerName            = "jobmanager"
	ResourceManagerName       = "resourcemanager"
	KafkaName                 = "kafka"
	CheckpointCoordinatorName = "checkpoint-coordinator"
	// JobID is the JobID of the first job; a job started from a savepoint
	// is job-2, and so on.
	JobID = "job-1"
)
